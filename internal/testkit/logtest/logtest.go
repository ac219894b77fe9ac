// Package logtest opens durable event logs for the tests of packages that
// may not import a driver themselves: the layering keeps provenance, for
// one, free of databases, but its folds are checked on real logs too.
package logtest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/eventlog/postgres"
	"github.com/promptloom/promptloom/eventlog/sqlite"
	"github.com/promptloom/promptloom/internal/testkit/pgtest"
)

// SQLite returns a function that opens a SQLite log in the test's
// temporary directory: the same file each time it is called.
func SQLite(t testing.TB) func() (eventlog.Store, error) {
	path := filepath.Join(t.TempDir(), "log.db")
	return func() (eventlog.Store, error) { return sqlite.Open(path, nil) }
}

// Postgres returns a function that opens a PostgreSQL log in a schema of
// the test's own (pgtest.URL): the same log each time it is called. It
// skips the test when no server is configured.
func Postgres(t testing.TB) func() (eventlog.Store, error) {
	url := pgtest.URL(t)
	return func() (eventlog.Store, error) {
		return postgres.Open(context.Background(), url, &postgres.Options{Migrate: true})
	}
}
