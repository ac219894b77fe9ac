package cache

import (
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom/internal/testkit/fakecache"
	"github.com/promptloom/promptloom/payload"
)

// A counted prompt is the tokenizer's: another provider's report in the
// same transcript does not rescale it, and an estimate is scaled by its
// own provider's reports only.
func TestCountedTokensAreNotScaled(t *testing.T) {
	long := strings.Repeat("You are a careful agent who reads files first. ", 200)
	oai := chat(t, "", long, "one")
	if oai.Counter == "estimate" {
		t.Fatalf("gpt-4o's prompt is counted by %s, want its public tokenizer", oai.Counter)
	}
	claude, err := newManifest([]byte(`{"model":"claude-sonnet-4-5","system":"Be brief.","messages":[{"role":"user","content":"hi"}]}`), payload.Anthropic, nil)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	// Anthropic reports a prompt ten times its estimate.
	big := &payload.Usage{InputTokens: 10 * claude.Tokens}
	v := Run([]Call{
		{Name: "claude", At: at, Request: claude, Reported: big},
		{Name: "gpt", At: at.Add(time.Second), Request: oai},
		{Name: "claude-2", At: at.Add(2 * time.Second), Request: claude},
	}, nil).Verdicts
	if v[1].InputTokens != oai.Tokens {
		t.Errorf("gpt-4o's counted %d tokens became %d", oai.Tokens, v[1].InputTokens)
	}
	if v[2].InputTokens != 10*claude.Tokens {
		t.Errorf("an unreported Anthropic call is %d tokens, want its provider's mean scale (%d)", v[2].InputTokens, 10*claude.Tokens)
	}
}

// A call that shares nothing with any earlier call is blamed on a change
// only against its own session's previous call: another conversation was
// never its cache.
func TestBlameStaysInItsConversation(t *testing.T) {
	fake := newFake(1024)
	a := fakecache.NewAgent()
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	var calls []Call
	send := func(name, session string, body []byte) {
		m, err := newManifest(body, payload.Anthropic, nil)
		if err != nil {
			t.Fatal(err)
		}
		u := fake.serve(t, body, now)
		calls = append(calls, Call{Name: name, Session: session, At: now, Began: now.Add(time.Second), Request: m, Reported: &u})
		now = now.Add(10 * time.Second)
	}
	send("a1", "a", a.Turn(strings.Repeat("Look at the parser. ", 20)))
	a.Answer("It parses.")
	send("b1", "b", []byte(`{"model":"claude-sonnet-4-5","max_tokens":100,"system":"Translate to French.","messages":[{"role":"user","content":"hello"}]}`))
	a.Tools[0]["description"] = "Read a file, then say what it holds."
	send("a2", "a", a.Turn("And the lexer?"))
	v := Run(calls, nil).Verdicts
	for _, b := range v[1].Blame {
		if b.Kind == "change" {
			t.Errorf("b1 blamed on a1, another conversation: %+v", b)
		}
	}
	if len(v[2].Blame) == 0 || v[2].Blame[0].Kind != "change" || v[2].Blame[0].Path != "/tools/0" || v[2].Blame[0].Since != "a1" {
		t.Errorf("a2 after its first tool was edited: %+v", v[2].Blame)
	}
}

// A read no earlier call of the transcript could have written is said,
// not taken as agreement: the first call of a run reported reading 1,500
// tokens.
func TestAReadMoreThanPredictedIsSaid(t *testing.T) {
	m, err := newManifest([]byte(`{"model":"claude-sonnet-4-5","system":"`+strings.Repeat("Be brief. ", 700)+`","messages":[{"role":"user","content":"hi"}]}`), payload.Anthropic, nil)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	v := Run([]Call{{Name: "1", At: at, Request: m, Reported: &payload.Usage{InputTokens: 300, CacheReadTokens: 1500}}}, nil).Verdicts[0]
	if len(v.Blame) != 1 || v.Blame[0].Kind != "unexplained" || !strings.Contains(v.Blame[0].Reason, "1500 more than its rules predict") {
		t.Errorf("%+v", v)
	}
}

// --since another provider's request compares nothing, and says so.
func TestLintSinceAnotherProvider(t *testing.T) {
	claude, _ := newManifest([]byte(`{"model":"claude-sonnet-4-5","system":"x","messages":[{"role":"user","content":"hi"}]}`), payload.Anthropic, nil)
	gpt := chat(t, "", "x", "hi")
	found := false
	for _, f := range lint(claude, gpt, nil) {
		found = found || f.Rule == "since"
	}
	if !found {
		t.Errorf("lint: %v", lint(claude, gpt, nil))
	}
}
