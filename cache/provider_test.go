package cache

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom/internal/testkit/fakecache"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/request"
)

// diagnose is Anthropic's cache diagnostics as its documentation states
// them, written apart from promptloom's manifests: the first of model,
// tools, system and messages (the earlier turns, as the request before
// sent them) that is not what the previous request sent, marks left out.
// "" when nothing diverged.
func diagnose(t *testing.T, prev, cur []byte) string {
	t.Helper()
	read := func(b []byte) map[string]any {
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	var unmark func(any) any
	unmark = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, e := range x {
				if k != "cache_control" {
					out[k] = unmark(e)
				}
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = unmark(e)
			}
			return out
		}
		return v
	}
	a, b := read(prev), read(cur)
	switch {
	case a["model"] != b["model"]:
		return "model_changed"
	case !reflect.DeepEqual(unmark(a["tools"]), unmark(b["tools"])):
		return "tools_changed"
	case !reflect.DeepEqual(unmark(a["system"]), unmark(b["system"])):
		return "system_changed"
	}
	am, bm := unmark(a["messages"]).([]any), unmark(b["messages"]).([]any)
	if len(bm) < len(am) || !reflect.DeepEqual(am, bm[:len(am)]) {
		return "messages_changed"
	}
	return ""
}

// answer is an Anthropic message as a fake upstream answers, with its
// usage and, when reason is set, its cache diagnostics.
func answer(id string, u payload.Usage, reason string) []byte {
	diag := ""
	if reason != "" {
		diag = fmt.Sprintf(`,"diagnostics":{"cache_miss_reason":{"type":%q,"cache_missed_input_tokens":%d}}`, reason, u.CacheWriteTokens)
	}
	return fmt.Appendf(nil, `{"id":%q,"type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"model":"claude-sonnet-4-5","stop_reason":"end_turn","usage":{"input_tokens":%d,"output_tokens":1,"cache_read_input_tokens":%d,"cache_creation_input_tokens":%d}%s}`,
		id, u.InputTokens, u.CacheReadTokens, u.CacheWriteTokens, diag)
}

// An agent's run against a fake upstream that answers with Anthropic's
// cache diagnostics: where both speak, promptloom's place for the change
// agrees with the provider's reason (an edited tool: tools_changed beside
// /tools/3), and a planted disagreement is listed as one, in text and in
// JSON.
func TestTheProvidersVerdictBesidePromptlooms(t *testing.T) {
	fake := newFake(1024)
	a := fakecache.NewAgent()
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	var calls []Call
	var prev []byte
	send := func(name string, body []byte, plant string) {
		m, err := newManifest(body, payload.Anthropic, nil)
		if err != nil {
			t.Fatal(err)
		}
		u := fake.serve(t, body, now)
		reason := ""
		if prev != nil {
			reason = diagnose(t, prev, body)
		}
		if plant != "" {
			reason = plant
		}
		// The answer goes through payload, as the transport reads it.
		sum, whole := payload.Summarize(payload.Anthropic, answer("msg_"+name, u, reason), false)
		if !whole || sum.Usage == nil || sum.Usage.CacheMissReason != reason {
			t.Fatalf("call %s: the answer reads as %+v", name, sum.Usage)
		}
		calls = append(calls, Call{Name: name, Session: "s", At: now, Began: now.Add(time.Second), Request: m, Reported: sum.Usage})
		prev = body
		now = now.Add(30 * time.Second)
	}
	send("1", a.Turn(strings.Repeat("Please look at the parser and tell me what it does. ", 3)), "")
	a.Answer("It parses.")
	send("2", a.Turn("And the lexer?"), "")
	a.Answer("It lexes.")
	a.Tools[3]["description"] = "Run a shell command, carefully."
	send("3", a.Turn("Now run the tests."), "")
	a.Answer("They pass.")
	a.System[2]["text"] = "The date is 2026-12-03T10:02:00Z. The working directory is /src/app."
	send("4", a.Turn("Commit it."), "")
	a.Answer("Done.")
	a.Tools[5]["description"] = "Tool 5, reworded."
	send("5", a.Turn("And the docs."), "system_changed") // planted: the tools changed
	a.Answer("Written.")
	send("6", a.Turn("Thanks."), "")

	an := Run(calls, nil)
	want := []struct {
		reason string
		agrees string // "yes", "no", "" (nothing held together)
		found  string
	}{
		{"", "", ""},
		{"", "", ""},
		{"tools_changed", "yes", "/tools/3 (tools): tool Bash: description changed"},
		{"system_changed", "yes", "/system/2 (system)"},
		{"system_changed", "no", "/tools/5 (tools)"},
		{"", "", ""},
	}
	for i, v := range an.Verdicts {
		w := want[i]
		agrees := ""
		if v.Agrees != nil {
			agrees = map[bool]string{true: "yes", false: "no"}[*v.Agrees]
		}
		if v.ProviderReason != w.reason || agrees != w.agrees || !strings.HasPrefix(v.Found, w.found) {
			t.Errorf("call %s: provider %q, agrees %q, found %q; want %q, %q, %q", v.Call, v.ProviderReason, agrees, v.Found, w.reason, w.agrees, w.found)
		}
		if v.Agrees != nil && v.ProviderSince != fmt.Sprint(i) {
			t.Errorf("call %s: held to call %q, want the one before it", v.Call, v.ProviderSince)
		}
	}
	// The blame for the edited tool stands beside the provider's verdict.
	if b := an.Verdicts[2].Blame; len(b) != 1 || b[0].Path != "/tools/3" {
		t.Errorf("call 3's blame: %+v", b)
	}
	s := an.Summary
	if s.Agreements != 2 || len(s.Disagreements) != 1 || !strings.HasPrefix(s.Disagreements[0], "call 5 (line 0): the provider says system_changed") ||
		!strings.Contains(s.Disagreements[0], "/tools/5 (tools)") || !strings.HasSuffix(s.Disagreements[0], "they disagree") {
		t.Errorf("agreements %d, disagreements %q", s.Agreements, s.Disagreements)
	}

	var text bytes.Buffer
	if err := an.WriteText(&text, "run.jsonl"); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"  provider: the provider says tools_changed (about ",
		"the provider's own verdicts beside promptloom's: 2 agree, 1 disagree\n",
		"  disagreement: call 5 (line 0): the provider says system_changed",
	} {
		if !strings.Contains(text.String(), line) {
			t.Errorf("the text lacks %q:\n%s", line, text.String())
		}
	}
	var js bytes.Buffer
	if err := an.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Calls []struct {
			Reason string `json:"provider_reason"`
			Agrees *bool  `json:"agrees"`
		} `json:"calls"`
		Summary struct {
			Agreements    int      `json:"agreements"`
			Disagreements []string `json:"disagreements"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Summary.Agreements != 2 || len(got.Summary.Disagreements) != 1 || got.Calls[2].Reason != "tools_changed" || got.Calls[2].Agrees == nil || !*got.Calls[2].Agrees || got.Calls[0].Agrees != nil {
		t.Errorf("JSON: %s", js.String())
	}
}

// What each kind of verdict is held to: a conclusive one to where the
// request leaves the call before it; an inconclusive one, or one on a
// first call, to nothing.
func TestVerdictsHeldToTheCallBefore(t *testing.T) {
	body := func(model, tool, system, user string) *request.Manifest {
		m, err := newManifest(fmt.Appendf(nil, `{"model":%q,"tools":[{"name":%q,"input_schema":{"type":"object"}}],"system":%q,"messages":[{"role":"user","content":%q}]}`, model, tool, system, user), payload.Anthropic, nil)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	base := body("claude-sonnet-4-5", "Read", "Be brief.", "hi")
	for _, c := range []struct {
		name   string
		next   *request.Manifest
		reason string
		agrees string
	}{
		{"model, model_changed", body("claude-opus-5", "Read", "Be brief.", "hi"), "model_changed", "yes"},
		{"model, tools_changed", body("claude-opus-5", "Read", "Be brief.", "hi"), "tools_changed", "no"},
		{"messages, messages_changed", body("claude-sonnet-4-5", "Read", "Be brief.", "bye"), "messages_changed", "yes"},
		{"nothing, messages_changed", base, "messages_changed", "no"},
		{"tools, unavailable", body("claude-sonnet-4-5", "Write", "Be brief.", "hi"), "unavailable", ""},
		{"tools, previous_message_not_found", body("claude-sonnet-4-5", "Write", "Be brief.", "hi"), "previous_message_not_found", ""},
		{"nothing, cache_hit", base, "cache_hit", "yes"},
		{"system, cache_hit", body("claude-sonnet-4-5", "Read", "Be long.", "hi"), "cache_hit", "no"},
	} {
		at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
		calls := []Call{
			{Name: "a", Session: "s", At: at, Request: base, Reported: &payload.Usage{InputTokens: 10, CacheMissReason: "tools_changed"}},
			{Name: "b", Session: "s", At: at.Add(time.Second), Request: c.next, Reported: &payload.Usage{InputTokens: 10, CacheMissReason: c.reason}},
		}
		an := Run(calls, nil)
		if v := an.Verdicts[0]; v.Agrees != nil || v.ProviderReason != "tools_changed" || !strings.Contains(v.String(), "no call before it in its session") {
			t.Errorf("%s: the first call is held to something: %+v", c.name, v)
		}
		v := an.Verdicts[1]
		agrees := ""
		if v.Agrees != nil {
			agrees = map[bool]string{true: "yes", false: "no"}[*v.Agrees]
		}
		if agrees != c.agrees {
			t.Errorf("%s: agrees %q (found %q), want %q", c.name, agrees, v.Found, c.agrees)
		}
		if c.agrees == "" && !strings.Contains(v.String(), "it concludes nothing") {
			t.Errorf("%s: %s", c.name, v.String())
		}
	}
}
