package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/internal/testkit/pgtest"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// schemaURL is a URL of the test database whose search_path is a new
// schema named name (quoted: any characters), dropped when the test ends.
func schemaURL(t *testing.T, name string) string {
	t.Helper()
	base := pgtest.URL(t) // skips without a database
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	quoted := pgx.Identifier{name}.Sanitize()
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+quoted); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(ctx, os.Getenv(pgtest.Env))
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP SCHEMA "+quoted+" CASCADE"); err != nil {
			t.Error(err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", quoted)
	u.RawQuery = q.Encode()
	return u.String()
}

// A schema whose name is not ASCII, long enough that the channel's 63rd
// byte falls inside a character: the channel is cut before that
// character, so Append notifies, and Wait in another store is woken.
func TestPostgresNonASCIISchemaChannel(t *testing.T) {
	name := strings.Repeat("é", 30) // the channel's prefix is 20 bytes: byte 63 is mid-é
	dsn := schemaURL(t, name)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a, b := pgStore(ctx, t, dsn), pgStore(ctx, t, dsn)
	if len(a.channel) > 63 || !strings.HasPrefix(a.channel, "promptloom_eventlog_é") {
		t.Fatalf("channel %q", a.channel)
	}
	if err := b.listen(ctx); err != nil {
		t.Fatal(err)
	}
	got := make(chan int64, 1)
	go func() {
		head, err := b.Wait(ctx, 0)
		if err != nil {
			t.Error(err)
		}
		got <- head
	}()
	if _, err := a.Append(ctx, eventlog.Draft{Kind: "k", Payload: 1}); err != nil {
		t.Fatal(err)
	}
	if head := <-got; head != 1 {
		t.Errorf("Wait = %d, want 1", head)
	}
}

func TestPairedSurrogates(t *testing.T) {
	for raw, want := range map[string]bool{
		`"\ud83d\ude00"`: true, `"\uD83D\uDE00 \u00e9"`: true, `"\\ud83d"`: true, `"x\\\ud83d\ude00"`: true, `1`: true,
		`"\ud83d"`: false, `"\ude00"`: false, `"\ud83d\u0041"`: false, `"\ud83d\n"`: false, `"\\\ud83d"`: false, `"\ud83d\ud83d"`: false,
	} {
		if got := pairedSurrogates([]byte(raw)); got != want {
			t.Errorf("pairedSurrogates(%s) = %v", raw, got)
		}
	}
}

// Payloads jsonb cannot hold (a lone surrogate escape, numbers past
// numeric's range) keep their bytes with a NULL jsonb, alone or in a group
// commit beside others, which keep theirs as jsonb.
func TestPostgresPayloadsJsonbRefuses(t *testing.T) {
	ctx := context.Background()
	s := pgStore(ctx, t, pgtest.URL(t))
	refused := []string{`"cut \ud83d"`, `"\ude00"`, `{"n":1e1000000}`, `[1e-16384]`, `[1, 1e131072]`}
	for _, p := range refused {
		if _, err := s.Append(ctx, eventlog.Draft{Kind: "refused", Payload: json.RawMessage(p)}); err != nil {
			t.Fatalf("Append(%s): %v", p, err)
		}
	}
	// The same beside good batches, appended at once.
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Go(func() {
			p := `{"i":` + strconv.Itoa(i) + `}`
			kind := "good"
			if i%5 == 0 {
				p, kind = refused[i/5], "refused"
			}
			_, errs[i] = s.Append(ctx, eventlog.Draft{Kind: kind, Payload: json.RawMessage(p)}, eventlog.Draft{Kind: "good", Payload: 1})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("batch %d: %v", i, err)
		}
	}
	rows, err := s.pool.Query(ctx, `SELECT kind, payload IS NULL, convert_from(raw, 'UTF8') FROM events ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var kind, raw string
		var null bool
		if err := rows.Scan(&kind, &null, &raw); err != nil {
			t.Fatal(err)
		}
		n++
		if null != (kind == "refused") {
			t.Errorf("%s payload %s: NULL jsonb %v", kind, raw, null)
		}
	}
	if rows.Err() != nil || n != len(refused)+40 {
		t.Errorf("%d events, %v", n, rows.Err())
	}
}

// A role holding exactly the privileges docs/postgres.md lists opens an
// existing log and does everything a worker does; a reader's role reads
// and waits but cannot append; neither can create the tables, which only
// Options.Migrate does.
func TestPostgresPrivileges(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dsn := pgtest.URL(t)
	owner := pgStore(ctx, t, dsn)
	if _, err := owner.Append(ctx, eventlog.Draft{Kind: "k", Payload: 1}); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(dsn)
	schema := u.Query().Get("search_path")
	suffix := strings.TrimPrefix(schema, "t_")
	writer, reader := "ew_"+suffix, "er_"+suffix
	for _, stmt := range []string{
		"CREATE ROLE " + writer + " LOGIN",
		"CREATE ROLE " + reader + " LOGIN",
		// docs/postgres.md, "What the log needs from the database": a
		// worker's privileges.
		"GRANT USAGE ON SCHEMA " + schema + " TO " + writer,
		"GRANT SELECT ON eventlog_schema TO " + writer,
		"GRANT SELECT, UPDATE ON eventlog_head TO " + writer,
		"GRANT SELECT, INSERT ON events TO " + writer,
		"GRANT SELECT, INSERT, UPDATE, DELETE ON projections TO " + writer,
		// A reader's.
		"GRANT USAGE ON SCHEMA " + schema + " TO " + reader,
		"GRANT SELECT ON eventlog_schema, eventlog_head, events, projections TO " + reader,
	} {
		if _, err := owner.pool.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		for _, r := range []string{writer, reader} {
			c.Exec(context.Background(), "DROP OWNED BY "+r)
			c.Exec(context.Background(), "DROP ROLE "+r)
		}
	})
	as := func(dsn, role string) string {
		u, _ := url.Parse(dsn)
		u.User = url.User(role)
		return u.String()
	}
	w, err := Open(ctx, as(dsn, writer), nil)
	if err != nil {
		t.Fatalf("the writer's Open: %v", err)
	}
	defer w.Close()
	// Migrate of a log that is there needs nothing more (the demo's --db
	// run by a worker's role).
	if m, err := Open(ctx, as(dsn, writer), &Options{Migrate: true}); err != nil {
		t.Errorf("the writer's Open with Migrate of an existing log: %v", err)
	} else {
		m.Close()
	}
	r, err := Open(ctx, as(dsn, reader), nil)
	if err != nil {
		t.Fatalf("the reader's Open: %v", err)
	}
	defer r.Close()
	woken := make(chan int64, 1)
	go func() {
		head, err := r.Wait(ctx, 1)
		if err != nil {
			t.Error(err)
		}
		woken <- head
	}()
	if _, err := w.Append(ctx, eventlog.Draft{Kind: "k", Payload: 2}, eventlog.Draft{Kind: "k", Payload: 3}); err != nil {
		t.Fatalf("the writer's Append: %v", err)
	}
	if head := <-woken; head != 3 {
		t.Errorf("the reader's Wait = %d", head)
	}
	for name, s := range map[string]eventlog.Store{"writer": w, "reader": r} {
		if head, err := s.Head(ctx); head != 3 || err != nil {
			t.Errorf("the %s's Head = %d, %v", name, head, err)
		}
		if e, err := s.Get(ctx, 2); err != nil || string(e.Payload) != "2" {
			t.Errorf("the %s's Get = %s, %v", name, e.Payload, err)
		}
		if err := s.Scan(ctx, 1, 3, func(eventlog.Envelope) error { return nil }); err != nil {
			t.Errorf("the %s's Scan: %v", name, err)
		}
	}
	if err := w.SaveProjection(ctx, "p", eventlog.Projection{Upto: 3, State: []byte("s")}); err != nil {
		t.Errorf("the writer's SaveProjection: %v", err)
	}
	if err := w.SaveProjection(ctx, "p", eventlog.Projection{Upto: 3, State: []byte("t")}); err != nil {
		t.Errorf("the writer's second SaveProjection: %v", err)
	}
	if p, ok, err := r.LoadProjection(ctx, "p"); !ok || err != nil || string(p.State) != "t" {
		t.Errorf("the reader's LoadProjection = %+v %v %v", p, ok, err)
	}
	if err := w.DropProjection(ctx, "p"); err != nil {
		t.Errorf("the writer's DropProjection: %v", err)
	}
	if _, err := r.Append(ctx, eventlog.Draft{Kind: "k", Payload: 4}); err == nil {
		t.Error("the reader appended")
	}
	// Neither can create the tables in a schema that has none; opening it
	// without Migrate says there is no log there.
	fresh := pgtest.URL(t)
	fu, _ := url.Parse(fresh)
	if _, err := owner.pool.Exec(ctx, "GRANT USAGE ON SCHEMA "+fu.Query().Get("search_path")+" TO "+writer); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, as(fresh, writer), &Options{Migrate: true}); err == nil {
		t.Error("the writer created the tables")
	}
	if _, err := Open(ctx, as(fresh, writer), nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of a schema without the tables = %v, want fs.ErrNotExist", err)
	}
}

// Append honours its context while another session holds the head row:
// it returns at its deadline, its statement is cancelled (the batch is not
// written once the holder lets go), and the next append takes position 1.
func TestPostgresAppendHonoursContextWhileTheHeadIsHeld(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.URL(t)
	s := pgStore(ctx, t, dsn)
	holder, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `UPDATE eventlog_head SET seq = seq`); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	start := time.Now()
	_, err = s.Append(short, eventlog.Draft{Kind: "k", Payload: 1})
	if took := time.Since(start); !errors.Is(err, context.DeadlineExceeded) || took > 3*time.Second {
		t.Errorf("Append with a 1s deadline while the head is held: %v after %v", err, took)
	}
	awaitBlocked(ctx, t, s, holder.PgConn().PID(), false) // the cancel reached the server
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	envs, err := s.Append(ctx, eventlog.Draft{Kind: "k", Payload: 2})
	if err != nil || envs[0].Seq != 1 {
		t.Fatalf("the next Append = %+v, %v; want position 1", envs, err)
	}
	if head, err := s.Head(ctx); head != 1 || err != nil {
		t.Errorf("Head = %d, %v: the cancelled batch went in", head, err)
	}
}

// When the wait for the WAL flush fails with a server error, the batches
// are not written again blind: Append finds out that they are in the log
// and on disk, and every batch is there once (40 batches, not 76).
func TestPostgresFailedFlushWaitWritesNothingTwice(t *testing.T) {
	ctx := context.Background()
	s := pgStore(ctx, t, pgtest.URL(t))
	s.flushHook = func() error {
		return &pgconn.PgError{Severity: "ERROR", Code: "XX000", Message: "the flush wait failed"}
	}
	const n = 40
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = s.Append(ctx, eventlog.Draft{Kind: "k", Payload: i}, eventlog.Draft{Kind: "k", Payload: i})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("batch %d: %v", i, err)
		}
	}
	s.flushHook = nil
	if head, err := s.Head(ctx); head != 2*n || err != nil {
		t.Errorf("Head = %d, %v; want %d", head, err, 2*n)
	}
}

// A batch whose flush wait failed and which is then found missing from its
// positions (lost with a server crash, its positions given back) is
// written again, once; one whose presence cannot be checked is
// ErrUnconfirmed, which does not pass for a refused statement.
func TestPostgresUnconfirmedBatch(t *testing.T) {
	ctx := context.Background()
	s := pgStore(ctx, t, pgtest.URL(t))
	if _, err := s.Append(ctx, eventlog.Draft{Kind: "k", Payload: 0}); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	s.flushHook = func() error {
		if calls.Add(1) > 1 {
			return nil
		}
		// What a crash before the flush leaves: no batch, the head back.
		_, err := s.pool.Exec(ctx, `WITH d AS (DELETE FROM events WHERE seq > 1) UPDATE eventlog_head SET seq = 1`)
		if err != nil {
			t.Error(err)
		}
		return errors.New("the connection broke")
	}
	envs, err := s.Append(ctx, eventlog.Draft{Kind: "lost", Payload: 1}, eventlog.Draft{Kind: "lost", Payload: 2})
	if err != nil || envs[0].Seq != 2 || calls.Load() != 2 {
		t.Fatalf("Append of a lost batch = %+v, %v (%d flush waits)", envs, err, calls.Load())
	}
	if head, err := s.Head(ctx); head != 3 || err != nil {
		t.Errorf("Head = %d, %v; want 3", head, err)
	}
	// The store is closed during the wait: nothing can be checked.
	s.flushHook = func() error {
		s.Close()
		return &pgconn.PgError{Severity: "FATAL", Code: "57P01", Message: "terminating connection"}
	}
	_, err = s.Append(ctx, eventlog.Draft{Kind: "k", Payload: 3})
	var refused *pgconn.PgError
	if !errors.Is(err, ErrUnconfirmed) || !errors.Is(err, eventlog.ErrClosed) || errors.As(err, &refused) || !strings.Contains(err.Error(), "positions 4 to 4") {
		t.Errorf("Append = %v, want ErrUnconfirmed (positions 4 to 4) and ErrClosed, no *pgconn.PgError", err)
	}
}

// A real server error in the wait for the WAL flush: in a database of the
// test's own, a role that may not run pg_logical_emit_message (the flush
// record). Its 40 concurrent batches go in once each (not 76 events for
// 40 batches), every Append succeeds once the batch is read back and seen
// flushed, and its Head waits for the flush the same way.
func TestPostgresFlushRecordRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pgtest.URL(t) // skips without a database
	base, err := url.Parse(os.Getenv(pgtest.Env))
	if err != nil {
		t.Fatal(err)
	}
	admin, err := pgx.Connect(ctx, base.String())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	suffix := fmt.Sprintf("%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	db, role := "tdb_"+suffix, "nf_"+suffix
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin.Exec(context.Background(), "DROP DATABASE "+db+" WITH (FORCE)")
		admin.Exec(context.Background(), "DROP ROLE "+role)
	})
	u := *base
	u.Path = "/" + db
	owner, err := Open(ctx, u.String(), &Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	pool := owner.(*store).pool
	rows, err := pool.Query(ctx, `SELECT oid::regprocedure::text FROM pg_proc WHERE proname = 'pg_logical_emit_message'`)
	if err != nil {
		t.Fatal(err)
	}
	fns, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(fns) == 0 {
		t.Fatalf("pg_logical_emit_message: %v %v", fns, err)
	}
	stmts := []string{
		"CREATE ROLE " + role + " LOGIN",
		"GRANT USAGE ON SCHEMA public TO " + role,
		"GRANT SELECT ON eventlog_schema TO " + role,
		"GRANT SELECT, UPDATE ON eventlog_head TO " + role,
		"GRANT SELECT, INSERT ON events TO " + role,
	}
	for _, fn := range fns {
		stmts = append(stmts, "REVOKE EXECUTE ON FUNCTION "+fn+" FROM PUBLIC")
	}
	for _, stmt := range stmts {
		if _, err := pool.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	u.User = url.User(role)
	s, err := Open(ctx, u.String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.(*store).flushWAL(); err == nil {
		t.Fatal("the role may write the flush record: the test tests nothing")
	}
	const n = 40
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = s.Append(ctx, eventlog.Draft{Kind: "k", Payload: i}, eventlog.Draft{Kind: "k", Payload: i})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("batch %d: %v", i, err)
		}
	}
	if head, err := s.Head(ctx); head != 2*n || err != nil {
		t.Errorf("the role's Head = %d, %v; want %d", head, err, 2*n)
	}
	var count int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM events`).Scan(&count); err != nil || count != 2*n {
		t.Errorf("%d events, %v; want %d", count, err, 2*n)
	}
}
