package options_test

import (
	"fmt"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/harn/options"
)

// What Harn accepts is accepted, as Harn would build it; what is likely a
// mistake is recorded as a warning, not refused.
func ExampleOptions_Warnings() {
	o, err := options.Parse([]byte(`{"_system_fragments": [{"body": 7, "bucket": "after"}], "call_role": " agent.main "}`), nil)
	if err != nil {
		panic(err)
	}
	for _, f := range o.Fragments() {
		fmt.Printf("%s %s %q\n", f.ID, f.Bucket, f.Body)
	}
	fmt.Printf("%q\n", o.CallRole)
	for _, w := range o.Warnings {
		fmt.Println(w)
	}
	// Output:
	// primary[0] after "7"
	// "agent.main"
	// _system_fragments[0].body: a number (7) is used as the text "7"
}

// A tool made inactive stays declared, so its guidance is still built and
// then excluded by its gate: the change `promptloom diff --without-tool`
// makes.
func ExampleTool() {
	o, _ := options.Parse([]byte(`{"tools": [{"name": "todo", "guidance": "Keep it."}]}`), nil)
	fmt.Println(o.ActiveTools())
	o.Tools[0].Active = false
	fmt.Println(o.ActiveTools(), len(o.Guidance))
	// Output:
	// [todo]
	// [] 1
}

// A caller that reads options into a buffer of its own, and never changes
// it afterwards, can have them parsed where they lie: the Options' strings
// then share the buffer's bytes, and a large file is held once, not twice.
func ExampleParseOptions() {
	buf := []byte(`{"system": "You are terse."}`) // read from a file, say, and never reused
	o, err := options.Parse(buf, &options.ParseOptions{InPlace: true, MaxBytes: 1 << 20})
	if err != nil {
		panic(err)
	}
	fmt.Println(o.Primary[0].Body)
	// Output:
	// You are terse.
}

// Where each contributor's fragments go: the system list's before items,
// then the primary block (none here: a list is given), then the profile's
// fragments, then tool guidance, all in the before bucket; then the after
// items. A profile fragment and a tool's guidance have no position key.
func ExampleOptions_Fragments_order() {
	o, err := options.Parse([]byte(`{
		"system": [{"content": "Role.", "position": "after"}, "Opening."],
		"tools": [{"name": "todo", "guidance": "Track it."}],
		"context_profile": {"prompt_fragments": [{"body": "Use git."}]}}`), nil)
	if err != nil {
		panic(err)
	}
	r, err := promptloom.Reduce(o.Fragments(), &promptloom.Options{Tools: o.ActiveTools(), Capabilities: o.Capabilities})
	if err != nil {
		panic(err)
	}
	for _, row := range r.Rows {
		fmt.Println(row.Fragment.ID, row.Fragment.Bucket)
	}
	// Output:
	// system[1] before
	// profile[0] before
	// tool:todo.guidance before
	// system[0] after
}
