package journal

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/internal/chain"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/transcript"
)

// sharedPromptTranscript is the transcript both benchmarks below read.
func sharedPromptTranscript(b *testing.B) []byte {
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
		req := Request{Call: fmt.Sprintf("c%d", i), System: e.System, Manifest: e.Manifest}
		if _, err := j.Call(ctx, echo, req); err != nil {
			b.Fatal(err)
		}
	}
	j.Close()
	return buf.Bytes()
}

// BenchmarkVerifySharedPrompt verifies a transcript of 300 calls that share
// one 110 KB prompt (written once, cited by every request): the retained
// manifest and prompt are checked against each other once, not per call.
func BenchmarkVerifySharedPrompt(b *testing.B) {
	data := sharedPromptTranscript(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		rep, err := transcript.Verify(bytes.NewReader(data), nil)
		if err != nil || !rep.OK() {
			b.Fatalf("verify: %v", err)
		}
	}
}

// BenchmarkVerifySharedPromptFloor is the work no verifier of the same
// transcript can avoid: read it, check each line as JSON once (the
// untrusted-JSON reader) and hash each line once (the chain). Verify's
// figure is quoted as a ratio to this one, measured in the same run.
func BenchmarkVerifySharedPromptFloor(b *testing.B) {
	data := sharedPromptTranscript(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		all := make([]byte, len(data)) // a file read at its known size, as os.ReadFile does
		if _, err := io.ReadFull(bytes.NewReader(data), all); err != nil {
			b.Fatal(err)
		}
		for len(all) > 0 {
			line, rest, _ := bytes.Cut(all, []byte("\n"))
			if err := pjson.Check(line, nil); err != nil {
				b.Fatal(err)
			}
			_ = chain.LineHash(line)
			all = rest
		}
	}
}

// BenchmarkFileCall makes calls on a file journal whose requests retain
// 256 KB of messages each: every append reads back the last line it knows
// (to notice a file truncated and written again under it), so this is the
// case where that read costs most.
func BenchmarkFileCall(b *testing.B) {
	j, err := Open(b.TempDir()+"/run.jsonl", &Options{Clock: clock, Session: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	e, err := explain.Explain([]byte(`{"system": "You are careful."}`), nil)
	if err != nil {
		b.Fatal(err)
	}
	msgs := []byte(`[{"role":"user","content":"` + strings.Repeat("a long conversation ", 256<<10/20) + `"}]`)
	long := ModelFunc(func(context.Context, Request) (Response, error) {
		return Response{Text: strings.Repeat("an answer ", 256<<10/10)}, nil
	})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		req := Request{Call: fmt.Sprintf("c%d", i), System: e.System, Manifest: e.Manifest, Messages: msgs}
		if _, err := j.Call(ctx, long, req); err != nil {
			b.Fatal(err)
		}
	}
}
