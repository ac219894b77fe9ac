package journal

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/internal/testkit/chromiumtest"
)

// runForPage records a run with two roles, a changed prompt between the
// calls of one role, and a failed call; it returns the transcript.
func runForPage(t *testing.T) string {
	var buf bytes.Buffer
	j := New(&buf, WithClock(clock), WithSession("s1"))
	for i, opts := range []string{
		`{"system": ["You are careful.", "Answer in English."]}`,
		`{"system": ["You are brief."], "tools": [{"name": "todo", "guidance": "Track it."}]}`,
		`{"system": ["You are careful.", "Answer in French."]}`,
	} {
		r := request(t, fmt.Sprintf("c%d", i+1), opts)
		r.Manifest.CallRole = []string{"planner", "coder", "planner"}[i]
		m := echo
		if i == 1 {
			m = ModelFunc(func(context.Context, Request) (Response, error) { return Response{}, fmt.Errorf("rate limited") })
		}
		j.Call(ctx, m, r)
	}
	j.Close()
	return buf.String()
}

func renderRun(t *testing.T, transcript string) (*Run, []byte) {
	t.Helper()
	rep, err := Verify(strings.NewReader(transcript))
	if err != nil {
		t.Fatal(err)
	}
	run, err := NewRun(strings.NewReader(transcript), "run.jsonl", rep)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := run.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	return run, buf.Bytes()
}

// The run's model: calls by role, fragments with their state, and for the
// second planner call what changed and what the prefix cache keeps.
func TestRunReadsCallsAndChanges(t *testing.T) {
	run, _ := renderRun(t, runForPage(t))
	if len(run.Calls) != 3 || run.Calls[1].Role != "coder" || run.Calls[1].Outcome != "error: rate limited" {
		t.Fatalf("calls: %+v", run.Calls)
	}
	s := run.Calls[2].Since
	if s == nil || s.Previous != "c1" || len(s.Changes) != 1 || s.Changes[0].String() != "system[1] (digest)" {
		t.Fatalf("since: %+v", s)
	}
	// "You are careful.\n\nAnswer in " is common to both prompts.
	if want := len("You are careful.\n\nAnswer in "); s.CommonPrefixBytes != want || s.ResendBytes != len("French.") {
		t.Errorf("cache: %d in common, %d re-sent; want %d, %d", s.CommonPrefixBytes, s.ResendBytes, want, len("French."))
	}
	if run.Calls[1].Since != nil {
		t.Error("the first call of a role has nothing to compare with")
	}
}

func TestRunPageRendersInChromium(t *testing.T) {
	transcript := runForPage(t)
	// A tampered copy too: its failing calls must show as failed.
	tampered := strings.Replace(transcript, "Answer in French.", "Answer in Klingon", 1)
	for name, tr := range map[string]string{"run.html": transcript, "tampered.html": tampered} {
		t.Run(name, func(t *testing.T) {
			run, html := renderRun(t, tr)
			if bytes.Contains(html, []byte("http://")) || bytes.Contains(html, []byte("https://")) {
				t.Error("the page refers to the network; it must be self-contained")
			}
			if name == "tampered.html" && (!bytes.Contains(html, []byte(`data-status="failed"`)) || !bytes.Contains(html, []byte(`id="problems"`))) {
				t.Error("the tampered run's page shows no failed call and no problem")
			}
			for _, c := range run.Calls {
				if !bytes.Contains(html, []byte(`data-call="`+c.Call+`"`)) || !bytes.Contains(html, []byte(`data-status="`+string(c.Status)+`"`)) {
					t.Errorf("call %s (%s) is not on the page", c.Call, c.Status)
				}
			}
			bin := chromiumtest.Find(t)
			file := filepath.Join(t.TempDir(), name)
			os.WriteFile(file, html, 0o644)
			dom := chromiumtest.Run(t, bin, file, "--dump-dom")
			if m := regexp.MustCompile(`data-ready="(\d+)"`).FindSubmatch(dom); m == nil || string(m[1]) == "0" {
				t.Errorf("the page's script did not run to completion")
			}
			for _, c := range run.Calls {
				if !bytes.Contains(dom, []byte(`data-call="`+c.Call+`"`)) {
					t.Errorf("call %s is not in the rendered DOM", c.Call)
				}
				for _, f := range c.Fragments {
					if !bytes.Contains(dom, []byte(`data-id="`+f.ID+`"`)) {
						t.Errorf("fragment %s of call %s is not in the rendered DOM", f.ID, c.Call)
					}
				}
			}
		})
	}
}
