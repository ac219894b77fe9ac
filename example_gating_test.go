package promptloom_test

import (
	"fmt"

	"github.com/promptloom/promptloom"
)

// Gate is the reducer's rule 2 for one fragment: the first missing tool or
// capability is the reason it is left out.
func ExampleFragment_Gate() {
	guidance := promptloom.ToolGuidance("todo", "Keep the list current.")
	fmt.Println(guidance.Gate(&promptloom.Options{Tools: []string{"todo"}}))
	fmt.Println(guidance.Gate(nil))
	// Output:
	// true tool(s) present: todo
	// false requires tool `todo` (not available)
}
