package manifest_test

import (
	"fmt"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/manifest"
)

// New turns a reduction into its manifest; ContentHash names it (the hash
// of its canonical JSON), and Read takes it back from those bytes.
func ExampleNew() {
	r, _ := promptloom.Reduce([]promptloom.Fragment{
		promptloom.Primary("You are careful."),
		promptloom.ToolGuidance("todo", "Keep the list current."),
	}, nil)
	m := manifest.New(r, "") // a blank call role is "unattributed"
	fmt.Println(m.CallRole, m.Root, m.SystemPromptBytes, m.IncludedCount(), len(m.Segments))
	for _, s := range m.Segments {
		fmt.Println(s.ID, s.Included, s.Reason)
	}

	hash, _ := m.ContentHash()
	b, _ := m.Canonical()
	back, _ := manifest.Read(b)
	again, _ := back.ContentHash()
	fmt.Println(hash == again, hash == digest.Bytes(b))
	// Output:
	// unattributed composed 16 1 2
	// primary true unconditional
	// tool:todo.guidance false requires tool `todo` (not available)
	// true true
}
