package explain_test

import (
	"fmt"

	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/options"
)

func ExampleExplain() {
	e, err := explain.Explain([]byte(`{
		"system": [{"content": "You are careful."}, {"content": "Bye.", "position": "after"}],
		"tools": [{"name": "todo", "guidance": "Keep the list current."}]
	}`))
	if err != nil {
		panic(err)
	}
	fmt.Printf("%q\n", e.Text())
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
	o, _ := options.Parse([]byte(`{"system": "You are careful.", "tools": [{"name": "todo", "guidance": "Keep the list current."}]}`))
	with, _ := explain.FromOptions(o)
	_ = o.WithoutTool("todo")
	without, _ := explain.FromOptions(o)

	d := explain.Diff(with, without, "with", "without")
	fmt.Println(d.CommonPrefixBytes, *d.FirstChangedFragment, d.Summary())
	// Output:
	// 16 tool:todo.guidance 1 same, 1 excluded
}
