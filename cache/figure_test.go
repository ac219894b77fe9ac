package cache

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom/internal/testkit/fakecache"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/request"
	"github.com/promptloom/promptloom/transcript"
)

// One call's predicted write is one figure, whichever path asks for it:
// cache --transcript (Run over the transcript's calls), diff --request
// --transcript (Compare of the call with the one before it, each with
// its report), the proxy's page (Run over the session's calls, their
// manifests made from the bodies as sent, not as the transcript keeps
// them, redacted) and a Predictor given the reports. A secret in the
// history, and one in the tail after the last breakpoint, count alike in
// the body and in the transcript's redacted copy. Each says the figure is
// an estimate.
func TestOneFigureForOneWrite(t *testing.T) {
	fake := newFake(1024)
	a := fakecache.NewAgent()
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	j := journal.New(&buf, &journal.Options{Session: "s", Clock: func() time.Time { return now }})
	var page []Call
	pred := NewPredictor(nil)
	var predicted []Verdict
	send := func(name string, body []byte) {
		u := fake.serve(t, body, now)
		model := journal.ModelFunc(func(context.Context, journal.Request) (journal.Response, error) {
			return journal.Response{Text: "ok", Usage: &u}, nil
		})
		if _, err := j.Call(context.Background(), model, journal.Request{Call: name, Body: body, Provider: payload.Anthropic, Unattributed: true}); err != nil {
			t.Fatal(err)
		}
		r, err := payload.Read(body, payload.Anthropic)
		if err != nil {
			t.Fatal(err)
		}
		m, err := request.FromPayload(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		page = append(page, Call{Name: name, Session: "s", At: now, Began: now.Add(time.Second), Request: m, Reported: &u})
		predicted = append(predicted, pred.Predict(page[len(page)-1]))
		now = now.Add(30 * time.Second)
	}
	// A secret in the history: the transcript keeps it redacted, the
	// page's manifest counts it as sent.
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	send("1", a.Turn(strings.Repeat("Please look at the parser and tell me what it does. ", 3)))
	a.Answer("It parses. The token was " + jwt + " then.")
	send("2", a.Turn("And the lexer?"))
	a.Answer("It lexes.")
	a.Tools[3]["description"] = "Run a shell command, carefully."
	a.Turn("Now run the tests.")
	// The secret again, after the breakpoint this time: in the tail
	// that is sent and not cached.
	last := a.Messages[len(a.Messages)-1]
	last["content"] = append(last["content"].([]map[string]any), map[string]any{"type": "text", "text": "The environment has " + jwt + " in it."})
	body, err := json.Marshal(map[string]any{"model": a.Model, "max_tokens": 1024, "tools": a.Tools, "system": a.System, "messages": a.Messages})
	if err != nil {
		t.Fatal(err)
	}
	send("3", body)
	j.Close()

	rep, err := transcript.Verify(bytes.NewReader(buf.Bytes()), nil)
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %v", err)
	}
	rs, err := FromTranscript(buf.Bytes(), rep)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rs {
		if rs[i].Request.Tokens != page[i].Request.Tokens {
			t.Errorf("call %d: the transcript's copy counts %d tokens, the body as sent %d", i+1, rs[i].Request.Tokens, page[i].Request.Tokens)
		}
	}
	tr := Run(Calls(rs), nil)
	sessionPage := Run(page, nil)
	for i := 1; i < len(rs); i++ {
		diff := Compare(Call{Name: rs[i-1].Report.Call, Request: rs[i-1].Request, Reported: rs[i-1].Report.Usage},
			Call{Name: rs[i].Report.Call, Request: rs[i].Request, Reported: rs[i].Report.Usage}, nil)
		figures := map[string]Tokens{
			"cache":          tr.Verdicts[i].Predicted,
			"diff --request": diff.Predicted,
			"page":           sessionPage.Verdicts[i].Predicted,
			"predictor":      predicted[i].Predicted,
		}
		for path, f := range figures {
			if f != figures["cache"] {
				t.Errorf("call %d: %s predicts %+v, cache %+v", i+1, path, f, figures["cache"])
			}
		}
		if figures["cache"].Write == 0 {
			t.Errorf("call %d: no write predicted, so nothing is held equal", i+1)
		}
		if !tr.Verdicts[i].Estimate || !diff.Estimate || !sessionPage.Verdicts[i].Estimate || !predicted[i].Estimate {
			t.Errorf("call %d: a figure does not say it is an estimate", i+1)
		}
	}
}
