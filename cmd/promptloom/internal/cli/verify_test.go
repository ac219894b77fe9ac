package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/transcript"
)

// verify's FAIL lines, with or without --payload, escape what the manifest
// says: a fragment id holding a terminal escape reaches stdout as text.
func TestVerifyFailLinesAreEscaped(t *testing.T) {
	dir := t.TempDir()
	opts := filepath.Join(dir, "o.json")
	if err := os.WriteFile(opts, []byte(`{"_system_fragments":[{"id":"\u001b[31mevil","body":"hello"},{"id":"b","body":"world"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, m, errOut := run(t, "manifest", opts)
	if code != ExitOK {
		t.Fatalf("manifest: exit %d: %s", code, errOut)
	}
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	mf := write("m.json", m)
	for _, args := range [][]string{
		{"verify", mf, write("system.txt", "HELLO\n\nworld")},
		{"verify", mf, "--payload", write("body.json", `{"system":"HELLO\n\nworld"}`)},
	} {
		code, out, errOut := run(t, args...)
		if code != ExitFail || !strings.HasPrefix(out, "FAIL ") {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
		if strings.ContainsRune(out, 0x1b) {
			t.Errorf("%v: a raw escape reached stdout: %q", args, out)
		}
	}
}

// A transcript cut short by a line past the cap: verify and the text report
// end with the FAIL line on stdout; the HTML report keeps its page whole and
// says FAIL on stderr. Each exits 1.
func TestTranscriptCutShort(t *testing.T) {
	defer func(n int) { maxLineBytes = n }(maxLineBytes)
	maxLineBytes = 64
	path := filepath.Join(t.TempDir(), "run.jsonl")
	if err := os.WriteFile(path, []byte(strings.Repeat("x", 100)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args      []string
		failOnStd bool
	}{
		{[]string{"verify", "--transcript", path}, true},
		{[]string{"report", "--transcript", path}, true},
		{[]string{"report", "--transcript", path, "--format", "html"}, false},
	} {
		code, out, errOut := run(t, tc.args...)
		fail := out
		if !tc.failOnStd {
			fail = errOut
			if !strings.HasSuffix(strings.TrimSpace(out), "</html>") {
				t.Errorf("%v: the page does not end the output: %q", tc.args, lastN(out, 200))
			}
		}
		if code != ExitFail || !strings.Contains(fail, "FAIL journal: line 1 is longer than 64 bytes") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", tc.args, code, lastN(out, 200), errOut)
		}
	}
}

func lastN(s string, n int) string { return s[max(0, len(s)-n):] }

// --format json writes a transcript.Report field for field (reportJSON), so
// a field added to the report reaches the JSON, and in its place.
func TestReportJSONIsTheReports(t *testing.T) {
	var fields []reflect.StructField // transcript.Report's exported ones
	for _, f := range reflect.VisibleFields(reflect.TypeFor[transcript.Report]()) {
		if f.IsExported() {
			fields = append(fields, f)
		}
	}
	got := reflect.TypeFor[reportJSON]()
	if len(fields) != got.NumField() {
		t.Fatalf("transcript.Report has %d exported fields, reportJSON %d", len(fields), got.NumField())
	}
	for i, w := range fields {
		g := got.Field(i)
		if w.Name != g.Name || w.Tag != g.Tag || (w.Type != g.Type && w.Name != "Calls") {
			t.Errorf("field %d: transcript.Report has %s %s %q, reportJSON %s %s %q", i, w.Name, w.Type, w.Tag, g.Name, g.Type, g.Tag)
		}
	}
}

// A directory given as a file is refused as it is opened (exit 2, as a
// missing file), not read as a broken transcript or body.
func TestADirectoryIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"verify", "--transcript", dir}, {"explain", "--request", dir}} {
		if code, _, errOut := run(t, args...); code != ExitBadArgs || !strings.Contains(errOut, "is a directory") {
			t.Errorf("%v: exit %d, %s", args, code, errOut)
		}
	}
}
