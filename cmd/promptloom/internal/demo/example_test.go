package demo_test

import (
	"fmt"

	"github.com/promptloom/promptloom/cmd/promptloom/internal/demo"
)

func ExampleRunPromptGuidance() {
	p, err := demo.RunPromptGuidance()
	if err != nil {
		panic(err)
	}
	fmt.Println(p.With.Manifest.SystemPromptBytes, p.Without.Manifest.SystemPromptBytes, *p.Delta.FirstChangedFragment)
	// Output: 566 477 tool:todo.guidance
}
