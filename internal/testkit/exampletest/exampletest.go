// Package exampletest holds the checks every SDK example under examples/
// must pass: it runs a two-turn conversation, streamed, through the
// transport into a transcript that verifies; a secret put in a user
// message never reaches the transcript; the provider's cache tokens are
// recorded beside the prefix promptloom kept stable; and the example's
// promptloom-specific code (the lines marked "// promptloom") is at most
// MaxLines lines, with no promptloom call left unmarked.
package exampletest

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/internal/testkit/fakeprovider"
	"github.com/promptloom/promptloom/transcript"
	"github.com/promptloom/promptloom/transcript/report"
)

// MaxLines bounds an example's promptloom-specific lines.
const MaxLines = 15

// Secret is a GitHub token, as the secret catalog knows them.
const Secret = "ghp_" + "Abcdefghijklmnopqrstuvwxyz0123456789"

// Run is an example's run: the conversation, into the transcript at path,
// against the provider at baseURL, printing the turns to out.
type Run func(path string, out io.Writer, baseURL string) error

// Check runs the example in-process against fake and checks it.
func Check(t *testing.T, run Run, fake func() *fakeprovider.Server) {
	t.Helper()
	t.Setenv("PROMPTLOOM_EXAMPLE_SECRET", Secret)
	f := fake()
	defer f.Close()
	path := filepath.Join(t.TempDir(), "run.jsonl")
	var out bytes.Buffer
	if err := run(path, &out, f.URL); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "turn 1: ") || !strings.Contains(out.String(), "turn 2: ") {
		t.Errorf("the example did not run two turns:\n%s", out.String())
	}
	reqs := f.Requests()
	if len(reqs) != 2 || !reqs[0].Stream || !reqs[1].Stream {
		t.Fatalf("%d requests reached the provider, want 2 streamed: %+v", len(reqs), reqs)
	}
	if !bytes.Contains(reqs[0].Body, []byte(Secret)) {
		t.Error("the secret is not in the request sent: the example does not put it in a user message")
	}
	trArg, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(trArg, []byte(Secret)) || bytes.Contains(trArg, []byte(Secret[4:])) {
		t.Errorf("the secret reached the transcript")
	}
	if !bytes.Contains(trArg, []byte("<redacted:github_token:")) {
		t.Errorf("the transcript does not show the secret redacted")
	}
	rep, err := transcript.Verify(bytes.NewReader(trArg), nil)
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := rep.Counts(); !rep.OK() || v != 2 || rep.Unattributed != 0 {
		var w strings.Builder
		rep.WriteText(&w)
		t.Fatalf("the transcript does not verify two attributed calls:\n%s", w.String())
	}
	second, since := rep.Calls[1], report.Compare(rep)[1]
	if since == nil || since.Previous != rep.Calls[0].Call || since.CommonPrefixBytes != second.SystemBytes || second.Usage == nil || second.Usage.CacheReadTokens == 0 {
		t.Errorf("turn 2: predicted stable since the last turn %+v of %d bytes, usage %+v", since, second.SystemBytes, second.Usage)
	}
	if !bytes.Contains(trArg, []byte(`"tool_calls":[{`)) {
		t.Error("no tool call recorded")
	}
}

var (
	marked = regexp.MustCompile(`//\s*promptloom\s*$`)
	// a use of promptloom: its packages, the explanation e, the journal j
	usesPromptloom = regexp.MustCompile(`\b(explain|journal|transport|promptloom)\.|\be\b|\bj\b`)
)

// Lines counts the lines of the example's main.go marked "// promptloom"
// and fails if there are more than MaxLines, or if a line outside the
// imports and comments uses promptloom unmarked.
func Lines(t *testing.T) int {
	t.Helper()
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	n, inImports := 0, false
	for i, line := range strings.Split(string(src), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "import ("):
			inImports = true
			continue
		case inImports:
			inImports = trimmed != ")"
			continue
		case strings.HasPrefix(trimmed, "//"):
			continue
		}
		if marked.MatchString(line) {
			n++
		} else if usesPromptloom.MatchString(line) {
			t.Errorf("main.go:%d uses promptloom but is not marked // promptloom: %s", i+1, trimmed)
		}
	}
	if n > MaxLines {
		t.Errorf("%d promptloom-specific lines, want at most %d", n, MaxLines)
	}
	return n
}

// Program builds and runs the example as a reader would (go run . PATH,
// the secret set), then `promptloom verify --transcript PATH` and
// `promptloom report --transcript PATH`.
func Program(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the example and the command")
	}
	path := filepath.Join(t.TempDir(), "run.jsonl")
	cmd := exec.Command("go", "run", ".", path)
	cmd.Env = append(os.Environ(), "PROMPTLOOM_EXAMPLE_SECRET="+Secret)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "turn 2: ") {
		t.Fatalf("go run . %s: %v\n%s", path, err, out)
	}
	out, err := exec.Command("go", "run", "../../cmd/promptloom", "verify", "--transcript", path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "2 call(s) verified, 0 incomplete, 0 failed") {
		t.Fatalf("promptloom verify: %v\n%s", err, out)
	}
	// The report sets the cache read the provider's rules predict beside
	// the one it reported.
	out, err = exec.Command("go", "run", "../../cmd/promptloom", "report", "--transcript", path).CombinedOutput()
	if err != nil || !regexp.MustCompile(`cache: the provider's rules predict a read of [\d,]+ tokens and a write of [\d,]+.*; it reported a read of [1-9][\d,]* and a write of [\d,]+`).Match(out) {
		t.Fatalf("promptloom report: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(Secret)) {
		t.Error("the secret reached the transcript")
	}
}
