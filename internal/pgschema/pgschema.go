// Package pgschema is the versioned schema both PostgreSQL drivers keep
// (eventlog/postgres, journal/postgres): a table of versions that every
// Open reads, and a migration, its own step, that creates the tables when
// the schema has none. Opening an existing schema needs only SELECT on the
// version table; so does migrating one, since the migration asks whether
// the table is there before it would create it.
package pgschema

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Schema is one driver's tables.
type Schema struct {
	// Table is the version table (one int column, version).
	Table string
	// Lock names the advisory lock migrations take turns on.
	Lock string
	// Create makes the other tables and inserts their version.
	Create string
}

// querier is a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Version is the version the schema's tables are at: 0 when it has none
// (no version table, or an empty one).
func (s Schema) Version(ctx context.Context, q querier) (int, error) {
	var version int
	err := q.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM `+s.Table).Scan(&version)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42P01" { // undefined_table
		return 0, nil
	}
	return version, err
}

// Migrate creates the tables when the schema has none, under the advisory
// lock (processes migrating at once take turns), and returns the version
// the schema is then at; the caller compares it with its own. A schema
// that has the tables is only read.
func (s Schema) Migrate(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, s.Lock); err != nil {
		return 0, err
	}
	// CREATE TABLE IF NOT EXISTS needs CREATE on the schema even when the
	// table is there: ask first.
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, s.Table).Scan(&exists); err != nil {
		return 0, err
	}
	if !exists {
		if _, err := tx.Exec(ctx, `CREATE TABLE `+s.Table+` (version int NOT NULL)`); err != nil {
			return 0, err
		}
	}
	version, err := s.Version(ctx, tx)
	if err != nil {
		return 0, err
	}
	if version == 0 {
		if _, err := tx.Exec(ctx, s.Create); err != nil {
			return 0, err
		}
		if version, err = s.Version(ctx, tx); err != nil {
			return 0, err
		}
	}
	return version, tx.Commit(ctx)
}
