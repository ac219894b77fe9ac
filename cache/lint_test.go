package cache

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom/internal/testkit/fakecache"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/request"
)

// lintOf runs the session lint over calls and returns the findings of
// rule.
func lintOf(t *testing.T, calls []Call, rule string) []Finding {
	t.Helper()
	var out []Finding
	for _, f := range Run(calls, &Options{Lint: true}).Lint {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

// pricedAgent is the test kit's agent on a model the table prices, its
// date block kept still.
func pricedAgent() *fakecache.Agent {
	a := fakecache.NewAgent()
	a.Model = "claude-opus-4-8"
	return a
}

// one checks there is one finding, with a fix and a saving in tokens and
// money.
func one(t *testing.T, fs []Finding, path string) Finding {
	t.Helper()
	if len(fs) != 1 {
		t.Fatalf("%d findings, want 1: %+v", len(fs), fs)
	}
	f := fs[0]
	if f.Fix == "" || f.SavingTokens <= 0 || f.SavingCost <= 0 || f.Session != "s" || f.Model == "" || path != "" && f.Path != path {
		t.Errorf("finding %+v: want a fix, a saving in tokens and money, the session, the model, path %q", f, path)
	}
	return f
}

func TestLintVolatile(t *testing.T) {
	clock := func(i int, a *fakecache.Agent) {
		if i >= 0 {
			a.System[2]["text"] = fmt.Sprintf("The date is 2026-12-07T09:%02d:00Z. The working directory is /src/app.", i)
		}
	}
	// The breakpoint on the conversation's end is behind the date block.
	f := one(t, lintOf(t, agentRun(t, pricedAgent(), 5, time.Minute, clock), "volatile"), "/system/2")
	if !strings.Contains(f.Message, "every call") || !strings.Contains(f.Fix, "after the last breakpoint") {
		t.Errorf("finding: %+v", f)
	}
	var text strings.Builder
	an := Run(agentRun(t, pricedAgent(), 5, time.Minute, clock), &Options{Lint: true})
	if err := an.WriteText(&text, "t"); err != nil || !strings.Contains(text.String(), "  fix: "+f.Fix) ||
		!strings.Contains(text.String(), fmt.Sprintf("  saving over session s: %s tokens, %s", thousands(f.SavingTokens), dollars(f.SavingCost))) {
		t.Errorf("text: %v\n%s", err, text.String())
	}
	// A tool reordered on one call hides the date from that call's
	// blame, not from the lint.
	swapped := func(i int, a *fakecache.Agent) {
		clock(i, a)
		if i == 2 {
			a.Tools[0], a.Tools[1] = a.Tools[1], a.Tools[0]
		}
	}
	if f := one(t, lintOf(t, agentRun(t, pricedAgent(), 5, time.Minute, swapped), "volatile"), "/system/2"); f.Calls != 5 {
		t.Errorf("finding: %+v", f)
	}
	if fs := lintOf(t, agentRun(t, pricedAgent(), 5, time.Minute, nil), "volatile"); len(fs) != 0 {
		t.Errorf("a still date block: %+v", fs)
	}
	// Changed on some calls only: not every call.
	some := func(i int, a *fakecache.Agent) {
		if i == 2 {
			clock(i, a)
		}
	}
	if fs := lintOf(t, agentRun(t, pricedAgent(), 5, time.Minute, some), "volatile"); len(fs) != 0 {
		t.Errorf("one change: %+v", fs)
	}
}

func TestLintTools(t *testing.T) {
	swap := func(i int, a *fakecache.Agent) {
		if i == 2 {
			a.Tools[0], a.Tools[1] = a.Tools[1], a.Tools[0]
		}
	}
	f := one(t, lintOf(t, agentRun(t, pricedAgent(), 4, time.Minute, swap), "tool-order"), "")
	if f.Calls != 1 {
		t.Errorf("reordered once: %+v", f)
	}
	describe := func(i int, a *fakecache.Agent) {
		if i > 0 {
			a.Tools[5]["description"] = fmt.Sprintf("Tool five, version %d.", i)
		}
	}
	f = one(t, lintOf(t, agentRun(t, pricedAgent(), 4, time.Minute, describe), "tools-changed"), "/tools/5")
	if f.Calls != 3 {
		t.Errorf("re-described on three calls: %+v", f)
	}
	if fs := lintOf(t, agentRun(t, pricedAgent(), 4, time.Minute, nil), "tools-changed"); len(fs) != 0 {
		t.Errorf("the same tools: %+v", fs)
	}
}

func TestLintTailBreakpoint(t *testing.T) {
	unmark := func(i int, a *fakecache.Agent) {
		if i == -1 {
			for _, m := range a.Messages {
				for _, b := range m["content"].([]map[string]any) {
					delete(b, "cache_control")
				}
			}
		}
	}
	// Long turns, so that the conversation is worth caching.
	a := pricedAgent()
	calls := agentRun(t, a, 6, time.Minute, func(i int, a *fakecache.Agent) {
		if i > 0 {
			a.Answer(strings.Repeat("Here is what the file says. ", 60))
		}
		unmark(i, a)
	})
	f := one(t, lintOf(t, calls, "tail-breakpoint"), "/system/1")
	if !strings.Contains(f.Fix, "newest message") {
		t.Errorf("fix: %s", f.Fix)
	}
	if fs := lintOf(t, agentRun(t, pricedAgent(), 6, time.Minute, nil), "tail-breakpoint"); len(fs) != 0 {
		t.Errorf("the breakpoint moves with the conversation: %+v", fs)
	}
}

func TestLintTTLOrder(t *testing.T) {
	order := func(tools, system string) func(int, *fakecache.Agent) {
		return func(i int, a *fakecache.Agent) {
			if i == 0 {
				a.Tools[11]["cache_control"] = map[string]any{"type": "ephemeral", "ttl": tools}
				a.System[1]["cache_control"] = map[string]any{"type": "ephemeral", "ttl": system}
			}
			if i == 2 {
				// From the third call on, the 1-hour mark comes after the
				// 5-minute one.
				a.Tools[11]["cache_control"] = map[string]any{"type": "ephemeral", "ttl": system}
				a.System[1]["cache_control"] = map[string]any{"type": "ephemeral", "ttl": tools}
			}
		}
	}
	f := one(t, lintOf(t, agentRun(t, pricedAgent(), 4, time.Minute, order("1h", "5m")), "ttl-order"), "/system/1")
	if f.Calls != 2 {
		t.Errorf("two refused calls: %+v", f)
	}
	if fs := lintOf(t, agentRun(t, pricedAgent(), 4, time.Minute, order("1h", "1h")), "ttl-order"); len(fs) != 0 {
		t.Errorf("one lifetime: %+v", fs)
	}
}

func TestLintTTLFall(t *testing.T) {
	lifetimes := func(fall bool) func(int, *fakecache.Agent) {
		return func(i int, a *fakecache.Agent) {
			ttl := "1h"
			if fall && i >= 2 {
				ttl = "5m"
			}
			if i >= 0 {
				a.Tools[11]["cache_control"] = map[string]any{"type": "ephemeral", "ttl": ttl}
				a.System[1]["cache_control"] = map[string]any{"type": "ephemeral", "ttl": ttl}
			}
			if i == -1 {
				last := a.Messages[len(a.Messages)-1]["content"].([]map[string]any)[0]
				last["cache_control"] = a.System[1]["cache_control"]
			}
		}
	}
	// Ten minutes apart: a 5-minute entry is gone, a 1-hour one is not.
	f := one(t, lintOf(t, agentRun(t, pricedAgent(), 5, 10*time.Minute, lifetimes(true)), "ttl-fall"), "")
	if !strings.Contains(f.Message, "call c") {
		t.Errorf("the fall is at the third call: %s", f.Message)
	}
	if fs := lintOf(t, agentRun(t, pricedAgent(), 5, 10*time.Minute, lifetimes(false)), "ttl-fall"); len(fs) != 0 {
		t.Errorf("1h throughout: %+v", fs)
	}
}

func TestLintMinimum(t *testing.T) {
	// Claude Opus 4.5's minimum is 4,096 tokens: the agent's tools and
	// system are under it, its conversation grows past it.
	a := pricedAgent()
	a.Model = "claude-opus-4-5"
	// Its only breakpoints are those two: nothing is ever cached.
	calls := agentRun(t, a, 5, time.Minute, func(i int, a *fakecache.Agent) {
		if i > 0 {
			a.Answer(strings.Repeat("Here is what the file says. ", 200))
		}
		if i == -1 {
			delete(a.Messages[len(a.Messages)-1]["content"].([]map[string]any)[0], "cache_control")
		}
	})
	one(t, lintOf(t, calls, "minimum"), "/tools/11")
	if fs := lintOf(t, agentRun(t, pricedAgent(), 5, time.Minute, nil), "minimum"); len(fs) != 0 {
		t.Errorf("past the minimum: %+v", fs)
	}
}

func TestLintContextWindow(t *testing.T) {
	m, err := newManifest([]byte(`{"model":"claude-haiku-4-5","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`), payload.Anthropic, nil)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	call := func(name string, input int) Call {
		return Call{Name: name, Session: "s", At: at, Request: m, Reported: &payload.Usage{InputTokens: input}}
	}
	p, err := ReadPrices([]byte(`{"taken":"2026-12-07","models":[{"provider":"anthropic","model":"claude-haiku-4-5","input":1,"output":5,"cache_read":0.1,"cache_write":{"5m":1.25,"1h":2}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var fs []Finding
	for _, f := range Run([]Call{call("a", 1000), call("b", 250_000), call("c", 260_000)}, &Options{Lint: true, Prices: p}).Lint {
		if f.Rule == "context-window" {
			fs = append(fs, f)
		}
	}
	f := one(t, fs, "")
	// 110,000 tokens past the window, at a dollar a million.
	if f.Calls != 2 || f.SavingTokens != 110_000 || f.SavingCost != 110_000 {
		t.Errorf("finding: %+v", f)
	}
	if fs := lintOf(t, []Call{call("a", 1000), call("b", 199_000)}, "context-window"); len(fs) != 0 {
		t.Errorf("within the window: %+v", fs)
	}
}

// On an implicit cache the minimum is the whole request's: a session of
// short requests is found, with nothing to save; a long request is not,
// even in GPT-5.6's explicit mode with no marker (blamed, but not short).
func TestLintMinimumImplicit(t *testing.T) {
	req := func(model, extra, text string) *request.Manifest {
		m, err := newManifest([]byte(`{"model":"`+model+`"`+extra+`,"messages":[{"role":"user","content":"`+text+`"}]}`), payload.OpenAIChat, nil)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	at := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	session := func(m *request.Manifest) []Call {
		return []Call{{Name: "a", Session: "s", At: at, Request: m}, {Name: "b", Session: "s", At: at.Add(time.Second), Request: m}}
	}
	fs := lintOf(t, session(req("gpt-5.4", "", "hi")), "minimum")
	if len(fs) != 1 || fs[0].Path != "" || fs[0].Calls != 2 || !strings.Contains(fs[0].Message, "1,024-token minimum") {
		t.Errorf("short requests: %+v", fs)
	}
	long := strings.Repeat("Read the whole file before you change it. ", 200)
	explicit := session(req("gpt-5.6-sol", `,"prompt_cache_options":{"mode":"explicit"}`, long))
	if v := Run(explicit, nil).Verdicts[0]; len(v.Blame) == 0 || v.Blame[0].Kind != "minimum" {
		t.Fatalf("explicit mode with no marker is blamed minimum: %+v", v.Blame)
	}
	if fs := lintOf(t, explicit, "minimum"); len(fs) != 0 {
		t.Errorf("a long request in explicit mode: %+v", fs)
	}
}
