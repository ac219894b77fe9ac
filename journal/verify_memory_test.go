package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/transcript"
)

// TestVerifyHoldsDistinctContent: a transcript of one large body sent
// again and again, answered each time by one large reply, is held by the
// verifier in proportion to what is distinct in it, not to its size:
// nothing it keeps of a call (its name, its reply's text) pins the call's
// lines.
func TestVerifyHoldsDistinctContent(t *testing.T) {
	const calls, size = 40, 128 << 10
	e, err := explain.Explain([]byte(`{"system": "You are careful."}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs := json.RawMessage(`[{"role":"user","content":"` + strings.Repeat("the same long conversation ", size/27) + `"}]`)
	reply := strings.Repeat("the same long answer ", size/21)
	same := ModelFunc(func(context.Context, Request) (Response, error) { return Response{Text: reply}, nil })
	var buf bytes.Buffer
	j := New(&buf, &Options{Clock: clock, Session: "repeat"})
	for i := range calls {
		req := Request{Call: fmt.Sprintf("c%d", i), System: e.System, Manifest: e.Manifest, Messages: msgs}
		if _, err := j.Call(ctx, same, req); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rep, err := transcript.Verify(bytes.NewReader(data), nil)
	runtime.GC()
	runtime.ReadMemStats(&after)
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %v %v", err, rep.Problems)
	}
	if rep.Calls[calls-1].Outcome != reply || rep.Calls[calls-1].Call != fmt.Sprintf("c%d", calls-1) {
		t.Fatalf("the last call reads %q with a %d-byte reply", rep.Calls[calls-1].Call, len(rep.Calls[calls-1].Outcome))
	}
	// The distinct content is one body and one reply; a verifier that
	// pins each call's lines holds all of them (40 bodies and 40 replies,
	// about 10 MB). Four bodies' worth leaves room for the report itself
	// and for the runtime's own noise.
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if limit := int64(4 * size); held > limit {
		t.Errorf("after Verify of a %d-byte transcript of %d calls repeating one %d-byte body and one %d-byte reply, %d bytes are still held (limit %d): the report pins the lines",
			len(data), calls, len(msgs), len(reply), held, limit)
	}
	runtime.KeepAlive(rep)
	runtime.KeepAlive(data)
}
