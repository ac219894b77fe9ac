package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom/internal/testkit/fakecache"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/payload"
)

// agentTranscript records a six-turn agent run, its calls unattributed
// (as a proxy records a harness it knows nothing of), each answered with
// the usage a cache that follows Anthropic's documented rules reports: a
// tool definition edited at turn 3, the date in the system prompt at
// turn 4, a pause past the 5-minute lifetime before turn 6.
func agentTranscript(t *testing.T) string {
	t.Helper()
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	j := journal.New(&buf, &journal.Options{Session: "agent", Clock: func() time.Time { return now }})
	fake := &fakecache.Anthropic{Min: 1024}
	a := fakecache.NewAgent()
	send := func(name string, body []byte) {
		m := journal.ModelFunc(func(context.Context, journal.Request) (journal.Response, error) {
			u, err := fake.Serve(body, now)
			if err != nil {
				return journal.Response{}, err
			}
			return journal.Response{Text: "ok", Usage: &payload.Usage{InputTokens: u.Input, OutputTokens: 5, CacheReadTokens: u.CacheRead, CacheWriteTokens: u.CacheWrite}}, nil
		})
		if _, err := j.Call(context.Background(), m, journal.Request{Call: name, Body: body, Provider: payload.Anthropic, Unattributed: true}); err != nil {
			t.Fatal(err)
		}
		now = now.Add(30 * time.Second)
	}
	send("turn-1", a.Turn(strings.Repeat("Please look at the parser and tell me what it does. ", 3)))
	a.Answer("It parses.")
	send("turn-2", a.Turn("And the lexer?"))
	a.Answer("It lexes.")
	a.Tools[3]["description"] = "Run a shell command, carefully."
	send("turn-3", a.Turn("Now run the tests."))
	a.Answer("They pass.")
	a.System[2]["text"] = "The date is 2026-12-03T10:02:00Z. The working directory is /src/app."
	send("turn-4", a.Turn("Commit it."))
	a.Answer("Done.")
	send("turn-5", a.Turn("Thanks."))
	now = now.Add(6 * time.Minute)
	a.Answer("You're welcome.")
	send("turn-6", a.Turn("One more thing."))
	j.Close()
	path := filepath.Join(t.TempDir(), "agent.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// cache over the agent's transcript: every prediction agrees with the
// report, each miss is blamed on the right path, and --strict fails.
func TestCacheBlamesTheAgentRun(t *testing.T) {
	path := agentTranscript(t)
	code, out, errOut := run(t, "cache", "--transcript", path, "--format", "json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var an struct {
		Calls []struct {
			Call      string `json:"call"`
			Line      int    `json:"line"`
			Predicted struct {
				Read  int `json:"read_tokens"`
				Write int `json:"write_tokens"`
			} `json:"predicted"`
			Reported *struct {
				Read  int `json:"read_tokens"`
				Write int `json:"write_tokens"`
			} `json:"reported"`
			ReadThrough string `json:"read_through"`
			Blame       []struct {
				Kind, Path, Section, Reason string
			} `json:"blame"`
		} `json:"calls"`
	}
	if err := json.Unmarshal([]byte(out), &an); err != nil || len(an.Calls) != 6 {
		t.Fatalf("%v: %s", err, out)
	}
	want := map[string]string{"turn-3": "/tools/3", "turn-4": "/system/2", "turn-6": "/messages/8/content/0"}
	for _, c := range an.Calls {
		if c.Reported == nil || (c.Predicted.Read == 0) != (c.Reported.Read == 0) || (c.Predicted.Write == 0) != (c.Reported.Write == 0) {
			t.Errorf("%s: predicted %+v, reported %+v", c.Call, c.Predicted, c.Reported)
		}
		var paths []string
		for _, b := range c.Blame {
			paths = append(paths, b.Path)
		}
		if got := strings.Join(paths, ","); got != want[c.Call] {
			t.Errorf("%s: blamed %q, want %q (%+v)", c.Call, got, want[c.Call], c.Blame)
		}
	}
	if code, out, _ := run(t, "cache", "--transcript", path, "--strict"); code != ExitFail ||
		!strings.Contains(out, "change: /tools/3 tool Bash: description changed since call turn-2") ||
		!strings.Contains(out, `change: /system/2 changed at byte 27: "2026-12-03T10:00:00Z." became "2026-12-03T10:02:00Z."`) {
		t.Errorf("--strict: exit %d\n%s", code, out)
	}
	// One call's verdict, under the run's summary, which says it is the run's.
	if code, out, _ := run(t, "cache", "--transcript", path, "--call", "turn-3"); code != ExitOK ||
		!strings.Contains(out, ": 1 of 6 call(s)") || !strings.Contains(out, "hit rate over all 6 calls:") {
		t.Errorf("--call turn-3: exit %d\n%s", code, out)
	}
	// NAME@LINE is read by the parser prove and explain use: a line that
	// is not all digits is part of a name, so it finds no call.
	line := 0
	for _, c := range an.Calls {
		if c.Call == "turn-3" {
			line = c.Line
		}
	}
	if code, out, _ := run(t, "cache", "--transcript", path, "--call", fmt.Sprintf("turn-3@%d", line)); code != ExitOK || !strings.Contains(out, ": 1 of 6 call(s)") {
		t.Errorf("--call turn-3@%d: exit %d\n%s", line, code, out)
	}
	if code, _, errOut := run(t, "cache", "--transcript", path, "--call", fmt.Sprintf("turn-3@%dx", line)); code != ExitBadArgs || !strings.Contains(errOut, "no call") {
		t.Errorf("--call turn-3@%dx: exit %d\n%s", line, code, errOut)
	}
	// One call, its whole request explained and diffed from the transcript.
	if code, out, errOut := run(t, "explain", "--request", "--transcript", path, "--call", "turn-3"); code != ExitOK ||
		!strings.Contains(out, "/tools/3") || !strings.Contains(out, "breakpoint /tools/11:") {
		t.Errorf("explain: exit %d: %s%s", code, out, errOut)
	}
	if code, out, errOut := run(t, "diff", "--request", "--transcript", path, "--call", "turn-2", "--call", "turn-3"); code != ExitFail ||
		!strings.Contains(out, "leaves turn-2's prefix at segment 4, /tools/3 (tools): tool Bash: description changed") {
		t.Errorf("diff: exit %d: %s%s", code, out, errOut)
	}
}

// --lint exits 1 on an error (a request the provider refuses) without
// --strict, on a warning only with it, and says each finding once.
func TestLintExits(t *testing.T) {
	dir := t.TempDir()
	block := `{"type":"text","text":"x","cache_control":{"type":"ephemeral"}}`
	five := `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":[` + strings.Repeat(block+",", 4) + block + `]}]}`
	one := `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":[` + block + `]}]}`
	for _, c := range []struct {
		body   string
		strict bool
		want   int
	}{{five, false, ExitFail}, {one, false, ExitOK}, {one, true, ExitFail}} {
		path := filepath.Join(dir, "body.json")
		if err := os.WriteFile(path, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"explain", "--request", path, "--lint"}
		if c.strict {
			args = append(args, "--strict")
		}
		code, out, errOut := run(t, args...)
		if code != c.want || strings.Contains(errOut, "lint: error:") || strings.Contains(errOut, "lint: warning:") || !strings.Contains(out, "lint: ") {
			t.Errorf("%v on %.60s…: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args[3:], c.body, code, c.want, out, errOut)
		}
	}
}

// A Gemini body names no model (its URL does): --model gives the one its
// minimum is read for; without it the minimum is unknown, and lint says so.
func TestRequestModelFlag(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gemini.json")
	if err := os.WriteFile(path, []byte(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, _ := run(t, "explain", "--request", path, "--lint")
	if !strings.Contains(out, "model -") || !strings.Contains(out, "minimum unknown") {
		t.Errorf("no --model:\n%s", out)
	}
	_, out, _ = run(t, "explain", "--request", path, "--lint", "--model", "gemini-2.5-pro")
	if !strings.Contains(out, "model gemini-2.5-pro") || !strings.Contains(out, "below gemini-2.5-pro's 2,048-token minimum") {
		t.Errorf("--model gemini-2.5-pro:\n%s", out)
	}
}
