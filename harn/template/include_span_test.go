package template_test

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/promptloom/promptloom/harn/template"
)

// Bytes from an included file, at any depth, say where in the template
// itself the include that brought them in is; the template's own bytes
// do not.
func TestSpansNameTheTopInclude(t *testing.T) {
	root := fstest.MapFS{
		"a.prompt":     {Data: []byte("A\n  {{ include \"sub/b.prompt\" }}!")},
		"sub/b.prompt": {Data: []byte("B{{ include \"c.prompt\" }}")},
		"sub/c.prompt": {Data: []byte("C{{ x }}")},
	}
	tp, err := template.Parse("a.prompt", root["a.prompt"].Data, &template.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	r, err := tp.Render([]byte(`{"x": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		text, file string
		line, col  int
	}
	var spans []got
	for _, s := range r.Spans {
		spans = append(spans, got{r.Text[s.Start:s.End], s.File, s.IncludeLine, s.IncludeCol})
	}
	want := []got{{"A\n  ", "a.prompt", 0, 0}, {"B", "sub/b.prompt", 2, 3}, {"C", "sub/c.prompt", 2, 3}, {"1", "sub/c.prompt", 2, 3}, {"!", "a.prompt", 0, 0}}
	if len(spans) != len(want) {
		t.Fatalf("spans = %+v", spans)
	}
	for i := range want {
		if spans[i] != want[i] {
			t.Errorf("span %d = %+v, want %+v", i, spans[i], want[i])
		}
	}
}

// A name an include's with made of a filtered binding keeps the filters in
// its spans, before the ones applied where it is used: "ANN" came from
// binding name through upper, "ann" through upper and then lower.
func TestSpansKeepFiltersAcrossWith(t *testing.T) {
	root := fstest.MapFS{
		"top.prompt": {Data: []byte(`{{ include "p.prompt" with { who: name | upper } }}`)},
		"p.prompt":   {Data: []byte(`{{ who }}|{{ who | lower }}`)},
	}
	tp, err := template.Parse("top.prompt", root["top.prompt"].Data, &template.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	r, err := tp.Render([]byte(`{"name": "ann"}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range r.Spans {
		if s.Kind == "binding" {
			got = append(got, r.Text[s.Start:s.End]+" "+s.Path+" "+strings.Join(s.Filters, ","))
		}
	}
	if want := []string{"ANN name upper", "ann name upper,lower"}; !slices.Equal(got, want) {
		t.Errorf("binding spans = %q, want %q", got, want)
	}
}
