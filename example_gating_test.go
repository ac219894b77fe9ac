package promptloom_test

import (
	"fmt"

	"github.com/promptloom/promptloom"
)

// A gated fragment is included only while what it requires is there: the
// reducer's rule 2, and the first missing tool or capability is the reason
// its row gives.
func ExampleReduce_gating() {
	frags := []promptloom.Fragment{
		promptloom.Primary("You are a careful assistant."),
		promptloom.ToolGuidance("todo", "Keep the list current."),
	}
	for _, tools := range [][]string{{"todo"}, nil} {
		r, err := promptloom.Reduce(frags, &promptloom.Options{Tools: tools})
		if err != nil {
			fmt.Println(err)
			return
		}
		row := r.Rows[1]
		fmt.Println(row.Fragment.ID, row.Included, row.Reason)
	}
	// Output:
	// tool:todo.guidance true tool(s) present: todo
	// tool:todo.guidance false requires tool `todo` (not available)
}
