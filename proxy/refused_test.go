package proxy_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/internal/testkit/fakecache"
	"github.com/promptloom/promptloom/proxy"
	"github.com/promptloom/promptloom/transcript"
)

// A request the proxy refuses is a provider_call_refused line with its
// reason and the digest of what came (the body is not kept): in the
// session its header names when that is open, else in the proxy's
// session of refusals. The transcript verifies, and the page lists it.
func TestARefusalIsOnTheRecord(t *testing.T) {
	g := newRig(t, nil)
	a := fakecache.NewAgent()
	if code, out := g.post(t, "/v1/messages", a.Turn("Hello there."), "Promptloom-Session", "s1"); code != 200 {
		t.Fatalf("%d %s", code, out)
	}
	secret := "sk-ant-api03-" + strings.Repeat("z", 40)
	malformed := []byte(`{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"` + secret + `"}`)
	if code, _ := g.post(t, "/v1/messages", malformed, "Promptloom-Session", "s1", "Promptloom-Call", "broken"); code != 400 {
		t.Fatalf("a malformed body: %d", code)
	}
	noMessages := []byte(`{"model":"claude-sonnet-4-5","max_tokens":5,"messages":"none"}`)
	if code, _ := g.post(t, "/v1/messages", noMessages); code != 400 {
		t.Fatalf("a body without a session: %d", code)
	}
	page := get(t, g.srv.URL+"/promptloom/")
	for _, want := range []string{`id="refused"`, "<code>malformed</code>", ">broken<", ">s1<", "-refused<"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
	rep, data := g.closeAndVerify(t)
	if bytes.Contains(data, []byte(secret)) || bytes.Contains(data, []byte("zzzzzzzzzz")) {
		t.Error("the refused body's secret is in the transcript")
	}
	if len(rep.Refused) != 2 {
		t.Fatalf("refused: %+v", rep.Refused)
	}
	first, second := rep.Refused[0], rep.Refused[1]
	if first.Session != "s1" || first.Call != "broken" || first.Reason != "malformed" ||
		first.BodyBytes != int64(len(malformed)) || first.BodyContentHash != digest.Bytes(malformed).String() {
		t.Errorf("the refusal in s1: %+v", first)
	}
	if !strings.HasSuffix(second.Session, "-refused") || second.Reason != "malformed" || second.BodyContentHash != digest.Bytes(noMessages).String() {
		t.Errorf("the refusal of no session: %+v", second)
	}
	// Altered, the refusal's line no longer verifies.
	tampered := bytes.Replace(data, []byte(`"reason":"malformed"`), []byte(`"reason":"no_prompt"`), 1)
	if rep, err := transcript.Verify(bytes.NewReader(tampered), nil); err == nil && rep.OK() {
		t.Error("a refusal's reason altered still verifies")
	}
}

// A stale prompt, which the transport refuses, is journaled in the
// call's own session with stale_prompt; a body over the limit, read no
// further, in the session of refusals with over_limit and the digest of
// the bytes that came.
func TestRefusalsByTheTransportAndTheLimit(t *testing.T) {
	x, err := explain.Explain([]byte(`{"system":"You are terse."}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	g := newRig(t, &proxy.Options{MaxBodyBytes: 1000, Prompt: func(string) (*explain.Explanation, error) { return x, nil }})
	if code, out := g.post(t, "/v1/messages", []byte(`{"model":"claude-sonnet-4-5","max_tokens":5,"system":"You are verbose.","messages":[{"role":"user","content":"hi"}]}`),
		"Promptloom-Session", "agent"); code != 400 {
		t.Fatalf("a stale prompt: %d %s", code, out)
	}
	if code, _ := g.post(t, "/v1/messages", []byte(`{"model":"m","messages":[{"role":"user","content":"`+strings.Repeat("x", 2000)+`"}]}`)); code != 413 {
		t.Fatalf("over the limit: %d", code)
	}
	rep, _ := g.closeAndVerify(t)
	if len(rep.Refused) != 2 {
		t.Fatalf("refused: %+v", rep.Refused)
	}
	stale, over := rep.Refused[0], rep.Refused[1]
	if stale.Session != "agent" || stale.Reason != "stale_prompt" || stale.Call != "agent/1" {
		t.Errorf("the stale prompt: %+v", stale)
	}
	if !strings.HasSuffix(over.Session, "-refused") || over.Reason != "over_limit" || over.BodyBytes != 1001 {
		t.Errorf("over the limit: %+v", over)
	}
}
