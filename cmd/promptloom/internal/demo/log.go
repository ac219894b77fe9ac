package demo

import (
	"context"
	"strings"
	"time"

	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/eventlog/postgres"
	"github.com/promptloom/promptloom/eventlog/sqlite"
)

// OpenLog opens the log a --db, --record or --replay flag names: a
// postgres:// or postgresql:// URL opens a PostgreSQL log, anything else is
// the path of a SQLite file, taken as it is. With create (--db, --record:
// the run writes its log) a PostgreSQL log's tables are created if the
// schema has none (postgres.Options.Migrate); without it (--replay) the
// log must be there.
func OpenLog(ctx context.Context, dsn string, clock func() time.Time, create bool) (eventlog.Store, error) {
	if IsURL(dsn) {
		return postgres.Open(ctx, dsn, &postgres.Options{Clock: clock, Migrate: create})
	}
	return sqlite.Open(dsn, &eventlog.Options{Clock: clock})
}

// IsURL reports whether dsn names a PostgreSQL log rather than a file.
func IsURL(dsn string) bool {
	l := strings.ToLower(dsn)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}
