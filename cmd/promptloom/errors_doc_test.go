package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/promptloom/promptloom/cmd/promptloom/internal/errdoc"
	"github.com/promptloom/promptloom/internal/testkit/pgtest"
)

// The page, generated once for the tests that read it.
var generated struct {
	once sync.Once
	page *errdoc.Page
	err  error
}

// generate runs the error catalogue as go generate does, and with a
// PostgreSQL database for the cases that need one when the tests have a
// server.
func generate(t *testing.T) *errdoc.Page {
	t.Helper()
	generated.once.Do(func() {
		o := &errdoc.Options{}
		if os.Getenv(pgtest.Env) != "" {
			o.Postgres = func() string { return pgtest.URL(t) }
		}
		generated.page, generated.err = errdoc.Generate(".", o)
	})
	if generated.page == nil {
		t.Fatalf("generating docs/errors.md: %v", generated.err)
	}
	return generated.page
}

// TestErrorsDoc runs every case of the error catalogue, the command line's
// and the library's, and checks that each error matches what its case
// declares and that docs/errors.md is the page they make.
func TestErrorsDoc(t *testing.T) {
	page := generate(t)
	if generated.err != nil {
		t.Errorf("the catalogue does not run as it says:\n%v", generated.err)
	}
	for _, name := range page.Unrun {
		t.Logf("not run (needs PostgreSQL: set %s): %s", pgtest.Env, name)
	}
	if len(page.Outputs) < 100 {
		t.Errorf("only %d command-line cases", len(page.Outputs))
	}
	doc, err := os.ReadFile("../../docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(doc, page.Markdown) {
		t.Errorf("docs/errors.md is not what the catalogue gives: run go generate ./cmd/promptloom\n%s", firstDifference(doc, page.Markdown))
	}
}

// firstDifference shows the first line where the committed page and the
// generated one differ.
func firstDifference(have, want []byte) string {
	h, w := strings.Split(string(have), "\n"), strings.Split(string(want), "\n")
	i := 0
	for i < len(h) && i < len(w) && h[i] == w[i] {
		i++
	}
	line := func(l []string) string {
		if i < len(l) {
			return strconv.Quote(l[i])
		}
		return "(end of page)"
	}
	return "line " + strconv.Itoa(i+1) + ":\n  committed: " + line(h) + "\n  generated: " + line(w)
}

// Every message the CLI fails with directly (e.fail with a literal format)
// has a case in the catalogue: the text before its first verb must appear
// in a case's output.
func TestEveryCLIFailureIsDocumented(t *testing.T) {
	outputs := strings.Join(generate(t).Outputs, "\n")
	failRE := regexp.MustCompile(`e\.fail\("((?:[^"\\]|\\.)*)"`)
	files, err := filepath.Glob("internal/cli/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no CLI sources: %v", err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range failRE.FindAllStringSubmatch(string(src), -1) {
			format, err := strconv.Unquote(`"` + m[1] + `"`)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			prefix, _, _ := strings.Cut(format, "%")
			if n++; !strings.Contains(outputs, prefix) {
				t.Errorf("%s: no case in testdata/errors fails with %q", filepath.Base(f), format)
			}
		}
	}
	if n < 10 {
		t.Fatalf("found only %d e.fail calls", n)
	}
}
