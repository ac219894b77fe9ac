package explain_test

import (
	"fmt"

	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/harn/options"
)

func ExampleExplanation_Why() {
	o, _ := options.Parse([]byte(`{"system": "You are careful.", "tools": [{"name": "todo", "guidance": "Keep the list current."}]}`), nil)
	with, _ := explain.FromOptions(o, nil)
	for p := range with.Why("the list") {
		fmt.Println(p.Offset, p.Row.ID, p.Row.Reason, p.RequiresTools)
	}
	o.Tools[0].Active = false // todo: declared, but not available
	without, _ := explain.FromOptions(o, nil)
	for p := range without.Why("the list") {
		fmt.Println(p.Offset, p.Row.ID, p.Row.State(), p.Row.Reason)
	}
	// Output:
	// 23 tool:todo.guidance tool(s) present: todo [todo]
	// -1 tool:todo.guidance excluded requires tool `todo` (not available)
}
