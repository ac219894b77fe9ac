package template_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/harn/template"
)

// Hostile templates end with a typed error, in bounded time and memory.

func parseWith(t *testing.T, tpl string, o *template.Options) *template.Template {
	t.Helper()
	tp, err := template.Parse("t.prompt", []byte(tpl), o)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

func TestLoopPastTheOutputLimit(t *testing.T) {
	items := "[" + strings.Repeat("1,", 999) + "1]"
	tp := parseWith(t, "{{ for a in xs }}{{ for b in xs }}{{ for c in xs }}0123456789{{ end }}{{ end }}{{ end }}", &template.Options{MaxBytes: 1 << 20})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := tp.Render([]byte(`{"xs":` + items + `}`))
	runtime.ReadMemStats(&after)
	if !errors.Is(err, promptloom.ErrTooLarge) {
		t.Fatalf("got %v, want ErrTooLarge", err)
	}
	if want := "t.prompt at 1:52: rendered output passes the limit of 1048576 bytes"; err.Error() != want {
		t.Errorf("got %q, want %q", err, want)
	}
	// The render stops at the limit, not after the billion steps the loop
	// asks for: what it allocated is the limit's output, a few times over.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 40<<20 {
		t.Errorf("allocated %d bytes under a limit of 1 MiB", alloc)
	}
}

func TestLoopThatWritesNothingStillEnds(t *testing.T) {
	items := "[" + strings.Repeat("1,", 999) + "1]"
	tp := parseWith(t, "{{ for a in xs }}{{ for b in xs }}{{ for c in xs }}{{ end }}{{ end }}{{ end }}", &template.Options{MaxBytes: 1 << 16})
	_, err := tp.Render([]byte(`{"xs":` + items + `}`))
	if !errors.Is(err, promptloom.ErrTooLarge) || !strings.Contains(err.Error(), "steps") {
		t.Fatalf("got %v", err)
	}
}

func TestFilterPastTheOutputLimit(t *testing.T) {
	for _, tpl := range []string{
		"{{ x | indent: 1000000000000 }}",
		`{{ x | replace: "a", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" }}`,
		`{{ x | lines | join: "------------------------------------------------------------------------" }}`,
		"{{ x | lines | json: true }}",
	} {
		tp := parseWith(t, tpl, &template.Options{MaxBytes: 4096})
		_, err := tp.Render([]byte(`{"x":"` + strings.Repeat(`a\n`, 1000) + `"}`))
		if !errors.Is(err, promptloom.ErrTooLarge) {
			t.Errorf("%s: got %v", tpl, err)
		}
	}
}

// indent measures its output before it makes the padding: a width past
// the limit (or past any int) on one line, padded first, is too large at
// once, never a panic or a gigabyte of spaces; an empty text pads nothing.
func TestIndentWidthPastTheLimit(t *testing.T) {
	for _, tpl := range []string{
		`{{ "a" | indent: 9223372036854775807, true }}`,
		`{{ "a" | indent: 2000000000, true }}`,
		`{{ "a\nb" | indent: 2000000000 }}`,
	} {
		tp := parseWith(t, tpl, &template.Options{MaxBytes: 1000})
		if _, err := tp.Render(nil); !errors.Is(err, promptloom.ErrTooLarge) {
			t.Errorf("%s: got %v", tpl, err)
		}
	}
	tp := parseWith(t, `{{ "" | indent: 1000000000, true }}|{{ "a" | indent: 1000000000 }}`, &template.Options{MaxBytes: 1000})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r, err := tp.Render(nil)
	runtime.ReadMemStats(&after)
	if err != nil || r.Text != "|a" {
		t.Errorf("nothing to pad: %q, %v", r.Text, err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("nothing to pad allocated %d bytes", grew)
	}
}

func TestTooLargeInputs(t *testing.T) {
	o := &template.Options{MaxBytes: 10}
	if _, err := template.Parse("t", []byte("01234567890"), o); !errors.Is(err, promptloom.ErrTooLarge) {
		t.Errorf("template: %v", err)
	}
	tp := parseWith(t, "x", o)
	if _, err := tp.Render([]byte(`{"a":"bbbbbb"}`)); !errors.Is(err, promptloom.ErrTooLarge) {
		t.Errorf("bindings: %v", err)
	}
	root := fstest.MapFS{"big.prompt": {Data: []byte(strings.Repeat("x", 31))}}
	tp = parseWith(t, `{{ include "big.prompt" }}`, &template.Options{MaxBytes: 30, Root: root})
	if _, err := tp.Render(nil); !errors.Is(err, promptloom.ErrTooLarge) {
		t.Errorf("include: %v", err)
	}
}

func TestDeepNesting(t *testing.T) {
	deep := strings.Repeat("{{ if true }}", 200) + "x" + strings.Repeat("{{ end }}", 200)
	_, err := template.Parse("", []byte(deep), nil)
	if !isKind(err, "syntax") || err.Error() != "at 1:1665: template nesting depth exceeded (128 levels)" {
		t.Errorf("blocks: %v", err)
	}
	_, err = template.Parse("", []byte(strings.Repeat("{{ for x in xs }}", 6)+strings.Repeat("{{ end }}", 6)), &template.Options{MaxDepth: 5})
	if !isKind(err, "syntax") || !strings.Contains(err.Error(), "template nesting depth exceeded (5 levels)") {
		t.Errorf("MaxDepth: %v", err)
	}
	if _, err := template.Parse("", []byte(strings.Repeat("{{ if true }}", 127)+strings.Repeat("{{ end }}", 127)), nil); err != nil {
		t.Errorf("127 levels: %v", err)
	}
	parens := "{{ " + strings.Repeat("(", 129) + "x" + strings.Repeat(")", 129) + " }}"
	if _, err := template.Parse("", []byte(parens), nil); err == nil || err.Error() != "at 1:1: template expression depth exceeded (128 levels)" {
		t.Errorf("expression: %v", err)
	}
	nots := "{{ " + strings.Repeat("not ", 500) + "x }}"
	if _, err := template.Parse("", []byte(nots), nil); !isKind(err, "syntax") {
		t.Errorf("not chain: %v", err)
	}
}

// Chains Harn nests to the left (a or b or ..., x | f | g ...) are as long
// as the directive, and evaluate without deep recursion.
func TestLongChains(t *testing.T) {
	n := 200000
	or := "{{ " + strings.Repeat("a or ", n) + "b }}"
	pipe := "{{ b" + strings.Repeat(" | trim", n) + " }}"
	for _, tpl := range []string{or, pipe} {
		tp := parseWith(t, tpl, nil)
		r, err := tp.Render([]byte(`{"b":"ok"}`))
		if err != nil || r.Text != "ok" {
			t.Errorf("got %v, %v", r, err)
		}
	}
}

func TestIncludesThatLeaveTheRoot(t *testing.T) {
	root := fstest.MapFS{
		"secret.prompt":          {Data: []byte("secret")},
		"prompts/main.prompt":    {Data: []byte("")},
		"prompts/sub/p.prompt":   {Data: []byte(`{{ include "../main.prompt" }}`)},
		"prompts/dir/.keep":      {Data: []byte("")},
		"prompts/bad.prompt":     {Data: []byte("{{ x | }}")},
		"prompts/broken.prompt":  {Data: []byte{0xff}},
		"prompts/render.prompt":  {Data: []byte("\n{{ x | nope }}")},
		"prompts/escape2.prompt": {Data: []byte(`{{ include "sub/../../secret.prompt" }}`)},
	}
	sub := fstest.MapFS{}
	for k, v := range root {
		if r, ok := strings.CutPrefix(k, "prompts/"); ok {
			sub[r] = v
		}
	}
	for _, c := range []struct{ include, want string }{
		{"../secret.prompt", "include path ../secret.prompt escapes template root ."},
		{"/etc/passwd", "include path /etc/passwd escapes template root ."},
		{"sub/p.prompt", "include path main.prompt escapes template root sub"},
		{"escape2.prompt", "include path ../secret.prompt escapes template root ."},
		{"missing.prompt", "failed to read included template missing.prompt: No such file or directory (os error 2)"},
		{"dir", "failed to read included template dir: Is a directory (os error 21)"},
		{"broken.prompt", "failed to read included template broken.prompt: stream did not contain valid UTF-8"},
		{"@/../secret.prompt", "invalid project-root asset path '@/../secret.prompt'"},
		{"@partials/x.prompt", "asset alias 'partials' is not defined in [asset_roots] of harn.toml"},
	} {
		tp := parseWith(t, fmt.Sprintf(`{{ include %q }}`, c.include), &template.Options{Root: sub})
		_, err := tp.Render(nil)
		if !isKind(err, "include") || !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant …%s", c.include, err, c.want)
		}
	}
	// A parse error in an included file names that file; a render error
	// there, as in Harn, names the top template, at the included position.
	tp, _ := template.Parse("prompts/main.prompt", []byte(`{{ include "bad.prompt" }}`), &template.Options{Root: sub})
	if _, err := tp.Render(nil); err == nil || err.Error() != "prompts/bad.prompt at 1:1: expected filter name after `|`" {
		t.Errorf("parse error: %v", err)
	}
	tp, _ = template.Parse("prompts/main.prompt", []byte(`{{ include "render.prompt" }}`), &template.Options{Root: sub})
	if _, err := tp.Render(nil); err == nil || err.Error() != "prompts/main.prompt at 2:1: unknown filter `nope`" {
		t.Errorf("render error: %v", err)
	}
}

// With an os.Root as the file system, a symbolic link out of the root is
// refused (Harn canonicalizes the path and finds it outside).
func TestSymlinkOutOfTheRoot(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "secret.prompt")
	if err := os.WriteFile(outside, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	inner := filepath.Join(dir, "prompts")
	if err := os.Mkdir(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(inner, "link.prompt")); err != nil {
		t.Skip(err)
	}
	root, err := os.OpenRoot(inner)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	tp := parseWith(t, `{{ include "link.prompt" }}`, &template.Options{Root: root.FS()})
	if r, err := tp.Render(nil); !isKind(err, "include") {
		t.Errorf("got %v, %v", r, err)
	}
}

// A Template renders from many goroutines at once (run with -race).
func TestConcurrentRender(t *testing.T) {
	tp := parseWith(t, "{{ for x in xs }}{{ x | upper }}{{ end }}", nil)
	done := make(chan string)
	for i := range 8 {
		go func() {
			r, err := tp.Render([]byte(fmt.Sprintf(`{"xs":["a","b%d"]}`, i)))
			if err != nil {
				done <- err.Error()
				return
			}
			done <- r.Text
		}()
	}
	for range 8 {
		if got := <-done; !strings.HasPrefix(got, "AB") {
			t.Errorf("got %q", got)
		}
	}
}

// Spans count against the output limit (past the first few hundred), so
// a loop of one-byte pieces holds no more memory in spans than the limit.
func TestManyTinySpansAreBounded(t *testing.T) {
	items := "[" + strings.Repeat("1,", 999) + "1]"
	const limit = 1 << 20
	tp := parseWith(t, "{{ for a in xs }}{{ for b in xs }}x{{ end }}{{ end }}", &template.Options{MaxBytes: limit})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := tp.Render([]byte(`{"xs":` + items + `}`))
	runtime.ReadMemStats(&after)
	if !errors.Is(err, promptloom.ErrTooLarge) || !strings.Contains(err.Error(), "rendered output passes the limit") {
		t.Fatalf("got %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8*limit {
		t.Errorf("allocated %d bytes under a limit of %d", alloc, limit)
	}
	// A small template under a small limit is not refused for its spans.
	small := parseWith(t, "a{{ x }}b{{ x }}c", &template.Options{MaxBytes: 20})
	if r, err := small.Render([]byte(`{"x":1}`)); err != nil || r.Text != "a1b1c" {
		t.Errorf("got %v %v", r, err)
	}
}

// A long path costs in proportion to its length: its origin and the path
// it reads are built once, not step by step.
func TestLongPathIsLinear(t *testing.T) {
	alloc := func(n int, bindings string) uint64 {
		tp := parseWith(t, "{{ x"+strings.Repeat(".a", n)+" }}", nil)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := tp.Render([]byte(bindings)); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	for _, b := range []string{`{}`, `{"x":{"a":{}}}`} {
		small, large := alloc(20000, b), alloc(80000, b)
		if large > 8*small+1<<20 {
			t.Errorf("bindings %s: 20,000 steps allocate %d bytes, 80,000 allocate %d", b, small, large)
		}
	}
}
