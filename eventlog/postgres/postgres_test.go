package postgres

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/internal/testkit/pgtest"
	"github.com/promptloom/promptloom/internal/testkit/storetest"
)

var t0 = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)

// open opens a fresh log, in a schema of the test's own.
func open(t *testing.T, opts *Options) eventlog.Store {
	s, err := Open(context.Background(), pgtest.URL(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The conformance suite: everything an eventlog.Store promises
// (storetest.Run), with either way of flushing.
func TestConformancePostgres(t *testing.T) {
	storetest.Run(t, func(t *testing.T, clock func() time.Time) eventlog.Store {
		return open(t, &Options{Clock: clock})
	})
}

func TestConformancePostgresSerialFlush(t *testing.T) {
	storetest.Run(t, func(t *testing.T, clock func() time.Time) eventlog.Store {
		return open(t, &Options{Clock: clock, SerialFlush: true})
	})
}

func TestPostgresReopenReturnsWhatWasCommitted(t *testing.T) {
	url := pgtest.URL(t)
	storetest.Reopen(t, func(clock func() time.Time) (eventlog.Store, error) {
		return Open(context.Background(), url, &Options{Clock: clock})
	})
}

// TestCrashChild is the writer of TestPostgresCrash and
// TestPostgresServerCrash (storetest.StartWriter).
func TestCrashChild(t *testing.T) {
	storetest.CrashChild(t, func(url string) (eventlog.Store, error) {
		return Open(context.Background(), url, &Options{SerialFlush: os.Getenv("PROMPTLOOM_CRASH_SERIAL") != ""})
	})
}

// A writer killed with SIGKILL mid-append: the server rolls back the killed
// client's open transaction, so no partial batch and no gap, and the next
// append follows the last whole batch.
func TestPostgresCrash(t *testing.T) {
	url := pgtest.URL(t)
	storetest.Crash(t, url, func() (eventlog.Store, error) { return Open(context.Background(), url, nil) })
}

// BenchmarkAppend measures append throughput (storetest.BenchAppend), with
// either way of flushing. Quoted in docs/performance.md.
func BenchmarkAppend(b *testing.B) {
	for _, c := range []struct {
		name string
		opts *Options
	}{{"Postgres", nil}, {"PostgresSerialFlush", &Options{SerialFlush: true}}} {
		storetest.BenchAppend(b, c.name, func(b *testing.B) func() eventlog.Store {
			url := pgtest.URL(b)
			return func() eventlog.Store {
				s, err := Open(context.Background(), url, c.opts)
				if err != nil {
					b.Fatal(err)
				}
				return s
			}
		})
	}
}

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
