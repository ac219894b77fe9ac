package journal

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/promptloom/promptloom/internal/chain"
	"github.com/promptloom/promptloom/transcript"
)

// The chain's tail a sink of this package takes from the line builder is
// the tail found by hashing what it wrote: each line a builder makes is
// hashed once, as it is built, and the next line chains to that hash.
func TestSinkTailFromBuilderIsTheWrittenTail(t *testing.T) {
	ctx := context.Background()
	var buf bytes.Buffer
	ws := &writerSink{w: &buf, t: Tail{Prev: chain.Genesis}}
	path := filepath.Join(t.TempDir(), "t.jsonl")
	fj, err := Open(path, &Options{Session: "s"})
	if err != nil {
		t.Fatal(err)
	}
	js := []*Journal{NewSink(ws, &Options{Session: "s"}), fj}
	for _, j := range js {
		for _, call := range []string{"a", "b", "c"} {
			if _, err := j.Call(ctx, echo, request(t, call, `{"system": "You are careful."}`)); err != nil {
				t.Fatal(err)
			}
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if want := tailAfter(Tail{Prev: chain.Genesis}, buf.Bytes()); ws.t != want || want.Seq < 8 {
		t.Errorf("writer sink's tail %+v, the written lines' %+v", ws.t, want)
	}
	if rep, err := transcript.Verify(bytes.NewReader(buf.Bytes()), nil); err != nil || !rep.OK() {
		t.Fatalf("verify: %v %+v", err, rep)
	}
	got := fj.sink.(*fileSink).t
	read, _, err := openFile(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer read.Close()
	if got != read.t || got.Seq < 8 {
		t.Errorf("file sink's tail %+v, the file's %+v", got, read.t)
	}
}
