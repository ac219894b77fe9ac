package explain_test

import (
	"fmt"

	"github.com/promptloom/promptloom/explain"
)

// Lint finds what Harn accepts but is likely a mistake, and gated fragments
// that split the provider's prefix cache: here a capability-gated fragment
// stands before an unconditional "after" item, so each state of the gate
// moves the item's bytes.
func ExampleLint() {
	e, err := explain.Explain([]byte(`{
		"system": [{"content": "Answer in English.", "position": "after"}],
		"context_profile": {"prompt_fragments": [{"body": "Use git.", "requires_caps": ["vcs.git"]}]},
		"capabilities": ["vcs.git"],
		"tools": [{"name": "todo", "active": true}]
	}`), nil)
	if err != nil {
		panic(err)
	}
	for _, w := range explain.Lint(e, nil) {
		if w.Path != "" {
			fmt.Println("options:", w.Path)
		} else {
			fmt.Println("cache:", w.ID)
		}
	}
	// Output:
	// options: tools[0].active
	// cache: profile[0]
}
