package eventlog_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/internal/testkit/pgtest"
	"github.com/promptloom/promptloom/internal/testkit/storetest"
)

func openSQLite(t *testing.T, opts ...eventlog.Option) eventlog.Store {
	s, err := eventlog.OpenSQLite(filepath.Join(t.TempDir(), "log.db"), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func openPostgres(t *testing.T, opts ...eventlog.Option) eventlog.Store {
	s, err := eventlog.OpenPostgres(context.Background(), pgtest.URL(t), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The conformance suite: everything a Store promises, run against each
// store alike.
func TestConformanceMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T, clock func() time.Time) eventlog.Store {
		return eventlog.NewMemory(eventlog.WithClock(clock))
	})
}

func TestConformanceSQLite(t *testing.T) {
	storetest.Run(t, func(t *testing.T, clock func() time.Time) eventlog.Store {
		return openSQLite(t, eventlog.WithClock(clock))
	})
}

func TestConformancePostgres(t *testing.T) {
	storetest.Run(t, func(t *testing.T, clock func() time.Time) eventlog.Store {
		return openPostgres(t, eventlog.WithClock(clock))
	})
}

func TestConformancePostgresSerialFlush(t *testing.T) {
	storetest.Run(t, func(t *testing.T, clock func() time.Time) eventlog.Store {
		return openPostgres(t, eventlog.WithClock(clock), eventlog.WithSerialFlush())
	})
}

func TestSQLiteReopenReturnsWhatWasCommitted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.db")
	storetest.Reopen(t, func(clock func() time.Time) (eventlog.Store, error) {
		return eventlog.OpenSQLite(path, eventlog.WithClock(clock))
	})
}

func TestPostgresReopenReturnsWhatWasCommitted(t *testing.T) {
	url := pgtest.URL(t)
	storetest.Reopen(t, func(clock func() time.Time) (eventlog.Store, error) {
		return eventlog.Open(context.Background(), url, eventlog.WithClock(clock))
	})
}

// TestCrashChild is the writer of TestSQLiteCrash, TestPostgresCrash and
// TestPostgresServerCrash (storetest.StartWriter).
func TestCrashChild(t *testing.T) {
	storetest.CrashChild(t, func(dsn string) (eventlog.Store, error) {
		var opts []eventlog.Option
		if os.Getenv("PROMPTLOOM_CRASH_SERIAL") != "" {
			opts = append(opts, eventlog.WithSerialFlush())
		}
		return eventlog.Open(context.Background(), dsn, opts...)
	})
}

// A writer killed with SIGKILL mid-append: reopened, the log holds every
// acknowledged event, and no partial batch.
func TestSQLiteCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.db")
	storetest.Crash(t, path, func() (eventlog.Store, error) { return eventlog.OpenSQLite(path) })
}

// The same on PostgreSQL: the server rolls back the killed client's open
// transaction, so no partial batch and no gap, and the next append follows
// the last whole batch.
func TestPostgresCrash(t *testing.T) {
	url := pgtest.URL(t)
	storetest.Crash(t, url, func() (eventlog.Store, error) { return eventlog.OpenPostgres(context.Background(), url) })
}

// BenchmarkAppend measures append throughput (storetest.BenchAppend).
// Quoted in docs/performance.md.
func BenchmarkAppend(b *testing.B) {
	storetest.BenchAppend(b, "SQLite", func(b *testing.B) func() eventlog.Store {
		path := filepath.Join(b.TempDir(), "log.db")
		return func() eventlog.Store {
			s, err := eventlog.OpenSQLite(path)
			if err != nil {
				b.Fatal(err)
			}
			return s
		}
	})
	for name, opts := range map[string][]eventlog.Option{"Postgres": nil, "PostgresSerialFlush": {eventlog.WithSerialFlush()}} {
		storetest.BenchAppend(b, name, func(b *testing.B) func() eventlog.Store {
			url := pgtest.URL(b)
			return func() eventlog.Store {
				s, err := eventlog.OpenPostgres(context.Background(), url, opts...)
				if err != nil {
					b.Fatal(err)
				}
				return s
			}
		})
	}
}
