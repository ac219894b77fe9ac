package transcript

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/promptloom/promptloom"
)

// TestLineReaderReadsEveryLineWhole: lines of every size around the read
// buffer's 64 KiB come back byte for byte, whether the source says how
// much it has left (a bytes.Reader, a file: the rest of a long line is read
// straight into one buffer) or not (pieces, then one string).
func TestLineReaderReadsEveryLineWhole(t *testing.T) {
	var want []string
	for i, n := range []int{0, 1, 64<<10 - 1, 64 << 10, 64<<10 + 1, 200 << 10, 3, 1 << 20, 5} {
		want = append(want, strings.Repeat(string(rune('a'+i)), n))
	}
	data := strings.Join(want, "\n") // the last line torn
	path := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for name, r := range map[string]io.Reader{
		"bytes.Reader": bytes.NewReader([]byte(data)),
		"plain reader": struct{ io.Reader }{strings.NewReader(data)},
		"file":         f,
	} {
		lr := newLineReader(r, 2<<20)
		for i, w := range want {
			got, err := lr.next()
			if err != nil || got != w {
				t.Fatalf("%s: line %d: %d bytes (%v), want %d", name, i+1, len(got), err, len(w))
			}
			if torn := i == len(want)-1; lr.torn != torn {
				t.Errorf("%s: line %d: torn %v", name, i+1, lr.torn)
			}
		}
		if _, err := lr.next(); !errors.Is(err, io.EOF) {
			t.Errorf("%s: after the last line: %v", name, err)
		}
	}
	// Past the limit, whatever the source.
	for _, r := range []io.Reader{strings.NewReader(strings.Repeat("x", 300<<10) + "\n"), struct{ io.Reader }{strings.NewReader(strings.Repeat("x", 300<<10))}} {
		if _, err := newLineReader(r, 200<<10).next(); !errors.Is(err, promptloom.ErrTooLarge) {
			t.Errorf("a line past the limit: %v", err)
		}
	}
}
