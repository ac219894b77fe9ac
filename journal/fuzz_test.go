package journal

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/internal/chain"
	"github.com/promptloom/promptloom/transcript"
)

// FuzzVerify: any transcript, however broken, gets a report, never a panic;
// a line that is not JSON is a problem, not a crash; and a report that says
// OK has a verified call and no problem (it never proves nothing).
func FuzzVerify(f *testing.F) {
	e, err := explain.Explain([]byte(`{"system": ["a", "b"]}`), nil)
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	j := New(&buf, &Options{Clock: clock, Session: "s1"})
	if _, err := j.Call(ctx, echo, Request{Call: "c1", System: e.System, Manifest: e.Manifest}); err != nil {
		f.Fatal(err)
	}
	// A call with its request body: the payload receipt and request.payload.
	if _, err := j.Call(ctx, echo, Request{Call: "c2", System: e.System, Manifest: e.Manifest,
		Body: []byte(`{"system":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`)}); err != nil {
		f.Fatal(err)
	}
	// Unattributed calls whose bodies are kept as segments, the second
	// naming the first's pieces.
	for _, body := range []string{`{"messages":[{"role":"user","content":"hi"}],"model":"m"}`,
		`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yes"}],"model":"m"}`} {
		if _, err := j.Call(ctx, echo, Request{Call: "u", Body: []byte(body), Unattributed: true}); err != nil {
			f.Fatal(err)
		}
	}
	// A refusal, and a session that follows another.
	if err := j.Refuse(ctx, "r", "malformed", "not JSON", []byte("{")); err != nil {
		f.Fatal(err)
	}
	j.Close()
	next := New(&buf, &Options{Clock: clock, Session: "s2", Follows: "s1"})
	if _, err := next.Call(ctx, echo, Request{Call: "c3", System: e.System, Manifest: e.Manifest}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes()) // its last session open
	f.Add(append(bytes.Clone(buf.Bytes()), `{"prev":"blake3:`...))
	for _, name := range []string{"served_context.jsonl", "qwen_egress.jsonl"} {
		if b, err := os.ReadFile(filepath.Join("testdata", "harn", name)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"prev":"` + chain.Genesis + `","seq":1,"kind":"journal_open","session":"s","session":"t"}` + "\n"))
	f.Add([]byte(`{"kind":"provider_call_request","served_context":{"schema":"harn.llm.served_context.v1"}}`))
	f.Add([]byte("{\n\n}\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, _ := transcript.Verify(bytes.NewReader(data), nil)
		if rep == nil {
			t.Fatal("no report")
		}
		if v, _, _ := rep.Counts(); rep.OK() && (v+len(rep.Refused) == 0 || len(rep.Problems) > 0) {
			t.Fatalf("OK without proof: %+v", rep)
		}
		if rep.OK() && !rep.Holds() {
			t.Fatalf("OK but does not hold: %+v", rep)
		}
		for _, p := range rep.Problems {
			if rep.Holds() && !rep.Pending(p) {
				t.Fatalf("holds with a problem: %v", p)
			}
		}
		if err := rep.WriteText(io.Discard); err != nil {
			t.Fatal(err)
		}
	})
}
