package options

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/harn/redact"
	"github.com/promptloom/promptloom/harn/template"

	"github.com/google/go-cmp/cmp"
)

// valueDigest is what a row records of a binding's value.
func valueDigest(t *testing.T, raw string) digest.Digest {
	t.Helper()
	b, err := redact.JSON([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return digest.Bytes(b)
}

var templateFiles = fstest.MapFS{
	"prompts/sys.prompt":  {Data: []byte("You work in {{ cwd }}.\n{{ include \"part.prompt\" }}\n")},
	"prompts/part.prompt": {Data: []byte("Today is {{ date | upper }}.")},
	"vars.json":           {Data: []byte(`{"cwd": "/srv/app", "date": "monday"}`)},
	"escape.prompt":       {Data: []byte(`{{ include "../etc/passwd" }}`)},
}

// Each list's items may be templates: the body is the render, the
// fragment carries the template's digest, includes, bindings read (each
// with the digest of its value) and spans that point at the body's bytes.
func TestTemplatedFragments(t *testing.T) {
	in := `{"system": [
	    {"title": " Env ", "template_file": "prompts/sys.prompt", "bindings": {"cwd": "/srv/app", "date": "monday", "unused": 1}},
	    {"content": "plain"}],
	  "_system_fragments": [{"id": "p", "template": "  Hi {{ user.name }}, {{ xs[-1] }}{{ nothing }}", "bindings": {"user": {"name": "Ada"}, "xs": [1, 2]}}]}`
	o, err := Parse([]byte(in), &ParseOptions{Files: templateFiles})
	if err != nil {
		t.Fatal(err)
	}
	sys := o.System[0]
	if want := "## Env\nYou work in /srv/app.\nToday is MONDAY."; sys.Body != want {
		t.Errorf("body = %q, want %q", sys.Body, want)
	}
	tm := sys.Template
	if tm == nil || tm.File != "prompts/sys.prompt" || tm.Digest != digest.Of(string(templateFiles["prompts/sys.prompt"].Data)) {
		t.Fatalf("template = %+v", tm)
	}
	if diff := cmp.Diff(map[string]digest.Digest{"prompts/part.prompt": digest.Of("Today is {{ date | upper }}.")}, tm.Includes); diff != "" {
		t.Errorf("includes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]digest.Digest{"cwd": valueDigest(t, `"/srv/app"`), "date": valueDigest(t, `"monday"`)}, tm.Bindings); diff != "" {
		t.Errorf("bindings (-want +got):\n%s", diff)
	}
	// The spans point into the body, past the heading, and name the file
	// and binding behind each byte.
	var got []string
	for _, s := range tm.Spans {
		got = append(got, s.Kind+" "+s.File+" "+s.Path+" "+strings.Join(s.Filters, "|")+" "+sys.Body[s.Start:s.End])
	}
	want := []string{
		"text prompts/sys.prompt   You work in ",
		"binding prompts/sys.prompt cwd  /srv/app",
		"text prompts/sys.prompt   .\n",
		"text prompts/part.prompt   Today is ",
		"binding prompts/part.prompt date upper MONDAY",
		"text prompts/part.prompt   .",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}
	if o.System[1].Template != nil {
		t.Errorf("a body given as text has no template")
	}
	p := o.Primary[0]
	if p.Body != "  Hi Ada, 2{{nothing}}" || p.Template.File != "" {
		t.Errorf("primary = %q %+v", p.Body, p.Template)
	}
	if diff := cmp.Diff(map[string]digest.Digest{"nothing": digest.Bytes(nil), "user.name": valueDigest(t, `"Ada"`), "xs[1]": valueDigest(t, `2`)}, p.Template.Bindings); diff != "" {
		t.Errorf("bindings (-want +got):\n%s", diff)
	}
}

// A profile fragment's template is trimmed like its body, its spans with
// it; bindings may be a JSON file beside the options.
func TestTemplatedProfileAndBindingsFile(t *testing.T) {
	in := `{"context_profile": {"prompt_fragments": [{"template": "\n  In {{ cwd }}  \n", "bindings": "vars.json", "requires_caps": ["fs"]}]}}`
	o, err := Parse([]byte(in), &ParseOptions{Files: templateFiles})
	if err != nil {
		t.Fatal(err)
	}
	f := o.Profile[0]
	if f.Body != "In /srv/app" || len(f.RequiresCaps) != 1 {
		t.Fatalf("profile = %+v", f)
	}
	s := f.Template.Spans
	if len(s) != 2 || f.Body[s[0].Start:s[0].End] != "In " || f.Body[s[1].Start:s[1].End] != "/srv/app" || s[1].Path != "cwd" {
		t.Errorf("spans = %+v", s)
	}
}

func TestTemplateErrors(t *testing.T) {
	tests := []struct {
		name, in string
		kind     error
		names    []string
		harn     bool // a *template.Error is under it
	}{
		{"bindings alone", `{"system":[{"bindings":{}}]}`, ErrInvalid, []string{"system[0].bindings", "without a template"}, false},
		{"content and template", `{"system":[{"content":"x","template":"y"}]}`, ErrInvalid, []string{"system[0]", "`content` or a template"}, false},
		{"body and template", `{"_system_fragments":[{"body":"x","template":"y"}]}`, ErrInvalid, []string{"_system_fragments[0]", "`body` or a template"}, false},
		{"both templates", `{"system":[{"template":"x","template_file":"y"}]}`, ErrInvalid, []string{"not both"}, false},
		{"template not a string", `{"system":[{"template":1}]}`, ErrInvalid, []string{"system[0].template", "must be a string"}, false},
		{"bindings not an object", `{"system":[{"template":"x","bindings":[1]}]}`, ErrInvalid, []string{"system[0].bindings", "a list"}, false},
		{"file outside", `{"system":[{"template_file":"../x.prompt"}]}`, ErrInvalid, []string{"system[0].template_file", "inside the options file's directory"}, false},
		{"absolute file", `{"system":[{"template_file":"/etc/passwd"}]}`, ErrInvalid, []string{"inside the options file's directory"}, false},
		{"missing file", `{"system":[{"template_file":"nope.prompt"}]}`, ErrInvalid, []string{"system[0].template_file", "cannot read it"}, false},
		{"missing bindings file", `{"system":[{"template":"x","bindings":"nope.json"}]}`, ErrInvalid, []string{"system[0].bindings", "cannot read it"}, false},
		{"syntax", `{"system":[{"template":"{{ if x }}"}]}`, ErrInvalid, []string{"system[0].template", "at 1:1", "missing matching"}, true},
		{"unknown filter", `{"profile":1,"context_profile":{"prompt_fragments":[{"template":"{{ x | nope }}"}]}}`, ErrInvalid, []string{"context_profile.prompt_fragments[0].template", "unknown filter `nope`"}, true},
		{"include outside the root", `{"system":[{"template_file":"escape.prompt"}]}`, ErrInvalid, []string{"system[0].template_file", "escape.prompt at 1:1", "escapes template root"}, true},
		{"include outside from inline", `{"system":[{"template":"{{ include \"../x\" }}"}]}`, ErrInvalid, []string{"escapes template root"}, true},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.in), &ParseOptions{Files: templateFiles})
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, tt.kind) {
			t.Errorf("%s: got %v, want an *Error matching %v", tt.name, err, tt.kind)
			continue
		}
		for _, n := range tt.names {
			if !strings.Contains(err.Error(), n) {
				t.Errorf("%s: %q lacks %q", tt.name, err, n)
			}
		}
		var te *template.Error
		if errors.As(err, &te) != tt.harn {
			t.Errorf("%s: a *template.Error under it: %v, want %v", tt.name, !tt.harn, tt.harn)
		}
	}
	// Without a directory, an inline template that includes nothing still
	// renders, and a template file is an error.
	if _, err := Parse([]byte(`{"system":[{"template":"hi {{ x }}","bindings":{"x":1}}]}`), nil); err != nil {
		t.Error(err)
	}
	if _, err := Parse([]byte(`{"system":[{"template_file":"a.prompt"}]}`), nil); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "without a directory") {
		t.Errorf("got %v", err)
	}
}

// A disabled item is not rendered, nor a profile item beside
// _system_fragments (the profile then adds nothing): their templates may
// be anything.
func TestUnusedTemplateIsNotRendered(t *testing.T) {
	o, err := Parse([]byte(`{"system":[{"template":"{{ if }}","enabled":false},"x"]}`), nil)
	if err != nil || len(o.System) != 1 {
		t.Fatalf("%v %+v", err, o)
	}
	o, err = Parse([]byte(`{"_system_fragments":[{"body":"b"}],"context_profile":{"prompt_fragments":[{"template":"{{ if }}"}]}}`), nil)
	if err != nil || len(o.Profile) != 0 || len(o.Warnings) != 0 {
		t.Fatalf("%v %+v", err, o)
	}
	// A template file's path is cleaned first.
	if o, err := Parse([]byte(`{"system":[{"template_file":"./prompts/../vars.json"}]}`), &ParseOptions{Files: templateFiles}); err != nil || o.System[0].Template.File != "vars.json" {
		t.Errorf("%v", err)
	}
}

// An include may not follow a symbolic link out of the options'
// directory when Files is an os.Root's (as the CLI gives it).
func TestIncludeThroughSymlinkIsRefused(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.prompt"), []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.prompt"), filepath.Join(dir, "link.prompt")); err != nil {
		t.Skip(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	_, err = Parse([]byte(`{"system":[{"template":"{{ include \"link.prompt\" }}"}]}`), &ParseOptions{Files: root.FS()})
	var te *template.Error
	if !errors.As(err, &te) || te.Kind != "include" {
		t.Errorf("got %v, want an include error", err)
	}
	_, err = Parse([]byte(`{"system":[{"template_file":"link.prompt"}]}`), &ParseOptions{Files: root.FS()})
	if !errors.Is(err, ErrInvalid) || strings.Contains(err.Error(), "secret") {
		t.Errorf("got %v", err)
	}
}

// Hostile templates: the output, and the work, of all of the options'
// templates together are held to MaxBytes; each fails fast with
// promptloom.ErrTooLarge, and nesting is bounded.
func TestHostileTemplates(t *testing.T) {
	xs := "[" + strings.Repeat("1,", 999) + "1]"
	loop := `{{ for a in xs }}{{ for b in xs }}{{ for c in xs }}0123456789{{ end }}{{ end }}{{ end }}`
	silent := `{{ for a in xs }}{{ for b in xs }}{{ for c in xs }}{{ end }}{{ end }}{{ end }}`
	small := "[" + strings.Repeat("1,", 299) + "1]"
	many := func(tpl string, n int) string {
		items := make([]string, n)
		for i := range items {
			b := xs
			if n > 1 {
				b = small // 90,000 turns an item
			}
			items[i] = `{"template":"` + tpl + `","bindings":{"xs":` + b + `}}`
		}
		return `{"system":[` + strings.Join(items, ",") + `]}`
	}
	for _, tt := range []struct {
		name, in string
		max      int
		want     string
	}{
		{"a loop past the limit", many(loop, 1), 1 << 20, "rendered output passes the limit"},
		{"a loop that writes nothing", many(silent, 1), 1 << 20, "steps"},
		// Each of these renders under the limit alone (900 KB, 90,000
		// steps); together they pass it.
		{"many items, each under the limit", many(`{{ for a in xs }}{{ for b in xs }}0123456789{{ end }}{{ end }}`, 500), 4 << 20, "render"},
		{"many silent items", many(`{{ for a in xs }}{{ for b in xs }}{{ end }}{{ end }}`, 1000), 1 << 20, "render"},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Parse([]byte(tt.in), &ParseOptions{MaxBytes: tt.max})
		runtime.ReadMemStats(&after)
		// Memory: what a render of the limit's size allocates, a few
		// times over (its buffer grows by doubling, its spans beside it).
		if alloc := after.TotalAlloc - before.TotalAlloc; !raceEnabled && alloc > uint64(40*tt.max+len(tt.in)*20) {
			t.Errorf("%s: allocated %d bytes under a limit of %d", tt.name, alloc, tt.max)
		}
		if !errors.Is(err, promptloom.ErrTooLarge) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want ErrTooLarge saying %q", tt.name, err, tt.want)
		}
	}
	deep := strings.Repeat("{{ if x }}", 200) + strings.Repeat("{{ end }}", 200)
	_, err := Parse([]byte(`{"system":[{"template":"`+deep+`"}]}`), nil)
	var te *template.Error
	if !errors.As(err, &te) || te.Kind != "syntax" || !strings.Contains(err.Error(), "system[0].template") {
		t.Errorf("deep nesting: got %v", err)
	}
	deepExpr := strings.Repeat("(", 5000) + "x" + strings.Repeat(")", 5000)
	if _, err := Parse([]byte(`{"system":[{"template":"{{ `+deepExpr+` }}"}]}`), nil); !errors.As(err, &te) {
		t.Errorf("deep expression: got %v", err)
	}
}

// Paths with quoted keys, negative indexes and string indexes are
// resolved as the template resolved them: each read path's digest is its
// value's, never "bound to nothing" for a value the template wrote.
func TestBindingPathsResolve(t *testing.T) {
	bindings := `{"m": {"a b": {"c\"]d": [10, "xy", {"k.l": true}]}}, "s": "héllo", "xs": [1, 2, 3]}`
	tpl := `{{ m["a b"]["c\"]d"][0] }}|{{ m["a b"]["c\"]d"][-2] }}|{{ m["a b"]["c\"]d"][2]["k.l"] }}|{{ s[1] }}|{{ xs[-1] }}|{{ xs[7] }}|{{ m.nope.deeper }}`
	in, err := json.Marshal(map[string]any{"system": []any{map[string]any{"template": tpl, "bindings": json.RawMessage(bindings)}}})
	if err != nil {
		t.Fatal(err)
	}
	o, err := Parse(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := o.System[0]
	if f.Body != "10|xy|true|é|3||" {
		t.Errorf("body = %q", f.Body)
	}
	want := map[string]digest.Digest{
		`m["a b"]["c\"]d"][0]`:        valueDigest(t, `10`),
		`m["a b"]["c\"]d"][1]`:        valueDigest(t, `"xy"`),
		`m["a b"]["c\"]d"][2]["k.l"]`: valueDigest(t, `true`),
		`s[1]`:                        valueDigest(t, `"é"`),
		`xs[2]`:                       valueDigest(t, `3`),
		`xs[7]`:                       digest.Bytes(nil),
		`m.nope.deeper`:               digest.Bytes(nil),
	}
	if diff := cmp.Diff(want, f.Template.Bindings); diff != "" {
		t.Errorf("bindings (-want +got):\n%s", diff)
	}
}

// Reading a large list item by item costs each item once.
func TestManyReadsOfOneListAreLinear(t *testing.T) {
	const n = 20000
	var tpl, xs strings.Builder
	for i := range n {
		fmt.Fprintf(&tpl, "{{ xs[%d] }}", i)
		if i > 0 {
			xs.WriteByte(',')
		}
		fmt.Fprintf(&xs, "%d", i)
	}
	in := `{"system":[{"template":"` + tpl.String() + `","bindings":{"xs":[` + xs.String() + `]}}]}`
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	o, err := Parse([]byte(in), nil)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(o.System[0].Template.Bindings); got != n {
		t.Fatalf("%d bindings read, want %d", got, n)
	}
	// Each read costs its item, not the list: a read that copied or
	// re-encoded the list would allocate n times its size.
	if alloc := after.TotalAlloc - before.TotalAlloc; !raceEnabled && alloc > uint64(300*len(in)) {
		t.Errorf("%d reads of a %d-byte input allocated %d bytes", n, len(in), alloc)
	}
}

// ParseOptions.Bindings are the call's: each member in place of an
// item's own, for every templated item, and recorded as read.
func TestCallBindings(t *testing.T) {
	in := `{"system": [{"template": "{{ cwd }} {{ date }}", "bindings": {"cwd": "/default", "date": "never"}}, "plain"],
	  "_system_fragments": [{"template": "{{ date }}"}]}`
	o, err := Parse([]byte(in), &ParseOptions{Bindings: []byte(`{"date": "monday", "extra": [1]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if o.System[0].Body != "/default monday" || o.Primary[0].Body != "monday" || o.System[1].Body != "plain" {
		t.Errorf("bodies %q %q %q", o.System[0].Body, o.Primary[0].Body, o.System[1].Body)
	}
	if got := o.System[0].Template.Bindings["date"]; got != valueDigest(t, `"monday"`) {
		t.Errorf("date's digest %s", got)
	}
	for _, bad := range []struct {
		b    string
		kind error
	}{{`[1]`, ErrInvalid}, {`{"a":1,"a":2}`, ErrMalformed}, {`{`, ErrMalformed}} {
		if _, err := Parse([]byte(in), &ParseOptions{Bindings: []byte(bad.b)}); !errors.Is(err, bad.kind) || !strings.Contains(err.Error(), "bindings") {
			t.Errorf("bindings %s: got %v", bad.b, err)
		}
	}
	if _, err := Parse([]byte(in), &ParseOptions{MaxBytes: 1 << 10, Bindings: []byte(`{"x":"` + strings.Repeat("a", 2000) + `"}`)}); !errors.Is(err, promptloom.ErrTooLarge) {
		t.Errorf("large bindings: got %v", err)
	}
}
