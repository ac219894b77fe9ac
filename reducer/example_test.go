package reducer_test

import (
	"fmt"

	"github.com/promptloom/promptloom/fragment"
	"github.com/promptloom/promptloom/gating"
	"github.com/promptloom/promptloom/reducer"
)

func ExampleReduce() {
	frags := []fragment.Fragment{
		fragment.SystemItem(0, "", "Appendix.", fragment.After),
		fragment.Primary("  You are careful.  "),
		fragment.ToolGuidance("todo", "Keep the list current."),
	}
	r, err := reducer.Reduce(frags, gating.NewActive(nil, nil))
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
