package promptloom_test

import (
	"fmt"

	"github.com/promptloom/promptloom"
)

func ExampleDecide() {
	guidance := promptloom.ToolGuidance("todo", "Keep the list current.")
	fmt.Println(promptloom.Decide(&guidance, promptloom.NewActive([]string{"todo"}, nil)))
	fmt.Println(promptloom.Decide(&guidance, promptloom.NewActive(nil, nil)))
	// Output:
	// {true tool(s) present: todo}
	// {false requires tool `todo` (not available)}
}
