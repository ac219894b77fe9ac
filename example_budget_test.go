package promptloom_test

import (
	"fmt"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/budget"
)

func ExampleOptions_tokens() {
	frags := []promptloom.Fragment{
		{ID: "rule", Body: "Never delete files without asking."},
		{ID: "background", Body: "The repository is a Go module.", Register: budget.Considered},
		{ID: "style", Body: "Prefer short sentences.", Register: budget.Craft},
	}
	counter, _ := budget.NewCounter("o200k_base")
	b := &budget.Budget{Counter: counter, Total: 14}
	r, err := promptloom.Reduce(frags, &promptloom.Options{Budget: b})
	if err != nil {
		panic(err)
	}
	for _, row := range r.Rows {
		fmt.Println(row.Fragment.ID, row.Tokens, row.Reason)
	}
	fmt.Printf("%d of %d %s tokens: %q\n", r.Fit.Tokens, *r.Fit.Total, r.Fit.Encoding, r.System)
	// Output:
	// rule 6 unconditional
	// background 7 shed by budget: considered rank 0
	// style 4 unconditional
	// 10 of 14 o200k_base tokens: "Never delete files without asking.\n\nPrefer short sentences."
}
