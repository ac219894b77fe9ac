package demo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/eventlog/postgres"
	"github.com/promptloom/promptloom/eventlog/sqlite"
	"github.com/promptloom/promptloom/internal/dsn"
	"github.com/promptloom/promptloom/internal/pgschema"
)

// OpenLog opens the log a --db, --record or --replay flag names: a
// postgres:// or postgresql:// URL opens a PostgreSQL log, anything else is
// the path of a SQLite file, taken as it is. With create (--db, --record:
// the run writes its log) a PostgreSQL log's tables are created if the
// schema has none (postgres.Options.Migrate); without it (--replay) the
// log must be there.
func OpenLog(ctx context.Context, loc string, clock func() time.Time, create bool) (eventlog.Store, error) {
	if err := CheckPath(loc); err != nil {
		return nil, err
	}
	if IsURL(loc) {
		s, err := postgres.Open(ctx, loc, &postgres.Options{Clock: clock, Migrate: create})
		var noSchema *pgschema.NoSchemaError
		if errors.As(err, &noSchema) {
			// Not the tables but their schema is missing: the error says
			// how to create it, which no run of the demo does.
			return nil, err
		}
		if errors.Is(err, fs.ErrNotExist) {
			// The library names its Go option; the command names the
			// run that creates the tables.
			return nil, fmt.Errorf("%s: no event log tables in this schema; a run with --db URL or --record URL creates them: %w", dsn.Redacted(loc), fs.ErrNotExist)
		}
		return s, err
	}
	return sqlite.Open(loc, &eventlog.Options{Clock: clock})
}

// IsURL reports whether dsn names a PostgreSQL log rather than a file.
func IsURL(dsn string) bool {
	l := strings.ToLower(dsn)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// CheckPath refuses, for a location that is not a URL, PostgreSQL's
// key=value form of a connection string (host=db dbname=runs password=...):
// two or more space-separated pairs and nothing else, one of them a key
// libpq reads to connect. Taken as a path it would name a file after the
// password and print it in every error; the refusal shows it masked.
func CheckPath(loc string) error {
	if IsURL(loc) {
		return nil
	}
	fields := strings.Fields(loc)
	if len(fields) < 2 {
		return nil
	}
	known := false
	for _, f := range fields {
		k, _, ok := strings.Cut(f, "=")
		if !ok || k == "" {
			return nil
		}
		switch k {
		case "host", "hostaddr", "port", "dbname", "user", "password", "sslmode", "sslpassword", "passfile":
			known = true
		}
	}
	if !known {
		return nil
	}
	return fmt.Errorf("%s is a key=value connection string; give a postgres:// URL instead", dsn.Redacted(loc))
}
