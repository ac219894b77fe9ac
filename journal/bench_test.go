package journal

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/explain"
)

// BenchmarkVerifySharedPrompt verifies a transcript of 300 calls that share
// one 110 KB prompt (written once, cited by every request): the retained
// manifest and prompt are checked against each other once, not per call.
func BenchmarkVerifySharedPrompt(b *testing.B) {
	items := make([]string, 250)
	for i := range items {
		items[i] = fmt.Sprintf("%q", fmt.Sprintf("Rule %d: %s", i, strings.Repeat("keep the plan current and run the tests ", 11)))
	}
	e, err := explain.Explain([]byte(`{"system": [`+strings.Join(items, ",")+`]}`), nil)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	j := New(&buf, &Options{Clock: clock, Session: "bench"})
	for i := range 300 {
		req := Request{Call: fmt.Sprintf("c%d", i), System: e.Text(), Manifest: e.Manifest}
		if _, err := j.Call(ctx, echo, req); err != nil {
			b.Fatal(err)
		}
	}
	j.Close()
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		rep, err := Verify(bytes.NewReader(data), nil)
		if err != nil || !rep.OK() {
			b.Fatalf("verify: %v", err)
		}
	}
}
