package assemble

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"strconv"
	"strings"
	"testing"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/payload"
)

func small() *Conversation {
	return &Conversation{Provider: payload.Anthropic, Model: "claude-sonnet-4-5", Window: 10000, OutputReserve: 1000,
		Tools: []Tool{{Name: "Bash", Description: "Run a command."}},
		Turns: []Turn{
			{ID: "u1", Kind: User, Text: "Do it."},
			{ID: "c1", Kind: ToolCall, Call: "x1", Tool: "Bash", Input: []byte(`{"cmd":"ls"}`), Register: budget.Considered},
			{ID: "r1", Kind: ToolResult, Call: "x1", Text: "a b c", Register: budget.Considered},
		}}
}

// Each unusable input is an *Error that names the part and the field.
func TestInvalid(t *testing.T) {
	for _, tc := range []struct {
		name      string
		edit      func(c *Conversation)
		id, field string
	}{
		{"provider", func(c *Conversation) { c.Provider = "bedrock" }, "", "provider"},
		{"model", func(c *Conversation) { c.Model = "" }, "", "model"},
		{"window", func(c *Conversation) { c.Window = 0 }, "", "window"},
		{"reserve", func(c *Conversation) { c.OutputReserve = 10000 }, "", "output_reserve"},
		{"tool twice", func(c *Conversation) { c.Tools = append(c.Tools, c.Tools[0]) }, "tool:Bash", "name"},
		{"schema", func(c *Conversation) { c.Tools[0].Schema = []byte(`{"a":1,"a":2}`) }, "tool:Bash", "input_schema"},
		{"empty id", func(c *Conversation) { c.Turns[1].ID = "" }, "turns[1]", "id"},
		{"id twice", func(c *Conversation) { c.Turns[2].ID = "c1" }, "c1", "id"},
		{"kind", func(c *Conversation) { c.Turns[0].Kind = "system" }, "u1", "kind"},
		{"empty text", func(c *Conversation) { c.Turns[0].Text = "" }, "u1", "text"},
		{"orphan result", func(c *Conversation) { c.Turns[2].Call = "x9" }, "r1", "call"},
		{"input", func(c *Conversation) { c.Turns[1].Input = []byte(`[1]`) }, "c1", "input"},
		{"register", func(c *Conversation) { c.Turns[1].Register = 9 }, "c1", "register"},
	} {
		c := small()
		tc.edit(c)
		_, err := assembled(c, nil)
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrInvalid) || e.ID != tc.id || e.Field != tc.field {
			t.Errorf("%s: %v (%+v)", tc.name, err, e)
		}
	}
}

// Binding parts that cannot fit are ErrNoFit, not a panic or a body over
// the window.
func TestNoFit(t *testing.T) {
	c := small()
	c.Turns[0].Text = strings.Repeat("long task ", 5000)
	_, err := assembled(c, nil)
	if !errors.Is(err, ErrNoFit) || !strings.Contains(err.Error(), "turn u1") {
		t.Errorf("%v", err)
	}
}

// Tools and system alone over the window, with no turns, are ErrNoFit;
// with no turns that fit, a body with no messages.
func TestNoTurns(t *testing.T) {
	c := small()
	c.Turns = nil
	if r, err := assembled(c, nil); err != nil || !bytes.Contains(r.Body, []byte(`"messages":[]`)) {
		t.Errorf("%v", err)
	}
	c.Tools[0].Description = strings.Repeat("long ", 10000)
	if _, err := assembled(c, nil); !errors.Is(err, ErrNoFit) || !strings.Contains(err.Error(), "no turns") {
		t.Errorf("%v", err)
	}
}

// The same conversation gives the same bytes; the conversation one call
// longer starts with the same tools and system, and every call that does
// not compact extends the one before it.
func TestDeterministicAndPrefixStable(t *testing.T) {
	c := genSession(120, 200, 30000, 7)
	a, err := assembled(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := assembled(c, nil)
	if !bytes.Equal(a.Body, b.Body) {
		t.Fatal("two runs differ")
	}
	r := runSession(t, c, nil)
	for k := 1; k < len(r.calls); k++ {
		d := cache.Explain(r.calls[k].Request, nil, nil, false).After("", r.calls[k-1].Request)
		if d.Section == "tools" || d.Section == "system" {
			t.Errorf("call %d leaves the previous call's prefix in %s at %s", k, d.Section, d.Path)
		}
		if !compactedAt(r.results[k], k, r) && d.Index < len(r.calls[k-1].Request.Segments) {
			t.Errorf("call %d compacts nothing and leaves the previous prefix at %s: %s", k, d.Path, d.Reason)
		}
		if compactedAt(r.results[k], k, r) {
			// What the previous call had compacted is still there, byte for byte.
			var head int
			for _, bp := range r.results[k-1].Manifest.Breakpoints {
				if bp.TTL == "1h" {
					head = max(head, bp.Tokens)
				}
			}
			if d.SharedTokens < head*9/10 {
				t.Errorf("call %d shares %d tokens with the previous call, whose compacted head was %d", k, d.SharedTokens, head)
			}
		}
	}
}

// A tool call waiting for its result, the latest user turn and the task
// are never cut, however tight the window.
func TestBindingKept(t *testing.T) {
	c := genSession(60, 2000, 8000, 3)
	c.Window, c.OutputReserve = 9000, 1000
	last := len(c.Turns) - 1
	c.Turns = append(c.Turns[:last:last], Turn{ID: "pending", Kind: ToolCall, Call: "zz", Tool: "Bash", Input: []byte(`{}`), Register: budget.Generated})
	r, err := assembled(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkBinding(t, c, 0, r)
	for _, p := range r.Manifest.Parts {
		if p.ID == "pending" && (p.Status != Included || !strings.Contains(p.Reason, "waiting")) {
			t.Errorf("pending call: %+v", p)
		}
	}
}

// A summariser is asked only for turns a compaction may cut, and its
// summary is what is sent.
func TestSummarize(t *testing.T) {
	c := genSession(80, 200, 30000, 5)
	for i := range c.Turns {
		c.Turns[i].Summary = ""
	}
	asked := map[string]bool{}
	r, err := assembled(c, &Options{Summarize: func(t Turn) (string, error) {
		asked[t.ID] = true
		if t.Kind == ToolResult {
			return "summary of " + t.ID, nil
		}
		return "", nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range r.Manifest.Parts {
		if p.Status == Summarised {
			n++
			if !bytes.Contains(r.Body, []byte(`"summary of `+p.ID+`"`)) {
				t.Errorf("%s: summary not sent", p.ID)
			}
		}
	}
	if n == 0 || len(asked) >= len(c.Turns) {
		t.Errorf("%d summarised, %d asked of %d", n, len(asked), len(c.Turns))
	}
	_, err = assembled(c, &Options{Summarize: func(Turn) (string, error) { return "", errors.New("no model") }})
	if e := (*Error)(nil); !errors.As(err, &e) || e.Field != "summary" {
		t.Errorf("%v", err)
	}
}

// The other providers' bodies: every one reads back, fits, its manifest's
// paths are the body's, and it lints clean but for what a compaction
// changes on purpose.
func TestProviders(t *testing.T) {
	for _, tc := range []struct {
		p     payload.Provider
		model string
	}{{payload.OpenAIChat, "gpt-5.1"}, {payload.OpenAIResponses, "gpt-5.1"}, {payload.Gemini, "gemini-2.5-flash"}} {
		c := genSession(80, 200, 30000, 9)
		c.Provider, c.Model, c.Window = tc.p, tc.model, 30000
		r := runSession(t, c, nil)
		if compactions(r) == 0 {
			t.Errorf("%s: no compaction", tc.p)
		}
		for k, call := range r.calls {
			if call.Request.Tokens+c.OutputReserve > c.Window {
				t.Errorf("%s: call %d: %d tokens", tc.p, k, call.Request.Tokens)
			}
			if got := r.results[k].Manifest.Tokens; got < call.Request.Tokens {
				t.Errorf("%s: call %d: the manifest counts %d tokens, request %d", tc.p, k, got, call.Request.Tokens)
			}
			for _, f := range cache.Explain(call.Request, nil, nil, true).Lint {
				// A short conversation is below the cache's minimum:
				// nothing to assemble differently.
				if f.Rule != "minimum" {
					t.Errorf("%s: call %d: %v", tc.p, k, f)
				}
			}
			var body any
			if err := json.Unmarshal(r.results[k].Body, &body); err != nil {
				t.Fatal(err)
			}
			for _, pt := range r.results[k].Manifest.Parts {
				if pt.Path != "" && !resolves(body, pt.Path) {
					t.Errorf("%s: call %d: %s at %s, not in the body", tc.p, k, pt.ID, pt.Path)
				}
			}
		}
		t.Logf("%s: %d calls, %d compactions, predicted hit rate %.3f", tc.p, len(r.calls), compactions(r), r.an.Summary.PredictedHitRate)
	}
}

// Every part of the manifest says where it is, and the paths point at
// the body's blocks.
func TestManifestPaths(t *testing.T) {
	c := genSession(90, 200, 30000, 2)
	r, err := assembled(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := newManifest(r.Body, payload.Anthropic, nil)
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]bool{}
	for _, s := range m.Segments {
		paths[s.Path] = true
	}
	for _, p := range r.Manifest.Parts {
		if (p.Status == Dropped) != (p.Path == "") || p.Path != "" && !paths[p.Path] {
			t.Errorf("%s: %s at %q", p.ID, p.Status, p.Path)
		}
		if p.Digest == ([32]byte{}) {
			t.Errorf("%s: no digest", p.ID)
		}
	}
}

// The file form reads into the same conversation the generator built.
func TestReadRoundTrip(t *testing.T) {
	c := genSession(40, 200, 3000, 4)
	got, err := Read(fileOf(t, c))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := assembled(c, nil)
	b, err := assembled(got, nil)
	if err != nil || !bytes.Equal(a.Body, b.Body) {
		t.Errorf("read back: %v", err)
	}
	for _, tc := range []struct{ in, field string }{
		{`{"provider":"anthropic","provider":"openai-chat"}`, "provider"},
		{`{"provider":"anthropic","turnz":[]}`, ""},
		{`{"provider":"nope"}`, "provider"},
		{`{"provider":"anthropic","turns":[{"id":"a","register":"loud"}]}`, "register"},
	} {
		_, err := Read([]byte(tc.in))
		var e *Error
		if !errors.As(err, &e) || e.Field != tc.field {
			t.Errorf("%s: %v", tc.in, err)
		}
	}
}

// resolves says an RFC 6901 pointer (with no escapes) names a value of v.
func resolves(v any, ptr string) bool {
	for _, step := range strings.Split(ptr, "/")[1:] {
		switch x := v.(type) {
		case map[string]any:
			v = x[step]
		case []any:
			i, err := strconv.Atoi(step)
			if err != nil || i < 0 || i >= len(x) {
				return false
			}
			v = x[i]
		default:
			return false
		}
		if v == nil {
			return false
		}
	}
	return true
}

// A body Assemble wrote reads back into a conversation that assembles to
// the same bytes; a block it does not send is an error naming its path.
func TestFromRequest(t *testing.T) {
	c := genSession(60, 200, 30000, 8)
	c.Window = 1 << 20
	r, err := assembled(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	back, err := FromRequest(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	back.Window = c.Window
	again, err := assembled(back, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Body, r.Body) {
		t.Errorf("the body read back assembles otherwise:\n%s\n%s", r.Body[:200], again.Body[:200])
	}
	if len(back.Turns) != len(c.Turns) || back.OutputReserve != c.OutputReserve || back.Turns[2].Kind != c.Turns[2].Kind {
		t.Errorf("%d turns, reserve %d", len(back.Turns), back.OutputReserve)
	}
	_, err = FromRequest([]byte(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"image","source":{}}]}]}`))
	var e *Error
	if !errors.As(err, &e) || e.ID != "messages/0/content/0" || e.Field != "type" {
		t.Errorf("%v", err)
	}
}

// A compaction is priced at the model's cache rates: the table's for a
// listed model (gpt-6.2-sol writes for 30 minutes at 2.50 and reads at
// 0.10 against an input of 2), the provider's default otherwise, and the
// manifest says which.
func TestRatesOf(t *testing.T) {
	for _, c := range []struct {
		p                 payload.Provider
		model             string
		read, short, long float64
		note              string
	}{
		{payload.Anthropic, "claude-sonnet-5", 0.1, 1.25, 2, "claude-sonnet-5 in package cache's price table: a cache read 0.1x the input price, a write 1.25x (5 minutes) and 2x (1 hour)"},
		{payload.Anthropic, "claude-next", 0.1, 1.25, 2, "claude-next is not in package cache's price table: anthropic's default for it, a cache read 0.1x the input price, a write 1.25x (5 minutes) and 2x (1 hour)"},
		{payload.OpenAIResponses, "gpt-6.2-sol", 0.05, 1.25, 1.25, "gpt-6.2-sol in package cache's price table: a cache read 0.05x the input price, a write 1.25x"},
		{payload.OpenAIChat, "gpt-4o", 0.25, 1, 1, "gpt-4o is not in package cache's price table: openai-chat's default for it, a cache read 0.25x the input price, no write charge (a written token is billed as input)"},
		{payload.Gemini, "gemini-2.5-pro", 0.25, 1, 1, "gemini-2.5-pro is not in package cache's price table: gemini's default for it, a cache read 0.25x the input price, no write charge (a written token is billed as input)"},
	} {
		r := ratesOf(&Conversation{Provider: c.p, Model: c.model})
		if r.read != c.read || r.short != c.short || r.long != c.long || r.note != c.note {
			t.Errorf("%s %s: %+v", c.p, c.model, r)
		}
	}
}

// result is what Assemble returns, held together for the tests.
type result struct {
	Body     []byte
	Manifest *Manifest
}

// assembled is Assemble with its results held together.
func assembled(c *Conversation, o *Options) (*result, error) {
	body, m, err := Assemble(c, o)
	if err != nil {
		return nil, err
	}
	return &result{body, m}, nil
}

// The system fragments are the reducer's: a tool's guidance is sent with
// its tool and left out without it, and a fragment with no source is its
// id's.
func TestSystemFragmentsAreGatedOnTheTools(t *testing.T) {
	c := small()
	c.System = []promptloom.Fragment{{ID: "identity", Body: "You are careful."},
		promptloom.ToolGuidance("Bash", "Quote every path."), promptloom.ToolGuidance("Edit", "Edit one file at a time.")}
	r, err := assembled(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range r.Manifest.Parts {
		if p.Kind == "system" {
			got[p.ID] = p.Source + " " + p.Status
		}
	}
	want := map[string]string{"identity": "identity included", "tool:Bash.guidance": "tool:Bash included", "tool:Edit.guidance": "tool:Edit dropped"}
	if !maps.Equal(got, want) || !bytes.Contains(r.Body, []byte(`"You are careful.\n\nQuote every path."`)) {
		t.Errorf("parts %v, body %s", got, r.Body)
	}
}
