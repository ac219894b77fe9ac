package eventlog

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom/internal/testkit/pgtest"
	"github.com/promptloom/promptloom/internal/testkit/storetest"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)

// opener makes a fresh, empty store for one test; the test closes it.
type opener func(t *testing.T, opts ...Option) Store

func openMemory(t *testing.T, opts ...Option) Store { return NewMemory(opts...) }

func openSQLite(t *testing.T, opts ...Option) Store {
	s, err := OpenSQLite(filepath.Join(t.TempDir(), "log.db"), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func openPostgres(t *testing.T, opts ...Option) Store {
	s, err := OpenPostgres(context.Background(), pgtest.URL(t), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The conformance suite: everything a Store promises, run against each
// store alike (conformance_test.go).
func TestConformanceMemory(t *testing.T)   { conformance(t, openMemory) }
func TestConformanceSQLite(t *testing.T)   { conformance(t, openSQLite) }
func TestConformancePostgres(t *testing.T) { conformance(t, openPostgres) }
func TestConformancePostgresSerialFlush(t *testing.T) {
	conformance(t, func(t *testing.T, opts ...Option) Store {
		return openPostgres(t, append(opts, WithSerialFlush())...)
	})
}

func conformance(t *testing.T, open opener) {
	for _, c := range conformanceCases {
		t.Run(c.name, func(t *testing.T) {
			s := open(t, WithClock(storetest.Clock(t0)))
			defer s.Close()
			c.test(t, s)
		})
	}
	// The close cases close the store themselves.
	for _, c := range closeCases {
		t.Run(c.name, func(t *testing.T) { c.test(t, open(t, WithClock(storetest.Clock(t0)))) })
	}
}

// all reads the whole log through Scan and Get, checking they agree.
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

func TestSQLiteReopenReturnsWhatWasCommitted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.db")
	reopen(t, func(opts ...Option) (Store, error) { return OpenSQLite(path, opts...) })
}

func TestPostgresReopenReturnsWhatWasCommitted(t *testing.T) {
	url := pgtest.URL(t)
	reopen(t, func(opts ...Option) (Store, error) { return Open(context.Background(), url, opts...) })
}

func reopen(t *testing.T, open func(...Option) (Store, error)) {
	s, err := open(WithClock(storetest.Clock(t0)))
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

	s2, err := open()
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

// pgURL is pgtest.URL for benchmarks too.
func pgURL(tb testing.TB) string { return pgtest.URL(tb) }

// A connection URL quoted in an error never carries its password.
func TestDSNForError(t *testing.T) {
	for dsn, want := range map[string]string{
		"postgres://alice:s3cret@db.example:5432/log":                 "postgres://alice:xxxxx@db.example:5432/log",
		"postgres://alice@db.example/log?password=s3cret&sslmode=off": "postgres://alice@db.example/log?password=xxxxx&sslmode=off",
		"postgres://alice:p%40ss@db.example/log":                      "postgres://alice:xxxxx@db.example/log",
		"postgres://db.example/log":                                   "postgres://db.example/log",
		"postgres://alice:s3cret@db.example:port/log\x7f":             "(a connection URL that does not parse)",
	} {
		if got := dsnForError(dsn); got != want || strings.Contains(got, "s3cret") {
			t.Errorf("dsnForError(%q) = %q, want %q", dsn, got, want)
		}
	}
}
