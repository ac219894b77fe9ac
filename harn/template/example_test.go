package template_test

import (
	"fmt"

	"github.com/promptloom/promptloom/harn/template"
)

func Example() {
	t, err := template.Parse("greeting.prompt", []byte(
		"Hello, {{ user.name | title }}!\n{{ for t in tools }}- {{ t }}{{ if !loop.last }}\n{{ end }}{{ end }}"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := t.Render([]byte(`{"user": {"name": "ada lovelace"}, "tools": ["read", "todo"]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Text)
	for _, s := range r.Spans {
		if s.Kind == "binding" {
			fmt.Printf("%q from %s %v at %s:%d:%d\n", r.Text[s.Start:s.End], s.Path, s.Filters, s.File, s.Line, s.Col)
		}
	}
	fmt.Println("read:", r.Reads)

	_, err = template.Parse("bad.prompt", []byte("{{ if x }}open"), nil)
	fmt.Println(err)
	// Output:
	// Hello, Ada Lovelace!
	// - read
	// - todo
	// "Ada Lovelace" from user.name [title] at greeting.prompt:1:8
	// "read" from tools[0] [] at greeting.prompt:2:23
	// "todo" from tools[1] [] at greeting.prompt:2:23
	// read: [tools user.name]
	// bad.prompt at 1:1: `{{ if }}` missing matching `{{ end }}`
}
