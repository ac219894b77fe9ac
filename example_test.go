package promptloom_test

import (
	"fmt"

	"github.com/promptloom/promptloom"
)

func ExampleReduce() {
	frags := []promptloom.Fragment{
		promptloom.SystemItem(0, "", "Appendix.", promptloom.After),
		promptloom.Primary("  You are careful.  "),
		promptloom.ToolGuidance("todo", "Keep the list current."),
	}
	r, err := promptloom.Reduce(frags, nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%q\n", r.System)
	for _, row := range r.Rows {
		fmt.Println(row.Fragment.ID, row.Included, row.Offset, row.Reason)
	}
	// Output:
	// "You are careful.\n\nAppendix."
	// primary true 0 unconditional
	// tool:todo.guidance false -1 requires tool `todo` (not available)
	// system[0] true 18 unconditional
}
