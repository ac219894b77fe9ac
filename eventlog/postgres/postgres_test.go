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

// open opens a fresh log, in a schema of the test's own (Migrate creates
// its tables).
func open(t *testing.T, opts *Options) eventlog.Store {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	o.Migrate = true
	s, err := Open(context.Background(), pgtest.URL(t), &o)
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
		return Open(context.Background(), url, &Options{Clock: clock, Migrate: true})
	})
}

// TestCrashChild is the writer of TestPostgresCrash and
// TestPostgresServerCrash (storetest.StartWriter).
func TestCrashChild(t *testing.T) {
	storetest.CrashChild(t, func(url string) (eventlog.Store, error) {
		return Open(context.Background(), url, &Options{SerialFlush: os.Getenv("PROMPTLOOM_CRASH_SERIAL") != "", Migrate: true})
	})
}

// A writer killed with SIGKILL mid-append: the server rolls back the killed
// client's open transaction, so no partial batch and no gap, and the next
// append follows the last whole batch.
func TestPostgresCrash(t *testing.T) {
	url := pgtest.URL(t)
	storetest.Crash(t, url, func() (eventlog.Store, error) { return Open(context.Background(), url, &Options{Migrate: true}) })
}

// BenchmarkAppend measures append throughput (storetest.BenchAppend), with
// either way of flushing. Quoted in docs/performance.md.
func BenchmarkAppend(b *testing.B) {
	for _, c := range []struct {
		name string
		opts *Options
	}{{"Postgres", &Options{Migrate: true}}, {"PostgresSerialFlush", &Options{SerialFlush: true, Migrate: true}}} {
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

// An error of Open shows no secret pgx reads from the connection string,
// in either of its forms: the URL's password, ?password= (with a ';' that
// net/url would drop the pair for), ?sslpassword=, and keyword=value pairs
// quoted or not. Port 1 refuses the connection, so Open fails after
// parsing; a bad port fails in parsing.
func TestOpenErrorShowsNoSecret(t *testing.T) {
	for _, dsn := range []string{
		"postgres://alice:s3cret@127.0.0.1:1/log?connect_timeout=2",
		"postgres://alice@127.0.0.1:1/log?password=s3cret;x&connect_timeout=2",
		"postgres://alice@127.0.0.1:1/log?sslpassword=s3cret&sslmode=disable&connect_timeout=2",
		"postgres://alice:s3cret@127.0.0.1:1/log?sslpassword=s3cret2&pool_max_conns=zero",
		"host=127.0.0.1 port=1 user=alice password = 's3cret x' connect_timeout=2",
		`host=127.0.0.1 port=1 password='s3cret\' x' sslpassword=s3cret2 connect_timeout=2`,
		"host=127.0.0.1 port=nope password='s3cret x'",
	} {
		_, err := Open(context.Background(), dsn, nil)
		if err == nil {
			t.Errorf("Open(%q) succeeded", dsn)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Open(%q): %v", dsn, err)
		}
	}
}
