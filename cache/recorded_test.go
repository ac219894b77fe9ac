package cache

import (
	"bytes"
	"context"
	"testing"

	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/transcript"
)

// A body the transcript kept as text (no canonical form) is read back
// from its text; one that no reader reads says why, and the calls around
// it are rebuilt still.
func TestBodiesKeptAsText(t *testing.T) {
	var buf bytes.Buffer
	j := journal.New(&buf, &journal.Options{Session: "s"})
	m := journal.ModelFunc(func(context.Context, journal.Request) (journal.Response, error) {
		return journal.Response{Text: "ok"}, nil
	})
	for name, body := range map[string]string{
		"1-canonical": `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`,
		"2-huge":      `{"model":"claude-sonnet-4-5","max_tokens":1e999,"messages":[{"role":"user","content":"hi"}]}`,
		"3-not-json":  `{"model":`,
	} {
		if _, err := j.Call(context.Background(), m, journal.Request{Call: name, Body: []byte(body), Provider: payload.Anthropic, Unattributed: true}); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	rep, err := transcript.Verify(bytes.NewReader(buf.Bytes()), nil)
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %v", err)
	}
	rs, err := FromTranscript(buf.Bytes(), rep)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, r := range rs {
		got[r.Report.Call] = r.Request != nil
		if (r.Request == nil) != (r.Err != nil) {
			t.Errorf("%s: request %v, err %v", r.Report.Call, r.Request != nil, r.Err)
		}
	}
	if !got["1-canonical"] || !got["2-huge"] || got["3-not-json"] || len(Calls(rs)) != 2 {
		t.Errorf("rebuilt: %v", got)
	}
}
