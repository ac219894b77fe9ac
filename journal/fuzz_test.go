package journal

import (
	"bytes"
	"testing"

	"github.com/promptloom/promptloom/explain"
)

// FuzzVerify: any transcript, however broken, gets a report, never a panic;
// a line that is not JSON is a problem, not a crash.
func FuzzVerify(f *testing.F) {
	e, err := explain.Explain([]byte(`{"system": ["a", "b"]}`))
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := New(&buf, WithClock(clock)).Call(ctx, echo, Request{Call: "c1", System: e.Text(), Manifest: e.Manifest}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"kind":"provider_call_request","served_context":{"schema":"harn.llm.served_context.v1"}}`))
	f.Add([]byte("{\n\n}\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := Verify(bytes.NewReader(data))
		if err == nil && rep == nil {
			t.Fatal("no report")
		}
	})
}
