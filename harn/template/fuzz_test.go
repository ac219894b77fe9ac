package template_test

import (
	"errors"
	"testing"
	"testing/fstest"

	"github.com/promptloom/promptloom/harn/template"
)

// FuzzRender: any template and any bindings parse and render without
// panicking, within the limits, to a typed error or to a text its spans
// cover exactly; rendering is deterministic.
func FuzzRender(f *testing.F) {
	for _, s := range []string{
		"hi {{name}}!", "{{ for x in xs }}{{ loop.index }}:{{ x | upper }}{{ else }}none{{ end }}",
		"{{ if a and not b or c == 1 }}y{{ elif d }}z{{ else }}w{{ end }}", "{{- x -}}\n{{# c #}}{{ raw }}{{ y }}{{ endraw }}",
		`{{ include "p.prompt" with { name: x } }}`, `{{ include "loop.prompt" }}`,
		`{{ section "tools" tools=xs }}Use {{ x }}{{ endsection }}`, `{{ xs | json: true | indent: 2, true }}`,
		`{{ d["k"] }}{{ xs[-1] }}{{ x[0] }}`, `{{ x | replace: "a", "bb" | title }}`,
	} {
		f.Add(s, `{"x":"abc","xs":[1,2.5,"s",null,{"k":true}],"d":{"k":"v"},"a":1,"name":"n","llm":{"capabilities":{"prefers_xml_tools":true}}}`)
	}
	root := fstest.MapFS{
		"p.prompt":    {Data: []byte("[{{ name }}]")},
		"loop.prompt": {Data: []byte(`{{ include "loop.prompt" }}`)},
	}
	f.Fuzz(func(t *testing.T, tpl, bindings string) {
		o := &template.Options{Root: root, MaxBytes: 1 << 16, MaxDepth: 64}
		tp, err := template.Parse("f.prompt", []byte(tpl), o)
		if err != nil {
			checkKind(t, err)
			return
		}
		r, err := tp.Render([]byte(bindings))
		if err != nil {
			checkKind(t, err)
			return
		}
		if len(r.Text) > 1<<16 {
			t.Fatalf("output of %d bytes past the limit", len(r.Text))
		}
		checkSpans(t, r)
		again, err := tp.Render([]byte(bindings))
		if err != nil || again.Text != r.Text {
			t.Fatalf("second render differs: %v", err)
		}
	})
}

func checkKind(t *testing.T, err error) {
	t.Helper()
	var te *template.Error
	if !errors.As(err, &te) {
		t.Fatalf("error %v is not a *template.Error", err)
	}
	switch te.Kind {
	case "syntax", "render", "include", "bindings", "too_large":
		return
	}
	t.Fatalf("error %v has no kind (%q)", err, te.Kind)
}
