package explain

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/promptloom/promptloom/harn/options"
	"github.com/promptloom/promptloom/internal/testkit/chromiumtest"
	"github.com/promptloom/promptloom/manifest"

	"github.com/google/go-cmp/cmp"
)

var tplFiles = fstest.MapFS{
	"prompts/env.prompt":  {Data: []byte("You work in {{ cwd }}.\n{{ include \"date.prompt\" }}\n")},
	"prompts/date.prompt": {Data: []byte("Today is {{ date | upper }}.")},
}

// tplOptions are options with a templated system item (with a title), a
// plain one, and a templated, padded primary part.
func tplOptions(date string) string {
	return `{"system": [{"title": "Env", "template_file": "prompts/env.prompt", "bindings": {"cwd": "/srv/app", "date": "` + date + `"}}, "Be brief."],
	  "_system_fragments": [{"id": "greet", "template": "  Hi {{ user.name }}!  ", "bindings": {"user": {"name": "Ada"}}}]}`
}

func explainTpl(t *testing.T, opts string) *Explanation {
	t.Helper()
	e, err := Explain([]byte(opts), &Options{ParseOptions: options.ParseOptions{Files: tplFiles}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// explain --format json gives each templated fragment's template and
// spans, the spans in the prompt's offsets, covering the render's bytes;
// the streamed JSON is encoding/json's, and it reads back.
func TestTemplatedRowsInJSON(t *testing.T) {
	e := explainTpl(t, tplOptions("monday"))
	sys := e.System
	type got struct{ Kind, File, Path, Text string }
	var spans []got
	for _, r := range e.Fragments {
		for _, s := range r.Spans {
			if s.Start < *r.Offset || s.End > *r.Offset+r.Bytes {
				t.Errorf("%s: span %+v outside the row [%d, %d)", r.ID, s, *r.Offset, *r.Offset+r.Bytes)
			}
			spans = append(spans, got{s.Kind, s.File, s.Path, sys[s.Start:s.End]})
		}
	}
	want := []got{
		{"text", "prompts/env.prompt", "", "You work in "},
		{"binding", "prompts/env.prompt", "cwd", "/srv/app"},
		{"text", "prompts/env.prompt", "", ".\n"},
		{"text", "prompts/date.prompt", "", "Today is "},
		{"binding", "prompts/date.prompt", "date", "MONDAY"},
		{"text", "prompts/date.prompt", "", "."},
		{"text", "", "", "Hi "},
		{"binding", "", "user.name", "Ada"},
		{"text", "", "", "!"},
	}
	if diff := cmp.Diff(want, spans); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}
	if e.Fragments[1].Template != nil || e.Fragments[1].Spans != nil {
		t.Errorf("a plain row has no template")
	}
	sameJSON(t, "templated", e)
	var buf bytes.Buffer
	if err := e.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`"template": {`, `"file": "prompts/env.prompt"`, `"includes": {`, `"prompts/date.prompt": "blake3:`, `"spans": [`, `"path": "date"`, `"filters": [`} {
		if !strings.Contains(buf.String(), w) {
			t.Errorf("the JSON lacks %s", w)
		}
	}
	var back Explanation
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(e.Fragments[0].Spans, back.Fragments[0].Spans); diff != "" || back.Fragments[0].Template.Bindings["date"] != e.Fragments[0].Template.Bindings["date"] {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
}

// diff names the binding behind a changed templated fragment, or the
// template.
func TestDiffNamesTheBinding(t *testing.T) {
	a, b := explainTpl(t, tplOptions("monday")), explainTpl(t, tplOptions("tuesday"))
	d := Diff(a, b, "a.json", "b.json")
	f := d.Fragments[0]
	if f.ID != "system[0]" || f.Kind != manifest.Changed || !cmp.Equal(f.Bindings, []string{"date"}) || f.TemplateChanged {
		t.Errorf("delta = %+v", f)
	}
	for _, g := range d.Fragments[1:] {
		if g.Kind != manifest.Same || g.Bindings != nil {
			t.Errorf("delta = %+v", g)
		}
	}
	var text bytes.Buffer
	if err := d.WriteText(&text, "a.json", "b.json"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "changed: binding date") {
		t.Errorf("text lacks the binding:\n%s", text.String())
	}
	var page bytes.Buffer
	if err := d.WriteHTML(&page, "a.json", "b.json"); err != nil || !strings.Contains(page.String(), "<td>changed: binding date</td>") {
		t.Errorf("the diff page lacks the binding (%v)", err)
	}
	var js bytes.Buffer
	if err := d.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`"bindings": \[\s*"date"\s*\]`).MatchString(js.String()) {
		t.Errorf("JSON lacks the binding")
	}
	// The template itself changed: said so, with no binding.
	files := fstest.MapFS{"prompts/env.prompt": {Data: []byte("You are in {{ cwd }}.")}}
	c, err := Explain([]byte(tplOptions("monday")), &Options{ParseOptions: options.ParseOptions{Files: files}})
	if err != nil {
		t.Fatal(err)
	}
	f = Diff(a, c, "a", "c").Fragments[0]
	if !f.TemplateChanged || f.Bindings != nil {
		t.Errorf("delta = %+v", f)
	}
}

// Lint with the previous call's manifest warns about a fragment that
// reads a binding whose value changed; not about one whose bindings held.
func TestLintUnstableBinding(t *testing.T) {
	prev := explainTpl(t, tplOptions("monday"))
	now := explainTpl(t, tplOptions("tuesday"))
	ws := Lint(now, prev.Manifest)
	if len(ws) != 1 || ws[0].ID != "system[0]" || !strings.Contains(ws[0].Message, "binding `date`") || !strings.Contains(ws[0].Message, "unstable") {
		t.Fatalf("warnings = %+v", ws)
	}
	if ws := Lint(now, now.Manifest); len(ws) != 0 {
		t.Errorf("no binding changed, yet %+v", ws)
	}
	if !cmp.Equal(Lint(now, nil), lint(now)) {
		t.Errorf("Lint(e, nil) warns of more than the options and the gates")
	}
}

// The HTML page shows where a templated fragment's bytes came from on
// hover: rendered in Chromium, a hover over a binding's bytes says which.
func TestTemplatedHTMLHoverInChromium(t *testing.T) {
	bin := chromiumtest.Find(t)
	e := explainTpl(t, tplOptions("monday"))
	var buf bytes.Buffer
	if err := e.WriteHTML(&buf, "opts.json"); err != nil {
		t.Fatal(err)
	}
	// The test hovers: it dispatches mouseenter on the span of binding
	// date, after the page's own script has run.
	hover := `<script>document.querySelector('[data-origin^="binding date"]').dispatchEvent(new MouseEvent('mouseenter'));</script></body>`
	page := strings.Replace(buf.String(), "</body>", hover, 1)
	file := filepath.Join(t.TempDir(), "explain.html")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := chromiumtest.Run(t, bin, file, "--dump-dom")
	m := regexp.MustCompile(`<div class="meta" id="origin">([^<]*)</div>`).FindSubmatch(dom)
	if m == nil || string(m[1]) != "system[0]: binding date | upper at prompts/date.prompt 1:10 (included at prompts/env.prompt 2:1)" {
		t.Errorf("hover shows %q", m)
	}
	for _, w := range []string{`data-origin="template text at prompts/env.prompt 1:1"`, `data-origin="template text at inline template 1:3"`, `data-origin="binding user.name at inline template 1:6"`} {
		if !bytes.Contains(dom, []byte(w)) {
			t.Errorf("the DOM lacks %s", w)
		}
	}
	// A page with no templated fragment has no origin box.
	var plain bytes.Buffer
	if err := explainTpl(t, `{"system":"x"}`).WriteHTML(&plain, "p.json"); err != nil || strings.Contains(plain.String(), `id="origin"`) {
		t.Errorf("plain page has an origin box (%v)", err)
	}
}
