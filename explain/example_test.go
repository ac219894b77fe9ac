package explain_test

import (
	"fmt"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/harn/options"
)

func ExampleExplain() {
	e, err := explain.Explain([]byte(`{
		"system": [{"content": "You are careful."}, {"content": "Bye.", "position": "after"}],
		"tools": [{"name": "todo", "guidance": "Keep the list current."}]
	}`), nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%q\n", e.System)
	for _, r := range e.Fragments {
		fmt.Println(r.ID, r.Included, r.Reason)
	}
	// Output:
	// "You are careful.\n\nKeep the list current.\n\nBye."
	// system[0] true unconditional
	// tool:todo.guidance true tool(s) present: todo
	// system[1] true unconditional
}

func ExampleDiff() {
	o, _ := options.Parse([]byte(`{"system": "You are careful.", "tools": [{"name": "todo", "guidance": "Keep the list current."}]}`), nil)
	with, _ := explain.FromOptions(o, nil)
	o.Tools[0].Active = false // todo: declared, but not available
	without, _ := explain.FromOptions(o, nil)

	d := explain.Diff(with, without, "with", "without")
	fmt.Println(d.CommonPrefixBytes, *d.FirstChangedFragment)
	for _, f := range d.Fragments {
		fmt.Println(f.ID, f.Kind)
	}
	// Output:
	// 16 tool:todo.guidance
	// primary same
	// tool:todo.guidance excluded
}

// A budget is the reducer's option, passed through. Each row embeds the
// manifest's segment for its fragment; Shed says a budget dropped it.
func ExampleOptions() {
	b := &budget.Budget{Counter: budget.Bytes(), Total: 20}
	e, err := explain.Explain([]byte(`{"system": [
		{"content": "You are careful."},
		{"content": "Yesterday the build was red.", "register": "considered"}
	]}`), &explain.Options{Budget: b})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%q\n", e.System)
	for _, r := range e.Fragments {
		fmt.Println(r.ID, r.Included, r.State() == "shed", r.Reason)
	}
	// Output:
	// "You are careful."
	// system[0] true false unconditional
	// system[1] false true shed by budget: considered rank 0
}
