package explain_test

import (
	"fmt"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/harn/options"
)

// A harness that builds its own fragments explains them by putting them in
// an options.Options and calling FromOptions: its rows keep each
// fragment's Source, and Why searches the bodies of those left out, which
// an explanation of the manifest alone (FromManifest) cannot. A tool is
// given to the call by setting Active; the zero options.Tool only declares
// it.
func ExampleFromOptions() {
	o := &options.Options{
		System: []promptloom.Fragment{
			{ID: "persona", Source: "harness", Body: "You are careful."},
			{ID: "todo-rules", Source: "plugins/todo", RequiresTools: []string{"todo"}, Body: "Keep the list current."},
		},
		Tools: []options.Tool{{Name: "todo"}}, // declared, not Active
	}
	e, err := explain.FromOptions(o, nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%q\n", e.System)
	for _, r := range e.Fragments {
		fmt.Println(r.ID, r.Source, r.State(), r.Reason)
	}
	for p := range e.Why("the list") {
		fmt.Println(p.Offset, p.Row.ID, p.RequiresTools)
	}
	// Output:
	// "You are careful."
	// persona harness included unconditional
	// todo-rules plugins/todo excluded requires tool `todo` (not available)
	// -1 todo-rules [todo]
}
