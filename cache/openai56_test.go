package cache

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/request"
)

func TestGPT56ByName(t *testing.T) {
	for model, want := range map[string]bool{
		"gpt-5.6": true, "gpt-5.6-mini": true, "gpt-5.10": true, "gpt-6": true, "GPT-6.1": true, "gpt-6o": true,
		"gpt-5.5": false, "gpt-5.5-pro": false, "gpt-5": false, "gpt-4o": false, "gpt-4.1": false, "o3": false, "": false,
	} {
		if got := gpt56(&request.Manifest{Model: model}); got != want {
			t.Errorf("gpt56(%q) = %v, want %v", model, got, want)
		}
	}
}

// msg is a Chat Completions message of one text block; marked puts a
// prompt_cache_breakpoint on it.
type msg struct {
	role, text string
	marked     bool
}

func chat56(t *testing.T, mode string, msgs ...msg) *request.Manifest {
	t.Helper()
	var out []string
	for _, m := range msgs {
		block := map[string]any{"type": "text", "text": m.text}
		if m.marked {
			block["prompt_cache_breakpoint"] = map[string]string{"mode": "explicit"}
		}
		b, _ := json.Marshal(map[string]any{"role": m.role, "content": []any{block}})
		out = append(out, string(b))
	}
	opts := ""
	if mode != "" {
		opts = fmt.Sprintf(`"prompt_cache_options":{"mode":%q},`, mode)
	}
	m, err := newManifest([]byte(`{"model":"gpt-5.6",`+opts+`"messages":[`+strings.Join(out, ",")+`]}`), payload.OpenAIChat, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// tokensThrough is the manifest's tokens through the block at path.
func tokensThrough(t *testing.T, m *request.Manifest, path string) int {
	t.Helper()
	n := 0
	for _, s := range m.Segments {
		n += s.Tokens
		if s.Path == path {
			return n
		}
	}
	t.Fatalf("no segment %s", path)
	return 0
}

func run56(ms []*request.Manifest, gaps ...time.Duration) []Verdict {
	at := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	var calls []Call
	for i, m := range ms {
		if i > 0 {
			gap := time.Minute
			if i-1 < len(gaps) {
				gap = gaps[i-1]
			}
			at = at.Add(gap)
		}
		calls = append(calls, Call{Name: fmt.Sprint(i + 1), At: at, Request: m})
	}
	return Run(calls, nil).Verdicts
}

var long56 = strings.Repeat("You are a careful agent who reads files first. ", 200) // about 2,000 tokens

// Implicit mode: each request writes at the end of its latest eligible
// message (a user message here); the next turn reads that entry exactly,
// not rounded to a step, and pays to write the rest.
func TestGPT56ImplicitReadsTheLastUserMessage(t *testing.T) {
	one := chat56(t, "", msg{role: "developer", text: long56}, msg{role: "user", text: "one"})
	two := chat56(t, "", msg{role: "developer", text: long56}, msg{role: "user", text: "one"},
		msg{role: "assistant", text: "done"}, msg{role: "user", text: "two"})
	v := run56([]*request.Manifest{one, two})
	through := tokensThrough(t, two, "/messages/1/content/0")
	if v[0].Predicted.Read != 0 || v[0].Predicted.Write != tokensThrough(t, one, "/messages/1/content/0") {
		t.Errorf("first call: %+v", v[0])
	}
	if v[1].Predicted.Read != through || v[1].ReadThrough != "/messages/1/content/0" {
		t.Errorf("second call read %d through %q, want %d through /messages/1/content/0", v[1].Predicted.Read, v[1].ReadThrough, through)
	}
	if want := tokensThrough(t, two, "/messages/3/content/0") - through; v[1].Predicted.Write != want {
		t.Errorf("second call wrote %d, want %d", v[1].Predicted.Write, want)
	}
	if v[1].Estimate {
		t.Error("an o200k count labelled an estimate")
	}
	// Thirty minutes from the last write or read.
	if v := run56([]*request.Manifest{one, two}, 29*time.Minute); v[1].Predicted.Read == 0 {
		t.Errorf("within 30 minutes: %+v", v[1])
	}
	if v := run56([]*request.Manifest{one, two}, 31*time.Minute); v[1].Predicted.Read != 0 {
		t.Errorf("after 30 minutes: %+v", v[1])
	}
	// An assistant message is not eligible: a request that ends with one
	// writes at the user message before it.
	three := chat56(t, "", msg{role: "developer", text: long56}, msg{role: "user", text: "one"}, msg{role: "assistant", text: "done"})
	if b := breakpoints56(three, blocks(three, openai{}.settings(), 1)); len(b.writes) != 1 || b.writes[0] != 1 {
		t.Errorf("writes of a request ending with an assistant message: %v", b.writes)
	}
}

// Explicit mode: only markers write and are looked up; with none, nothing
// is cached; an implicit-mode entry is not seen unless a marker sits on
// its boundary.
func TestGPT56ExplicitMode(t *testing.T) {
	dev := msg{role: "developer", text: long56, marked: true}
	one := chat56(t, "explicit", dev, msg{role: "user", text: "one"})
	two := chat56(t, "explicit", dev, msg{role: "user", text: "two"})
	v := run56([]*request.Manifest{one, two})
	if want := tokensThrough(t, two, "/messages/0/content/0"); v[1].Predicted.Read != want || v[1].ReadThrough != "/messages/0/content/0" {
		t.Errorf("a marked developer message: %+v, want a read of %d", v[1], want)
	}
	if v[1].Predicted.Write != 0 {
		t.Errorf("nothing past the marker is written: %+v", v[1])
	}

	bare := chat56(t, "explicit", msg{role: "developer", text: long56}, msg{role: "user", text: "one"})
	v = run56([]*request.Manifest{bare, bare})
	if v[1].Predicted.Read != 0 || v[1].Predicted.Write != 0 {
		t.Errorf("explicit mode with no marker: %+v", v[1])
	}
	if fs := lint(bare, nil, nil); !hasRule(fs, "no-breakpoint") {
		t.Errorf("lint of explicit mode with no marker: %v", fs)
	}

	implicit := chat56(t, "", msg{role: "developer", text: long56}, msg{role: "user", text: "one"})
	v = run56([]*request.Manifest{implicit, two})
	if v[1].Predicted.Read != 0 {
		t.Errorf("an explicit request read an implicit entry off its markers: %+v", v[1])
	}
}

// The limits: four writes (the implicit one and the latest three
// markers), and the minimum.
func TestGPT56Limits(t *testing.T) {
	var ms []msg
	for i := range 6 {
		ms = append(ms, msg{role: "user", text: fmt.Sprintf("%s part %d", long56, i), marked: true})
	}
	m := chat56(t, "", ms...)
	b := breakpoints56(m, blocks(m, openai{}.settings(), 1))
	if fmt.Sprint(b.writes) != "[3 4 5]" {
		t.Errorf("writes %v, want the latest three markers, the last of which is also the implicit one", b.writes)
	}
	if bps := Breakpoints(m, nil); len(bps) != 3 || bps[2].Path != "/messages/5/content/0" || bps[2].TTL != "30m" || !bps[2].Cached {
		t.Errorf("Breakpoints: %+v", bps)
	}
	if fs := lint(m, nil, nil); !hasRule(fs, "breakpoints") {
		t.Errorf("lint of six markers: %v", fs)
	}
	me := chat56(t, "explicit", ms...)
	if b := breakpoints56(me, blocks(me, openai{}.settings(), 1)); fmt.Sprint(b.writes) != "[2 3 4 5]" {
		t.Errorf("explicit mode writes %v, want the latest four", b.writes)
	}

	short := chat56(t, "", msg{role: "user", text: "hi"})
	v := run56([]*request.Manifest{short, short})
	if v[1].Predicted.Read != 0 || len(v[0].Blame) == 0 || v[0].Blame[0].Kind != "minimum" {
		t.Errorf("below 1,024 tokens: %+v", v)
	}

}

// Moving a marker changes no digest: OpenAI keys its cache on content.
func TestGPT56MarkerIsNotContent(t *testing.T) {
	a := chat56(t, "", msg{role: "developer", text: long56}, msg{role: "user", text: "one"})
	b := chat56(t, "", msg{role: "developer", text: long56, marked: true}, msg{role: "user", text: "one"})
	if a.Segments[0].Digest != b.Segments[0].Digest {
		t.Error("a prompt_cache_breakpoint changed the block's digest")
	}
	if b.Segments[0].Cache == nil || b.Segments[0].Cache.Type != "explicit" {
		t.Errorf("the marker was not read: %+v", b.Segments[0].Cache)
	}
	v := run56([]*request.Manifest{a, b})
	if v[1].Predicted.Read == 0 {
		t.Errorf("a marker added on the same content lost the entry: %+v", v[1])
	}
}

func hasRule(fs []Finding, rule string) bool {
	for _, f := range fs {
		if f.Rule == rule {
			return true
		}
	}
	return false
}

// Responses' input as one string is one user message: its end is the
// implicit breakpoint.
func TestGPT56ResponsesStringInput(t *testing.T) {
	m, err := newManifest([]byte(`{"model":"gpt-5.6","input":`+fmt.Sprintf("%q", long56)+`}`), payload.OpenAIResponses, nil)
	if err != nil {
		t.Fatal(err)
	}
	if bps := Breakpoints(m, nil); len(bps) != 1 || bps[0].Path != "/input" {
		t.Errorf("Breakpoints: %+v, want the implicit one at /input", bps)
	}
	if v := run56([]*request.Manifest{m, m}); v[1].Predicted.Read == 0 || v[1].ReadThrough != "/input" {
		t.Errorf("a second identical call: %+v", v[1])
	}
}

// A marker is read only where OpenAI takes one, on message content: on a
// tool definition it is neither a breakpoint nor a reason to fail the
// body; on an assistant's image it is a lint warning.
func TestGPT56MarkerPlaces(t *testing.T) {
	for _, mark := range []string{`{"mode":"explicit"}`, `true`} {
		body := `{"model":"gpt-4o","tools":[{"type":"function","function":{"name":"f"},"prompt_cache_breakpoint":` + mark + `}],"messages":[{"role":"user","content":"hi"}]}`
		m, err := newManifest([]byte(body), payload.OpenAIChat, nil)
		if err != nil {
			t.Fatalf("a marker on a tool: %v", err)
		}
		if m.Segments[0].Cache != nil || gpt56(m) {
			t.Errorf("a marker on a tool read as a breakpoint: %+v", m.Segments[0])
		}
	}
	m, err := newManifest([]byte(`{"model":"gpt-5.6","messages":[{"role":"assistant","content":[{"type":"image_url","image_url":{"url":"x"},"prompt_cache_breakpoint":{"mode":"explicit"}}]}]}`), payload.OpenAIChat, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fs := lint(m, nil, nil); !hasRule(fs, "mark-place") {
		t.Errorf("a marker on an assistant's image: %v", fs)
	}
	if fs := lint(chat56(t, "", msg{role: "user", text: long56, marked: true}), nil, nil); hasRule(fs, "mark-place") {
		t.Errorf("a marker on a user's text: %v", fs)
	}
}

// A written breakpoint below the minimum caches nothing, and the API says
// nothing: lint says it, as on Anthropic; one above it is no warning.
func TestGPT56BreakpointBelowTheMinimum(t *testing.T) {
	short := chat56(t, "", msg{role: "developer", text: "Be brief.", marked: true}, msg{role: "user", text: "one"})
	if fs := lint(short, nil, nil); !hasRule(fs, "minimum") {
		t.Errorf("a marker on a prefix of a few tokens: %v", fs)
	}
	long := chat56(t, "", msg{role: "developer", text: long56, marked: true}, msg{role: "user", text: "one"})
	if fs := lint(long, nil, nil); hasRule(fs, "minimum") {
		t.Errorf("a marker past the minimum: %v", fs)
	}
}

// The cache column shows a breakpoint's lifetime as its provider's model
// reads it: GPT-5.6's 30 minutes, not Anthropic's default of 5.
func TestGPT56CacheColumn(t *testing.T) {
	m := chat56(t, "", msg{role: "developer", text: long56, marked: true}, msg{role: "user", text: "one"})
	var b strings.Builder
	if err := Explain(m, nil, nil, false).WriteText(&b, "body.json"); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.Contains(line, m.Segments[0].Path+" ") && (!strings.Contains(line, " 30m ") || strings.Contains(line, " 5m ")) {
			t.Errorf("the marked segment's line: %q", line)
		}
	}
}
