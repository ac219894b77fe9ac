package postgres

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/internal/testkit/pgtest"
	"github.com/promptloom/promptloom/internal/testkit/storetest"
)

// The PostgreSQL server itself crashes (immediate shutdown: WAL not yet
// flushed is lost) while a writer appends batches and a reader follows
// Head. After recovery the log holds every acknowledged event and every
// position Head reported, whole batches only, no gap: Append's and Head's
// WAL flushes are what make that so (see docs/postgres.md, "Why the order holds").
func TestPostgresServerCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster")
	}
	for _, serial := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "SerialFlush"}[serial], func(t *testing.T) {
			serverCrash(t, serial)
		})
	}
}

func serverCrash(t *testing.T, serial bool) {
	c := pgtest.NewCluster(t)
	ctx := context.Background()
	var env []string
	if serial {
		env = append(env, "PROMPTLOOM_CRASH_SERIAL=1")
	}
	reader, err := Open(ctx, c.URL, &Options{SerialFlush: serial, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	w := storetest.StartWriter(t, c.URL, env...)
	// The reader follows the head until the server dies.
	var mu sync.Mutex
	seen := int64(0)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if h, err := reader.Head(ctx); err == nil {
				mu.Lock()
				seen = max(seen, h)
				mu.Unlock()
			}
		}
	})
	w.Acked(300 * storetest.CrashBatch)
	c.Crash()
	close(stop)
	wg.Wait()
	reader.Close()
	acked := w.Kill()
	if acked == 0 {
		t.Fatal("the writer acknowledged nothing")
	}
	c.Start()

	s, err := Open(ctx, c.URL, &Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	head, err := s.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if head < acked || head < seen {
		t.Fatalf("after recovery the log has %d events; %d were acknowledged and Head reported %d", head, acked, seen)
	}
	if head%storetest.CrashBatch != 0 {
		t.Fatalf("after recovery the log has %d events: a partial batch of %d", head, head%storetest.CrashBatch)
	}
	want := int64(1)
	err = s.Scan(ctx, 1, head, func(env eventlog.Envelope) error {
		if env.Seq != want {
			return fmt.Errorf("event %d follows event %d", env.Seq, want-1)
		}
		want++
		return nil
	})
	if err != nil || want != head+1 {
		t.Fatalf("scan after recovery: %v (%d events, head %d)", err, want-1, head)
	}
	t.Logf("server crashed after %d acknowledged events (Head had shown %d); %d recovered", acked, seen, head)
}
