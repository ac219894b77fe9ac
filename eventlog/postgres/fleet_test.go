package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/internal/testkit/pgtest"

	"github.com/jackc/pgx/v5"
)

const (
	fleetProcs   = 8
	fleetBatches = 40
)

// fleetBatchLen varies batch sizes from 1 to 7 across workers and batches.
func fleetBatchLen(w, b int) int { return 1 + (w+b)%7 }

type fleetPayload struct{ W, B, I, N int }

// TestPostgresFleetChild is one of TestPostgresFleet's processes: worker
// PROMPTLOOM_FLEET_WORKER appends its batches to PROMPTLOOM_FLEET_DB.
func TestPostgresFleetChild(t *testing.T) {
	dsn := os.Getenv("PROMPTLOOM_FLEET_DB")
	if dsn == "" {
		t.Skip("a child of TestPostgresFleet")
	}
	w, _ := strconv.Atoi(os.Getenv("PROMPTLOOM_FLEET_WORKER"))
	ctx := context.Background()
	s, err := Open(ctx, dsn, &Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for b := range fleetBatches {
		n := fleetBatchLen(w, b)
		drafts := make([]eventlog.Draft, n)
		for i := range drafts {
			drafts[i] = eventlog.Draft{Kind: "k", Actor: strconv.Itoa(w), Payload: fleetPayload{w, b, i, n}}
		}
		if _, err := s.Append(ctx, drafts...); err != nil {
			t.Fatal(err)
		}
	}
}

// Eight OS processes append batches to one PostgreSQL log at once (and race
// to create its schema): every event is there, seqs run 1..N without a gap,
// and each batch is contiguous and in order.
func TestPostgresFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dsn := pgtest.URL(t)
	var wg sync.WaitGroup
	errs := make([]error, fleetProcs)
	outs := make([][]byte, fleetProcs)
	total := 0
	for w := range fleetProcs {
		for b := range fleetBatches {
			total += fleetBatchLen(w, b)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestPostgresFleetChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "PROMPTLOOM_FLEET_DB="+dsn, "PROMPTLOOM_FLEET_WORKER="+strconv.Itoa(w))
		wg.Go(func() { outs[w], errs[w] = cmd.CombinedOutput() })
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Fatalf("worker %d: %v\n%s", w, err, outs[w])
		}
	}

	ctx := context.Background()
	s, err := Open(ctx, dsn, &Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	head, err := s.Head(ctx)
	if err != nil || head != int64(total) {
		t.Fatalf("Head = %d, %v; appended %d events", head, err, total)
	}
	var evs []fleetPayload
	seen := map[[2]int]bool{}
	err = s.Scan(ctx, 1, head, func(env eventlog.Envelope) error {
		if env.Seq != int64(len(evs)+1) {
			return fmt.Errorf("seq %d after %d events", env.Seq, len(evs))
		}
		e, err := s.Get(ctx, env.Seq)
		if err != nil {
			return err
		}
		var p fleetPayload
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			return err
		}
		if p.I > 0 {
			if prev := evs[len(evs)-1]; prev.W != p.W || prev.B != p.B || prev.I != p.I-1 {
				return fmt.Errorf("seq %d (worker %d batch %d #%d) follows worker %d batch %d #%d: a batch is split",
					env.Seq, p.W, p.B, p.I, prev.W, prev.B, prev.I)
			}
		} else {
			if len(evs) > 0 {
				if prev := evs[len(evs)-1]; prev.I != prev.N-1 {
					return fmt.Errorf("seq %d starts a batch inside worker %d batch %d", env.Seq, prev.W, prev.B)
				}
			}
			seen[[2]int{p.W, p.B}] = true
		}
		evs = append(evs, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != total || len(seen) != fleetProcs*fleetBatches {
		t.Fatalf("%d events in %d batches, want %d in %d", len(evs), len(seen), total, fleetProcs*fleetBatches)
	}
}

// An append blocked behind a batch that has not committed takes the next
// position only once that batch ends: readers meanwhile see neither; and a
// batch that aborts gives its positions back.
func TestPostgresLaterBatchWaitsForEarlier(t *testing.T) {
	dsn := pgtest.URL(t)
	ctx := context.Background()
	s := pgStore(ctx, t, dsn)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	// An aborted batch: it takes position 1, then rolls back.
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, pgAppend, []string{"held"}, []string{""}, []string{"[]"},
		[]time.Time{t0}, []*string{nil}, [][]byte{[]byte("1")}, s.channel); err != nil {
		t.Fatal(err)
	}
	// A concurrent append waits for it; a reader sees nothing yet.
	done := make(chan []eventlog.Envelope, 1)
	go func() {
		envs, err := s.Append(ctx, eventlog.Draft{Kind: "after", Payload: 2})
		if err != nil {
			t.Error(err)
		}
		done <- envs
	}()
	awaitBlocked(ctx, t, s, conn.PgConn().PID(), true)
	select {
	case envs := <-done:
		t.Fatalf("an append went past an open batch: %+v", envs)
	default:
	}
	if head, _ := s.Head(ctx); head != 0 {
		t.Errorf("Head = %d while the first batch is open", head)
	}
	if _, err := s.Get(ctx, 1); !errors.Is(err, eventlog.ErrNoEvent) {
		t.Errorf("Get(1) while the first batch is open = %v", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	envs := <-done
	if len(envs) != 1 || envs[0].Seq != 1 {
		t.Fatalf("the append after an aborted batch = %+v, want seq 1", envs)
	}

	// A committed batch: the waiting append follows it.
	tx, err = conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, pgAppend, []string{"a", "b"}, []string{"", ""}, []string{"[]", "[]"},
		[]time.Time{t0, t0}, []*string{nil, nil}, [][]byte{[]byte("1"), []byte("2")}, s.channel); err != nil {
		t.Fatal(err)
	}
	go func() {
		envs, _ := s.Append(ctx, eventlog.Draft{Kind: "c", Payload: 3})
		done <- envs
	}()
	awaitBlocked(ctx, t, s, conn.PgConn().PID(), true)
	if head, _ := s.Head(ctx); head != 1 {
		t.Errorf("Head = %d while a batch is open, want 1", head)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if envs := <-done; len(envs) != 1 || envs[0].Seq != 4 {
		t.Fatalf("the append after a committed batch of 2 = %+v, want seq 4", envs)
	}
}

// Two stores on one log, as two processes would have: a Wait on one is woken
// by an Append on the other, through NOTIFY (Postgres.Wait never polls).
func TestPostgresWaitWakesAcrossConnections(t *testing.T) {
	dsn := pgtest.URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a := pgStore(ctx, t, dsn)
	b := pgStore(ctx, t, dsn)
	notified := make(chan struct{}, 16)
	a.notified = func() { notified <- struct{}{} }
	// Listening before the append: Wait starts the listener and returns
	// only past head 0, which no read can give it before the append.
	if err := a.listen(ctx); err != nil {
		t.Fatal(err)
	}
	got := make(chan int64, 1)
	go func() {
		head, err := a.Wait(ctx, 0)
		if err != nil {
			t.Error(err)
		}
		got <- head
	}()
	if _, err := b.Append(ctx, eventlog.Draft{Kind: "k", Payload: 1}, eventlog.Draft{Kind: "k", Payload: 2}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-notified:
	case <-ctx.Done():
		t.Fatal("b's append reached a's listener as no notification")
	}
	if head := <-got; head != 2 {
		t.Errorf("Wait = %d, want 2", head)
	}
}

// A database whose schema is newer than this build is refused.
func TestPostgresSchemaVersionIsChecked(t *testing.T) {
	dsn := pgtest.URL(t)
	ctx := context.Background()
	s, err := Open(ctx, dsn, &Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.(*store).pool.Exec(ctx, `UPDATE eventlog_schema SET version = 2`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(ctx, dsn, nil); !errors.Is(err, ErrSchemaVersion) {
		t.Errorf("Open of a version-2 schema = %v, want ErrSchemaVersion", err)
	}
}

// Batches appended at once through one store share a statement; when the
// server refuses that statement for one batch's sake, the others still go
// in, and the refused batch leaves no gap.
func TestPostgresOneRefusedBatchFailsAlone(t *testing.T) {
	dsn := pgtest.URL(t)
	ctx := context.Background()
	s := pgStore(ctx, t, dsn)
	// A rule only the server knows: kind "poison" is refused.
	if _, err := s.pool.Exec(ctx, `ALTER TABLE events ADD CHECK (kind <> 'poison')`); err != nil {
		t.Fatal(err)
	}
	const n = 40
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		kind := "k"
		if i == n/2 {
			kind = "poison"
		}
		wg.Go(func() {
			<-start
			_, errs[i] = s.Append(ctx, eventlog.Draft{Kind: kind, Payload: i}, eventlog.Draft{Kind: kind, Payload: i})
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if (i == n/2) != (err != nil) {
			t.Errorf("batch %d: %v", i, err)
		}
	}
	if head, err := s.Head(ctx); err != nil || head != 2*(n-1) {
		t.Fatalf("Head = %d, %v; want %d", head, err, 2*(n-1))
	}
	kinds := map[string]int{}
	s.Scan(ctx, 1, 2*(n-1), func(e eventlog.Envelope) error { kinds[e.Kind]++; return nil })
	if kinds["k"] != 2*(n-1) || kinds["poison"] != 0 {
		t.Errorf("kinds in the log: %v", kinds)
	}
}

// The listening connection dies (terminated by an administrator, a network
// cut): the store reconnects, listens again, and a waiter is still woken by
// the next append. Each step waits for the event it needs, not for a time:
// the append is made once the store says it listens again (a terminated
// backend can linger in pg_stat_activity, its LISTEN still showing, long
// after pg_terminate_backend returned on a busy machine, and an append
// made then notifies no one), and a lost wake fails at the test binary's
// -timeout, with every goroutine's stack.
func TestPostgresWaitSurvivesALostListener(t *testing.T) {
	dsn := pgtest.URL(t)
	ctx := t.Context()
	a := pgStore(ctx, t, dsn)
	notified := make(chan struct{}, 16)
	a.notified = func() { notified <- struct{}{} }
	relistened := make(chan struct{}, 16)
	a.relistened = func() { relistened <- struct{}{} }
	if err := a.listen(ctx); err != nil {
		t.Fatal(err)
	}
	var killed int
	listen := "LISTEN " + pgx.Identifier{a.channel}.Sanitize()
	err := a.pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE query = $1`, listen).Scan(&killed)
	if err != nil || killed != 1 {
		t.Fatalf("terminated %d listeners: %v", killed, err)
	}
	got := make(chan int64, 1)
	go func() {
		head, err := a.Wait(ctx, 0)
		if err != nil {
			t.Error(err)
		}
		got <- head
	}()
	<-relistened
	b := pgStore(ctx, t, dsn)
	if _, err := b.Append(ctx, eventlog.Draft{Kind: "k", Payload: 1}); err != nil {
		t.Fatal(err)
	}
	<-notified
	if head := <-got; head != 1 {
		t.Errorf("Wait = %d, want 1", head)
	}
}

// pgStore opens a store on dsn for the test, closed when it ends.
func pgStore(ctx context.Context, t *testing.T, dsn string) *store {
	t.Helper()
	s, err := Open(ctx, dsn, &Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.(*store)
}
