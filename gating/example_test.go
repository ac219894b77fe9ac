package gating_test

import (
	"fmt"

	"github.com/promptloom/promptloom/fragment"
	"github.com/promptloom/promptloom/gating"
)

func ExampleDecide() {
	guidance := fragment.ToolGuidance("todo", "Keep the list current.")
	fmt.Println(gating.Decide(&guidance, gating.NewActive([]string{"todo"}, nil)))
	fmt.Println(gating.Decide(&guidance, gating.NewActive(nil, nil)))
	// Output:
	// {true tool(s) present: todo}
	// {false requires tool `todo` (not available)}
}
