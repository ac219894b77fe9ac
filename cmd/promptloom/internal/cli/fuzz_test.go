package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/promptloom/promptloom/internal/textsafe"
)

// FuzzCLIText runs `explain --lint --traces` and `diff` on any two inputs
// (and a file name built from the second): whatever they hold, what
// reaches stdout or stderr is UTF-8 with no control character but the
// newline (tables are laid out with spaces), and every stderr message is
// one line.
func FuzzCLIText(f *testing.F) {
	for _, s := range [][2]string{
		{`{"system":["a"]}`, `{"system":["b"]}`},
		{`{"_system_fragments":[{"id":"x\n2  forged\u001b[2J","body":"hi \u001b[31m there\ttab"}]}`, `{"system":[{"content":"a","title":"t\u202e"}]}`},
		{`{"_system_fragments":[{"id":"g","body":"gated","requires_tools":["t"]},{"id":"u","body":"plain"}],"tools":[{"name":"t"}]}`, `{"system":"\u0085\u009b"}`},
		{`{"system": [{"text": "x\u001b"}]}`, "\xff\x1b[2J"},
		{`{"system":{"mode":"replace","content":"line\r\nline"}}`, `{"system":"a\nb\nc"}`},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		dir := t.TempDir()
		name := "b" + strings.Map(func(r rune) rune {
			if r == '/' || r == 0 {
				return '_'
			}
			return r
		}, string(b[:min(len(b), 20)])) + ".json"
		bPath := filepath.Join(dir, name)
		if err := os.WriteFile(bPath, b, 0o644); err != nil {
			t.Skip(err) // a name the file system refuses
		}
		for _, args := range [][]string{
			{"explain", "--lint", "--traces", "-"},
			{"diff", "-", bPath},
			{"diff", "-", "--without-tool", "t"},
			{"explain", "--max-bytes", "16", "-"},
		} {
			var stdout, stderr bytes.Buffer
			Main(args, bytes.NewReader(a), &stdout, &stderr)
			for what, out := range map[string]string{"stdout": stdout.String(), "stderr": stderr.String()} {
				if !utf8.ValidString(out) {
					t.Fatalf("%v: %s is not UTF-8: %q", args, what, out)
				}
				for _, r := range out {
					if r != '\n' && !textsafe.Safe(r) {
						t.Fatalf("%v: %U reached %s: %q", args, r, what, out)
					}
				}
			}
			for _, line := range strings.SplitAfter(stderr.String(), "\n") {
				if line != "" && !strings.HasPrefix(line, "promptloom: ") {
					t.Fatalf("%v: a stderr message spans lines: %q", args, stderr.String())
				}
			}
		}
	})
}
