package eventlog

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)

// stores runs a test against both implementations.
func stores(t *testing.T, test func(t *testing.T, s Store)) {
	t.Run("memory", func(t *testing.T) {
		test(t, NewMemory(WithClock(FixedClock(t0))))
	})
	t.Run("sqlite", func(t *testing.T) {
		s, err := OpenSQLite(filepath.Join(t.TempDir(), "log.db"), WithClock(FixedClock(t0)))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		test(t, s)
	})
}

func all(t *testing.T, s Store) []Event {
	t.Helper()
	ctx := context.Background()
	head, err := s.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []Event
	err = s.Scan(ctx, 1, head, func(env Envelope) error {
		e, err := s.Get(ctx, env.Seq)
		if err != nil {
			return err
		}
		if diff := cmp.Diff(env, e.Envelope); diff != "" {
			t.Errorf("Scan and Get disagree on event %d:\n%s", env.Seq, diff)
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAppendScanGet(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		envs, err := s.Append(ctx,
			Draft{Kind: "offer", Actor: "uk", Payload: map[string]string{"text": "60%"}},
			Draft{Kind: "remark", Actor: "uk", Audience: []string{"eu"}, Payload: "aside"})
		if err != nil {
			t.Fatal(err)
		}
		if envs[0].Seq != 1 || envs[1].Seq != 2 || !envs[1].At.After(envs[0].At) {
			t.Fatalf("envelopes %+v", envs)
		}
		if _, err := s.Append(ctx, Draft{Kind: "offer", Actor: "eu", Payload: 40}); err != nil {
			t.Fatal(err)
		}
		got := all(t, s)
		if len(got) != 3 || got[1].Kind != "remark" || !got[1].VisibleTo("eu") || got[1].VisibleTo("uk") || !got[0].Public() {
			t.Fatalf("events %+v", got)
		}
		var n int
		if err := got[2].Decode(&n); err != nil || n != 40 {
			t.Errorf("payload %s: %v", got[2].Payload, err)
		}
		var seqs []int64
		s.Scan(ctx, 2, 10, func(e Envelope) error { seqs = append(seqs, e.Seq); return nil })
		if diff := cmp.Diff([]int64{2, 3}, seqs); diff != "" {
			t.Errorf("Scan(2, 10):\n%s", diff)
		}
		if _, err := s.Get(ctx, 4); !errors.Is(err, ErrNoEvent) {
			t.Errorf("Get(4) = %v, want ErrNoEvent", err)
		}
	})
}

func TestBadBatchWritesNothing(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		_, err := s.Append(ctx, Draft{Kind: "ok", Payload: 1}, Draft{Kind: "", Payload: 2})
		if !errors.Is(err, ErrEmptyKind) {
			t.Errorf("Append with an empty kind = %v", err)
		}
		_, err = s.Append(ctx, Draft{Kind: "ok", Payload: 1}, Draft{Kind: "bad", Payload: func() {}})
		if err == nil {
			t.Error("Append of an unmarshalable payload succeeded")
		}
		if head, _ := s.Head(ctx); head != 0 {
			t.Errorf("a failed batch left %d events", head)
		}
	})
}

func TestProjections(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		if _, ok, err := s.LoadProjection(ctx, "beliefs"); ok || err != nil {
			t.Fatalf("fresh store has a projection: %v %v", ok, err)
		}
		if err := s.SaveProjection(ctx, "beliefs", Projection{Upto: 3, State: []byte(`{"a":1}`)}); err != nil {
			t.Fatal(err)
		}
		s.SaveProjection(ctx, "beliefs", Projection{Upto: 5, State: []byte(`{"a":2}`)})
		p, ok, err := s.LoadProjection(ctx, "beliefs")
		if !ok || err != nil || p.Upto != 5 || string(p.State) != `{"a":2}` {
			t.Errorf("LoadProjection = %+v %v %v", p, ok, err)
		}
		s.DropProjection(ctx, "beliefs")
		if _, ok, _ := s.LoadProjection(ctx, "beliefs"); ok {
			t.Error("projection survived its drop")
		}
	})
}

func TestSQLiteReopenReturnsWhatWasCommitted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.db")
	s, err := OpenSQLite(path, WithClock(FixedClock(t0)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 5 {
		if _, err := s.Append(ctx, Draft{Kind: "k", Actor: "a", Audience: []string{"x", "y"}, Payload: json.RawMessage(`{"i":` + string(rune('0'+i)) + `}`)}); err != nil {
			t.Fatal(err)
		}
	}
	before := all(t, s)
	s.SaveProjection(ctx, "p", Projection{Upto: 5, State: []byte("state")})
	s.Close()

	s2, err := OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if diff := cmp.Diff(before, all(t, s2)); diff != "" {
		t.Errorf("reopened log differs:\n%s", diff)
	}
	if p, ok, _ := s2.LoadProjection(ctx, "p"); !ok || p.Upto != 5 {
		t.Errorf("projection after reopen: %+v", p)
	}
}

func TestConcurrentAppends(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 25 {
					if _, err := s.Append(ctx, Draft{Kind: "k", Payload: []int{w, i}}, Draft{Kind: "k2", Payload: i}); err != nil {
						t.Error(err)
						return
					}
					s.Head(ctx)
				}
			}()
		}
		wg.Wait()
		got := all(t, s)
		if len(got) != 200 {
			t.Fatalf("%d events, want 200", len(got))
		}
		for i, e := range got {
			if e.Seq != int64(i+1) {
				t.Fatalf("event %d has seq %d", i, e.Seq)
			}
			// batches are contiguous: every k is followed by its k2
			if e.Kind == "k" && got[i+1].Kind != "k2" {
				t.Fatalf("batch split at %d", e.Seq)
			}
		}
	})
}
