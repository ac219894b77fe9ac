package promptloom_test

import (
	"errors"
	"fmt"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/budget"
)

// A budget holds the whole prompt to a total, shedding the fragments a
// harness marked as sheddable (never a binding one). The shed row stays,
// excluded, with its reason.
func ExampleOptions_budget() {
	rules := promptloom.Primary("You are careful.")
	notes := promptloom.Fragment{ID: "notes", Source: "memory", Body: "Yesterday the build was red.", Register: budget.Considered}
	b := &budget.Budget{Counter: budget.Bytes(), Total: 20}
	r, err := promptloom.Reduce([]promptloom.Fragment{rules, notes}, &promptloom.Options{Budget: b})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%q\n", r.System)
	for _, row := range r.Rows {
		fmt.Println(row.Fragment.ID, row.Included, row.Shed, row.Reason)
	}
	// Output:
	// "You are careful."
	// primary true false unconditional
	// notes false true shed by budget: considered rank 0
}

// Every fragment must name itself: an empty id is refused, naming the
// fragment's place and source.
func ExampleCheck() {
	err := promptloom.Check([]promptloom.Fragment{{ID: "a", Body: "x"}, {Source: "my-stage", Body: "y"}})
	fmt.Println(errors.Is(err, promptloom.ErrEmptyID))
	fmt.Println(err)
	// Output:
	// true
	// fragment 1 (source "my-stage"): fragment id is empty
}
