package journal

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/promptloom/promptloom/transcript"
)

// Begin returns with the request's lines written, in the file for any
// reader, and Sync once they are on stable storage; calls that begin
// together all come out whole.
func TestBeginWritesAndSyncWaits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	j, err := Open(path, &Options{Session: "s"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p, err := j.Begin(ctx, request(t, "first", `{"system": "You are careful."}`))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), `"kind":"provider_call_request"`) {
		t.Fatalf("Begin returned before the request line was written:\n%s", b)
	}
	if err := p.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := p.Finish(ctx, Response{Text: "ok"}, nil); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			p, err := j.Begin(ctx, request(t, "c"+string(rune('a'+i)), `{"system": "You are careful."}`))
			if err == nil {
				err = p.Sync()
			}
			if err == nil {
				err = p.Finish(ctx, Response{Text: "ok"}, nil)
			}
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if rep, err := transcript.Verify(f, nil); err != nil || !rep.OK() || len(rep.Calls) != 17 {
		t.Fatalf("verify: %v, %+v; want 17 calls", err, rep)
	}
	if err := (*Pending)(nil).Sync(); !errors.Is(err, errNoPending) {
		t.Fatalf("Sync on no call: %v", err)
	}
}

// A failed fsync is the file's last word: every wait for a write before
// it returns the failure, and nothing more is written.
func TestAFailedSyncEndsTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	s, _, err := openFile(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	line := func(Tail) ([]byte, *Tail, error) { return []byte(`{"kind":"x"}` + "\n"), nil, nil }
	synced, err := s.appendLater(context.Background(), line, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := synced(); err != nil {
		t.Fatal(err)
	}
	n, err := s.write(line)
	if err != nil {
		t.Fatal(err)
	}
	s.f.Close() // the fsync of that write fails
	first := s.syncs.through(s.f, n)
	if first == nil || !strings.Contains(first.Error(), "journal: sync:") {
		t.Fatalf("the sync of a closed file: %v", first)
	}
	if err := s.appendBuilt(context.Background(), line); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("an append after a failed sync: %v; want the sync's failure", err)
	}
	if err := s.syncs.through(s.f, n-1); err != nil {
		t.Fatalf("a write synced before the failure: %v", err)
	}
	if b, _ := os.ReadFile(path); strings.Count(string(b), "\n") != 2 {
		t.Fatalf("after the failure the file holds:\n%s", b)
	}
}
