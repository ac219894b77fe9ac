package cli

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/cmd/promptloom/internal/demo"
)

// endless is an input that never ends: it counts what was read of it and,
// so a test of code that reads everything still stops, fails once more
// than stopAt bytes were read.
type endless struct {
	read, stopAt int64
}

var errReadTooFar = errors.New("read far past the limit")

func (r *endless) Read(p []byte) (int, error) {
	if r.read >= r.stopAt {
		return 0, errReadTooFar
	}
	n := int64(len(p))
	n = min(n, r.stopAt-r.read)
	for i := range p[:n] {
		p[i] = ' '
	}
	r.read += n
	return int(n), nil
}

// Every file and stdin the CLI reads is read through a limit: past it the
// command fails naming the input and the limit, having read at most the
// limit and one buffer more.
func TestReadsStopAtTheLimit(t *testing.T) {
	dir := t.TempDir()
	opts := filepath.Join(dir, "opts.json")
	if err := os.WriteFile(opts, []byte(`{"system": "x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	defer func(m int64) { maxManifestBytes = m }(maxManifestBytes)
	maxManifestBytes = 1000
	defer func(p int64) { maxPromptBytes = p }(maxPromptBytes)
	maxPromptBytes = 1000
	manifestFile := filepath.Join(dir, "m.json")
	var mOut bytes.Buffer
	if code := Main([]string{"manifest", opts}, nil, &mOut, io.Discard); code != ExitOK {
		t.Fatalf("manifest: exit %d", code)
	}
	if err := os.WriteFile(manifestFile, mOut.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"explain", "--max-bytes", "1000"}, "promptloom: explain: stdin: over the limit of 1000 bytes\n"},
		{[]string{"explain", "--max-bytes", "1000", "-"}, "promptloom: explain: stdin: over the limit of 1000 bytes\n"},
		{[]string{"manifest", "--max-bytes", "1000", "-"}, "promptloom: manifest: stdin: over the limit of 1000 bytes\n"},
		{[]string{"diff", "--max-bytes", "1000", "-", opts}, "promptloom: diff: stdin: over the limit of 1000 bytes\n"},
		{[]string{"diff", "--max-bytes", "1000", opts, "-"}, "promptloom: diff: stdin: over the limit of 1000 bytes\n"},
		{[]string{"verify", "-", opts}, "promptloom: verify: stdin: over the limit of 1000 bytes\n"},
		{[]string{"verify", manifestFile, "-"}, "promptloom: verify: stdin: over the limit of 1000 bytes\n"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			in := &endless{stopAt: 1 << 20}
			var stderr bytes.Buffer
			code := Main(c.args, in, io.Discard, &stderr)
			if code != ExitBadArgs || stderr.String() != c.want {
				t.Errorf("exit %d, stderr %q; want exit 2, %q", code, stderr.String(), c.want)
			}
			if in.read > 1000+32<<10 {
				t.Errorf("read %d bytes of an input limited to 1000", in.read)
			}
		})
	}
}

// `explain --max-bytes 1000 /dev/zero` fails at once instead of reading
// until memory runs out.
func TestReadDevZero(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	var stderr bytes.Buffer
	code := Main([]string{"explain", "--max-bytes", "1000", "/dev/zero"}, nil, io.Discard, &stderr)
	if want := "promptloom: explain: /dev/zero: over the limit of 1000 bytes\n"; code != ExitBadArgs || stderr.String() != want {
		t.Errorf("exit %d, stderr %q; want exit 2, %q", code, stderr.String(), want)
	}
}

// A file of exactly the limit is read whole; one byte more is refused.
func TestReadLimitedEdges(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		size, limit int64
		tooLarge    bool
	}{{0, 1, false}, {10, 10, false}, {11, 10, true}, {4096, 4096, false}, {4097, 4096, true}, {1 << 16, 1, true}, {100, math.MaxInt64, false}} {
		path := filepath.Join(dir, "f")
		data := bytes.Repeat([]byte{'a'}, int(c.size))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{path, "-"} {
			e := &env{stdin: bytes.NewReader(data)}
			got, err := e.readLimited(name, c.limit)
			var big *InputTooLargeError
			if c.tooLarge {
				if !errors.As(err, &big) || big.Name != name || big.Limit != c.limit {
					t.Errorf("%s of %d bytes, limit %d: err %v, want *InputTooLargeError", name, c.size, c.limit, err)
				}
				continue
			}
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("%s of %d bytes, limit %d: %d bytes, err %v", name, c.size, c.limit, len(got), err)
			}
		}
	}
}

// 300 MB on stdin with --max-bytes 1000 allocates a few kilobytes, not
// the input: measured as bytes allocated, not time.
func TestEndlessStdinAllocatesLittle(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	in := &endless{stopAt: 300 << 20}
	code := Main([]string{"explain", "--max-bytes", "1000", "-"}, in, io.Discard, io.Discard)
	runtime.ReadMemStats(&after)
	if code != ExitBadArgs {
		t.Errorf("exit %d, want 2", code)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 20<<20 {
		t.Errorf("allocated %d bytes reading 300 MB with --max-bytes 1000; want under 20 MB", alloc)
	}
}

// BenchmarkExplainEndlessStdin: `explain --max-bytes 1000` with 300 MB on
// stdin; run with -benchmem to see the bytes allocated per run.
func BenchmarkExplainEndlessStdin(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if code := Main([]string{"explain", "--max-bytes", "1000", "-"}, &endless{stopAt: 300 << 20}, io.Discard, io.Discard); code != ExitBadArgs {
			b.Fatalf("exit %d", code)
		}
	}
}

// An error line quoting a hostile file name, and a lint line quoting a
// hostile id, stay one line with their control characters escaped.
func TestMessagesEscapeControlCharacters(t *testing.T) {
	var stderr bytes.Buffer
	code := Main([]string{"explain", "no\x1b[2Jsuch\nfile"}, nil, io.Discard, &stderr)
	if want := "promptloom: explain: open no\\x1b[2Jsuch\\nfile: no such file or directory\n"; code != ExitBadArgs || stderr.String() != want {
		t.Errorf("exit %d, stderr %q; want 2, %q", code, stderr.String(), want)
	}
	stderr.Reset()
	opts := `{"_system_fragments":[{"id":"g\n\u001b[31m","body":"gated","requires_tools":["t"]},{"id":"u","body":"plain"}],"tools":[{"name":"t"}]}`
	code = Main([]string{"explain", "--lint", "-"}, strings.NewReader(opts), io.Discard, &stderr)
	if code != ExitOK || !strings.HasPrefix(stderr.String(), "promptloom: lint: g\\n\\x1b[31m is gated") || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want one escaped lint line", code, stderr.String())
	}
}

// A key=value connection string is refused with its password masked,
// never taken as a path, wherever a file or URL goes.
func TestKeyValueConnectionStringRefused(t *testing.T) {
	for _, args := range [][]string{
		{"demo", "negotiation", "--record", "host=127.0.0.1 port=1 dbname=d password=HUNTER3"},
		{"verify", "--transcript", "host=x password=HUNTER3 session=s3"},
	} {
		code, out, errOut := run(t, args...)
		if code != ExitBadArgs || strings.Contains(out+errOut, "HUNTER3") || !strings.Contains(errOut, "key=value connection string") {
			t.Errorf("%q: exit %d %s%s", args, code, out, errOut)
		}
	}
	// Only where a file or URL goes: a template or a why TEXT may be
	// anything.
	if code, out, errOut := run(t, "render", "--string", "host=h dbname=d"); code != ExitOK || out != "host=h dbname=d" {
		t.Errorf("render --string of pairs: exit %d %q %s", code, out, errOut)
	}
	if demo.CheckPath("user=admin") != nil || demo.CheckPath("a=b c") != nil || demo.CheckPath("host=h dbname=d") == nil {
		t.Error("CheckPath misjudges")
	}
}
