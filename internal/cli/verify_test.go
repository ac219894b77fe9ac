package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
