package template_test

import (
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/promptloom/promptloom/harn/template"
)

// TestConformance runs Harn's conformance programs for templates
// (conformance/tests/templates/ of github.com/burin-labs/harn), ported
// under their names to testdata/conformance/NAME.txtar. Each archive's
// comment cites the Harn files its expectations come from. Its run file
// has one render a line:
//
//	file TEMPLATE BINDINGS WANT   render the archive's file TEMPLATE, as Harn's render() does
//	string TEMPLATE BINDINGS WANT render it as an inline template (render_string)
//
// BINDINGS is a file of JSON or "none"; WANT is the file holding the exact
// output, or "error: TEXT" for an error whose message contains TEXT. Every
// file's final newline is not part of it (txtar ends each file with one).
func TestConformance(t *testing.T) {
	files, err := filepath.Glob("testdata/conformance/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no conformance archives: %v", err)
	}
	for _, f := range files {
		a, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".txtar")
		root := fstest.MapFS{}
		for _, af := range a.Files {
			root[af.Name] = &fstest.MapFile{Data: []byte(strings.TrimSuffix(string(af.Data), "\n"))}
		}
		run, ok := root["run"]
		if !ok {
			t.Fatalf("%s: no run file", f)
		}
		for i, line := range strings.Split(string(run.Data), "\n") {
			t.Run(name+"/"+strings.Fields(line)[0]+"-"+string(rune('1'+i)), func(t *testing.T) {
				conformanceRun(t, root, line)
			})
		}
	}
}

func conformanceRun(t *testing.T, root fstest.MapFS, line string) {
	f := strings.SplitN(line, " ", 4)
	if len(f) != 4 {
		t.Fatalf("bad run line %q", line)
	}
	kind, tplName, bindingsName, want := f[0], f[1], f[2], f[3]
	src, ok := root[tplName]
	if !ok {
		t.Fatalf("no file %s", tplName)
	}
	var tp *template.Template
	var err error
	switch kind {
	case "file":
		sub, _ := fs.Sub(root, path.Dir(tplName))
		tp, err = template.Parse(tplName, src.Data, &template.Options{Root: sub})
	case "string":
		tp, err = template.Parse("", src.Data, &template.Options{Root: root})
	default:
		t.Fatalf("bad run kind %q", kind)
	}
	var r *template.Result
	if err == nil {
		var b []byte
		if bindingsName != "none" {
			b = root[bindingsName].Data
		}
		r, err = tp.Render(b)
	}
	if text, isErr := strings.CutPrefix(want, "error: "); isErr {
		if err == nil {
			t.Fatalf("rendered %q, want an error containing %q", r.Text, text)
		}
		if !strings.Contains(err.Error(), text) {
			t.Fatalf("error %q does not contain %q", err, text)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if w := string(root[want].Data); r.Text != w {
		t.Errorf("got:\n%q\nwant:\n%q", r.Text, w)
	}
	checkSpans(t, r)
}

// checkSpans holds the Result's promise: the spans cover the text from
// start to end, in order, without overlap.
func checkSpans(t *testing.T, r *template.Result) {
	t.Helper()
	at := 0
	for _, s := range r.Spans {
		if s.Start != at || s.End <= s.Start {
			t.Fatalf("span %+v does not start at %d or is empty", s, at)
		}
		at = s.End
	}
	if at != len(r.Text) {
		t.Fatalf("spans end at %d of %d bytes", at, len(r.Text))
	}
}
