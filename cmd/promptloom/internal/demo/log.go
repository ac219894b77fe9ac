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
// the path of a SQLite file, taken as it is.
func OpenLog(ctx context.Context, dsn string, clock func() time.Time) (eventlog.Store, error) {
	if IsURL(dsn) {
		return postgres.Open(ctx, dsn, &postgres.Options{Clock: clock})
	}
	return sqlite.Open(dsn, &eventlog.Options{Clock: clock})
}

// IsURL reports whether dsn names a PostgreSQL log rather than a file.
func IsURL(dsn string) bool {
	l := strings.ToLower(dsn)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}
