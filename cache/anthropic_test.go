package cache

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom/internal/testkit/fakecache"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/request"
)

// fake is Anthropic's cache as the documentation states it, written
// apart from the model (internal/testkit/fakecache).
type fake struct{ c *fakecache.Anthropic }

func newFake(min int) fake { return fake{&fakecache.Anthropic{Min: min}} }

func (f fake) serve(t *testing.T, body []byte, now time.Time) payload.Usage {
	t.Helper()
	u, err := f.c.Serve(body, now)
	if err != nil {
		t.Fatal(err)
	}
	return payload.Usage{InputTokens: u.Input, CacheReadTokens: u.CacheRead, CacheWriteTokens: u.CacheWrite}
}

// A long agent run against the fake: the predicted reads agree with the
// reported ones on every call, and each miss is blamed on the right path.
func TestAgentRunAgainstTheFake(t *testing.T) {
	fake := newFake(1024)
	a := fakecache.NewAgent()
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	var calls []Call
	send := func(name string, body []byte) {
		m, err := newManifest(body, payload.Anthropic, nil)
		if err != nil {
			t.Fatal(err)
		}
		u := fake.serve(t, body, now)
		calls = append(calls, Call{Name: name, At: now, Began: now.Add(time.Second), Request: m, Reported: &u})
		now = now.Add(30 * time.Second)
	}
	long := strings.Repeat("Please look at the parser and tell me what it does. ", 3)
	send("1", a.Turn(long))
	a.Answer("It parses.")
	send("2", a.Turn("And the lexer?"))
	a.Answer("It lexes.")
	a.Tools[3]["description"] = "Run a shell command, carefully."
	send("3", a.Turn("Now run the tests."))
	a.Answer("They pass.")
	a.System[2]["text"] = "The date is 2026-12-03T10:02:00Z. The working directory is /src/app."
	send("4", a.Turn("Commit it."))
	a.Answer("Done.")
	send("5", a.Turn("Thanks."))
	now = now.Add(6 * time.Minute) // past the 5-minute lifetime
	a.Answer("You're welcome.")
	send("6", a.Turn("One more thing."))

	an := Run(calls, nil)
	for i, v := range an.Verdicts {
		rep := calls[i].Reported
		if (v.Predicted.Read == 0) != (rep.CacheReadTokens == 0) || (v.Predicted.Write == 0) != (rep.CacheWriteTokens == 0) {
			t.Errorf("call %s: predicted %+v, reported read %d write %d", v.Call, v.Predicted, rep.CacheReadTokens, rep.CacheWriteTokens)
		}
		if !near(v.Predicted.Read, rep.CacheReadTokens) || !near(v.Predicted.Write, rep.CacheWriteTokens) {
			t.Errorf("call %s: predicted %+v, reported read %d write %d", v.Call, v.Predicted, rep.CacheReadTokens, rep.CacheWriteTokens)
		}
	}
	blame := func(call string) []Blame { return an.Verdicts[call[0]-'1'].Blame }
	if b := blame("2"); len(b) != 0 {
		t.Errorf("call 2 grew its prefix and is blamed: %+v", b)
	}
	if b := blame("3"); len(b) != 1 || b[0].Kind != "change" || b[0].Path != "/tools/3" || !strings.Contains(b[0].Reason, "tool Bash: description changed since call 2") {
		t.Errorf("call 3: %+v", b)
	}
	if b := blame("4"); len(b) != 1 || b[0].Kind != "change" || b[0].Path != "/system/2" {
		t.Errorf("call 4: %+v", b)
	}
	if b := blame("6"); len(b) != 1 || b[0].Kind != "expired" {
		t.Errorf("call 6: %+v", b)
	}
	if an.Summary.Changes != 2 || !(an.Summary.Changes > 0) {
		t.Errorf("summary %+v", an.Summary)
	}
}

// near: within 3% or 8 tokens, the two tokenizers' difference.
func near(a, b int) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= 8 || float64(d) <= 0.03*float64(max(a, b))
}

// A breakpoint whose prefix is below the model's minimum caches nothing,
// silently; the model says so, and Lint warns before the request is sent.
func TestBelowTheMinimum(t *testing.T) {
	body := []byte(`{"model":"claude-sonnet-4-5","max_tokens":10,"system":[{"type":"text","text":"Be brief.","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"hi"}]}`)
	m, err := newManifest(body, payload.Anthropic, nil)
	if err != nil {
		t.Fatal(err)
	}
	fake := newFake(1024)
	now := time.Now()
	u := fake.serve(t, body, now)
	an := Run([]Call{{Name: "a", At: now, Request: m, Reported: &u}}, nil)
	v := an.Verdicts[0]
	if v.Predicted.Write != 0 || len(v.Blame) != 1 || v.Blame[0].Kind != "minimum" || v.Blame[0].Path != "/system/0" ||
		!strings.Contains(v.Blame[0].Reason, "below claude-sonnet-4-5's 1,024-token minimum") {
		t.Errorf("verdict %+v", v)
	}
	fs := lint(m, nil, nil)
	if len(fs) != 1 || fs[0].Rule != "minimum" || fs[0].Severity != "warning" {
		t.Errorf("lint %v", fs)
	}
	// The user's table wins.
	if fs := lint(m, nil, &Options{Minimums: map[string]int{"claude-sonnet-4-5": 1}}); len(fs) != 0 {
		t.Errorf("lint with an override %v", fs)
	}
}

// The request rules the API refuses: a fifth breakpoint, a 1-hour entry
// after a 5-minute one, the automatic breakpoint on a block marked with
// another ttl, a mark on an empty text block. Run predicts nothing for
// such a request.
func TestRefusedRequests(t *testing.T) {
	mark := `"cache_control":{"type":"ephemeral"}`
	hour := `"cache_control":{"type":"ephemeral","ttl":"1h"}`
	for name, c := range map[string]struct{ body, rule string }{
		"fifth":     {`{"model":"claude-sonnet-4-5","system":[` + strings.Repeat(`{"type":"text","text":"x",`+mark+`},`, 4) + `{"type":"text","text":"y",` + mark + `}],"messages":[]}`, "breakpoints"},
		"ttl order": {`{"model":"claude-sonnet-4-5","system":[{"type":"text","text":"x",` + mark + `},{"type":"text","text":"y",` + hour + `}],"messages":[]}`, "ttl-order"},
		"automatic": {`{"model":"claude-sonnet-4-5","cache_control":{"type":"ephemeral"},"system":[{"type":"text","text":"x",` + hour + `}],"messages":[]}`, "automatic"},
		"empty":     {`{"model":"claude-sonnet-4-5","system":[{"type":"text","text":"",` + mark + `}],"messages":[]}`, "cacheable"},
		"ttl":       {`{"model":"claude-sonnet-4-5","system":[{"type":"text","text":"x","cache_control":{"type":"ephemeral","ttl":"2h"}}],"messages":[]}`, "ttl"},
		"type":      {`{"model":"claude-sonnet-4-5","system":[{"type":"text","text":"x","cache_control":{"type":"persistent"}}],"messages":[]}`, "type"},
	} {
		m, err := newManifest([]byte(c.body), payload.Anthropic, nil)
		if err != nil {
			t.Fatal(name, err)
		}
		found := false
		for _, f := range lint(m, nil, nil) {
			found = found || f.Rule == c.rule && f.Severity == "error"
		}
		if !found {
			t.Errorf("%s: lint %v", name, lint(m, nil, nil))
		}
		if v := Run([]Call{{Name: "x", At: time.Now(), Request: m}}, nil).Verdicts[0]; len(v.Problems) == 0 || v.Predicted != (Tokens{}) {
			t.Errorf("%s: verdict %+v", name, v)
		}
	}
}

// The lookback: a conversation that adds more than 20 blocks between two
// breakpoints finds nothing, and the blame says so; a second breakpoint
// within reach would have found it.
func TestLookback(t *testing.T) {
	now := time.Now()
	run := func(bodies ...[]byte) *Analysis {
		fake := newFake(1024)
		var calls []Call
		for i, b := range bodies {
			m, err := newManifest(b, payload.Anthropic, nil)
			if err != nil {
				t.Fatal(err)
			}
			u := fake.serve(t, b, now.Add(time.Duration(i)*time.Second))
			calls = append(calls, Call{Name: fmt.Sprint(i + 1), At: now.Add(time.Duration(i) * time.Second), Request: m, Reported: &u})
		}
		return Run(calls, nil)
	}
	an := run(textBlocks(10, 9), textBlocks(15, 14), textBlocks(35, 34))
	if v := an.Verdicts[1]; v.Predicted.Read == 0 || v.ReadThrough != "/messages/0/content/9" {
		t.Errorf("turn 2: %+v", v)
	}
	if v := an.Verdicts[2]; v.Predicted.Read != 0 || len(v.Blame) != 1 || v.Blame[0].Kind != "lookback" || v.Blame[0].Path != "/messages/0/content/14" {
		t.Errorf("turn 3: %+v", v)
	}
	if v := run(textBlocks(10, 9), textBlocks(15, 14), textBlocks(35, 15, 34)).Verdicts[2]; v.ReadThrough != "/messages/0/content/14" || v.Reported.Read == 0 {
		t.Errorf("turn 3 with a second breakpoint: %+v", v)
	}
}

// A request that is the start of a longer earlier one changed nothing:
// read whole, it has no blame; sent after its entry expired, the blame is
// the expiry, not a "change" at a segment it does not have.
func TestAShorterRequestIsNoChange(t *testing.T) {
	now := time.Now()
	run := func(gap time.Duration) Verdict {
		fake := newFake(1024)
		var calls []Call
		for i, b := range [][]byte{textBlocks(18, 9, 17), textBlocks(10, 9)} {
			at := now.Add(time.Duration(i)*time.Second + time.Duration(i)*gap)
			m, err := newManifest(b, payload.Anthropic, nil)
			if err != nil {
				t.Fatal(err)
			}
			u := fake.serve(t, b, at)
			calls = append(calls, Call{Name: fmt.Sprint(i + 1), At: at, Request: m, Reported: &u})
		}
		an := Run(calls, nil)
		if an.Summary.Changes > 0 {
			t.Errorf("after %v: --strict fails on a request that changed nothing: %+v", gap, an.Verdicts[1].Blame)
		}
		return an.Verdicts[1]
	}
	if v := run(0); v.Predicted.Read == 0 || !near(v.Predicted.Read, v.Reported.Read) || len(v.Blame) != 0 {
		t.Errorf("read whole: %+v", v)
	}
	if v := run(6 * time.Minute); v.Predicted.Read != 0 || len(v.Blame) != 1 || v.Blame[0].Kind != "expired" || v.Blame[0].Path != "/messages/0/content/9" {
		t.Errorf("after its entry expired: %+v", v)
	}
}

// textBlocks is an Anthropic body of one user message of n text blocks of
// about 100 tokens each, a breakpoint on each block marked.
func textBlocks(n int, mark ...int) []byte {
	var parts []string
	for i := range n {
		b := fmt.Sprintf(`{"type":"text","text":"block %d %s"`, i, strings.Repeat("z", 400))
		if slices.Contains(mark, i) {
			b += `,"cache_control":{"type":"ephemeral"}`
		}
		parts = append(parts, b+"}")
	}
	return []byte(`{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":[` + strings.Join(parts, ",") + `]}]}`)
}

// Tools in another order: Lint names it before the request is sent.
func TestToolsReordered(t *testing.T) {
	a := fakecache.NewAgent()
	first, _ := newManifest(a.Turn("hi"), payload.Anthropic, nil)
	a.Tools[0], a.Tools[1] = a.Tools[1], a.Tools[0]
	second, _ := newManifest(a.Turn("again"), payload.Anthropic, nil)
	found := false
	for _, f := range lint(second, first, nil) {
		found = found || f.Rule == "tool-order" && f.Path == "/tools/0"
	}
	if !found {
		t.Errorf("lint %v", lint(second, first, nil))
	}
}

// newManifest reads body as provider p and builds its request manifest:
// the two steps of a caller that holds a body (payload.Read, then
// request.FromPayload).
func newManifest(body []byte, p payload.Provider, o *request.Options) (*request.Manifest, error) {
	r, err := payload.Read(body, p)
	if err != nil {
		return nil, err
	}
	return request.FromPayload(r, o)
}
