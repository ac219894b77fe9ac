package report_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/transcript"
	"github.com/promptloom/promptloom/transcript/report"
)

// A call the SDK retried (a 429, then the same body answered) is one
// logical call in the report: one block, its failed attempt listed under
// it, and one call in its lane. Without the requests, each attempt is
// shown as the call it was recorded as.
func TestRetriedCallIsOneLogicalCall(t *testing.T) {
	var buf bytes.Buffer
	j := journal.New(&buf, &journal.Options{Clock: clock, Session: "S"})
	body := []byte(`{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":"Read the parser."}]}`)
	fail := journal.ModelFunc(func(context.Context, journal.Request) (journal.Response, error) {
		return journal.Response{}, errors.New("HTTP 429 Too Many Requests: slow down")
	})
	for _, m := range []journal.Model{fail, echo} {
		j.Call(ctx, m, journal.Request{Call: "c1", Body: body, Provider: "anthropic", Unattributed: true})
	}
	j.Close()
	data := buf.Bytes()
	rep, err := transcript.Verify(bytes.NewReader(data), nil)
	if err != nil || !rep.OK() || len(rep.Calls) != 2 {
		t.Fatalf("%v %+v", err, rep)
	}
	rs, err := cache.FromTranscript(data, rep)
	if err != nil {
		t.Fatal(err)
	}
	o := &report.Options{Requests: rs}
	var text, page strings.Builder
	if err := report.WriteText(&text, rep, o); err != nil {
		t.Fatal(err)
	}
	s := text.String()
	attempt := "attempt 1 (line 2): error: HTTP 429 Too Many Requests: slow down"
	if strings.Count(s, "ok c1 (line") != 1 || !strings.Contains(s, "\n  "+attempt+"\n  reply: reply to c1\n") {
		t.Errorf("the text does not show one call with its attempt:\n%s", s)
	}
	if err := report.WriteHTML(&page, "run", rep, o); err != nil {
		t.Fatal(err)
	}
	h := page.String()
	if !strings.Contains(h, `<h2>session S · 1 call(s)</h2>`) || !strings.Contains(h, `<div class="attempt">`+attempt+`</div>`) || strings.Count(h, `<article class="call`) != 1 {
		t.Errorf("the page does not show one call with its attempt:\n%s", h)
	}
	text.Reset()
	if err := report.WriteText(&text, rep, nil); err != nil || strings.Count(text.String(), "ok c1 (line") != 2 {
		t.Errorf("%v:\n%s", err, text.String())
	}
}
