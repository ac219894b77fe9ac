package options_test

import (
	"fmt"
	"testing/fstest"

	"github.com/promptloom/promptloom/harn/options"
)

// A system item rendered from a template file beside the options: the
// fragment says which template and bindings made it, and where each byte
// came from.
func ExampleParse_template() {
	files := fstest.MapFS{"env.prompt": {Data: []byte("You work in {{ cwd }}.")}}
	o, err := options.Parse([]byte(`{"system": [{"template_file": "env.prompt", "bindings": {"cwd": "/srv/app", "date": "monday"}}]}`),
		&options.ParseOptions{Files: files})
	if err != nil {
		fmt.Println(err)
		return
	}
	f := o.System[0]
	fmt.Printf("%s: %q from %s\n", f.ID, f.Body, f.Template.File)
	for path := range f.Template.Bindings {
		fmt.Println("read", path)
	}
	for _, s := range f.Template.Spans {
		fmt.Printf("%q: %s %s at %d:%d\n", f.Body[s.Start:s.End], s.Kind, s.Path, s.Line, s.Col)
	}
	// Output:
	// system[0]: "You work in /srv/app." from env.prompt
	// read cwd
	// "You work in ": text  at 1:1
	// "/srv/app": binding cwd at 1:13
	// ".": text  at 1:22
}
