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
	"fmt"
	"io/fs"
	"slices"
	"strings"

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

// NoSchemaError is a search_path that names no schema the role may use,
// so there is nowhere to read the tables from or create them in (the
// server's own word for it is SQLSTATE 3F000, "no schema has been selected
// to create in"). It matches fs.ErrNotExist, as a schema without the
// tables does.
type NoSchemaError struct {
	// SearchPath is the connection's search_path, as the server has it.
	SearchPath string
	// Role is the role connected.
	Role string
	// Missing are the schemas the search_path names that do not exist;
	// Denied, those that exist and the role has no USAGE on.
	Missing, Denied []string
	// quoted is each name above as SQL takes it (quote_ident).
	quoted map[string]string
}

func (e *NoSchemaError) Error() string {
	switch {
	case len(e.Missing) > 0:
		s := fmt.Sprintf("the schema %s named by search_path does not exist: create it with CREATE SCHEMA %s",
			strings.Join(e.Missing, ", "), e.ident(e.Missing[0]))
		if len(e.Missing) > 1 {
			s = fmt.Sprintf("no schema named by search_path (%s) exists: create one with CREATE SCHEMA %s",
				strings.Join(e.Missing, ", "), e.ident(e.Missing[0]))
		}
		if len(e.Denied) > 0 {
			s += fmt.Sprintf(" (role %s has no USAGE on %s)", e.Role, strings.Join(e.Denied, ", "))
		}
		return s
	case len(e.Denied) > 0:
		return fmt.Sprintf("role %s may not use the schema %s named by search_path: GRANT USAGE ON SCHEMA %s TO %s",
			e.Role, strings.Join(e.Denied, ", "), e.ident(e.Denied[0]), e.ident(e.Role))
	}
	return fmt.Sprintf("search_path (%q) names no schema: name one in the URL (?search_path=NAME) and create it with CREATE SCHEMA NAME", e.SearchPath)
}

// Is makes a NoSchemaError match fs.ErrNotExist.
func (e *NoSchemaError) Is(target error) bool { return target == fs.ErrNotExist }

// Current is the schema the tables are in: the first of the search_path
// that exists and the role may use; none is a *NoSchemaError.
func Current(ctx context.Context, q querier) (string, error) {
	var schema, path, role string
	err := q.QueryRow(ctx, `SELECT COALESCE(current_schema(), ''), current_setting('search_path'), current_user`).Scan(&schema, &path, &role)
	if err != nil || schema != "" {
		return schema, err
	}
	e := &NoSchemaError{SearchPath: path, Role: role}
	named := SearchPath(path)
	if len(named) == 0 {
		return "", e
	}
	all := append(slices.Clip(named), role)
	var found, usable, quoted []string
	err = q.QueryRow(ctx, `SELECT
		ARRAY(SELECT nspname::text FROM pg_namespace WHERE nspname = ANY($1)),
		ARRAY(SELECT nspname::text FROM pg_namespace WHERE nspname = ANY($1) AND has_schema_privilege(oid, 'USAGE')),
		ARRAY(SELECT quote_ident(n) FROM unnest($2::text[]) WITH ORDINALITY AS u(n, i) ORDER BY i)`,
		named, all).Scan(&found, &usable, &quoted)
	if err != nil {
		return "", err
	}
	e.quoted = make(map[string]string, len(quoted))
	for i, n := range all {
		e.quoted[n] = quoted[i]
	}
	for _, n := range named {
		switch {
		case !slices.Contains(found, n):
			e.Missing = append(e.Missing, n)
		case !slices.Contains(usable, n):
			e.Denied = append(e.Denied, n)
		}
	}
	return "", e
}

// SearchPath is the schemas a search_path setting names, as the server
// reads it: comma-separated identifiers, a quoted one taken as it is
// ("" for a quote), an unquoted one in lower case; "$user" and the
// schemas every search_path has (pg_catalog, pg_temp) are left out.
func SearchPath(setting string) []string {
	var names []string
	for i := 0; i < len(setting); {
		for i < len(setting) && (setting[i] == ' ' || setting[i] == '\t' || setting[i] == '\n') {
			i++
		}
		var name string
		quoted := i < len(setting) && setting[i] == '"'
		if quoted {
			var b strings.Builder
			for i++; i < len(setting); i++ {
				if setting[i] == '"' {
					if i+1 < len(setting) && setting[i+1] == '"' {
						b.WriteByte('"')
						i++
						continue
					}
					i++
					break
				}
				b.WriteByte(setting[i])
			}
			name = b.String()
			for i < len(setting) && setting[i] != ',' {
				i++
			}
		} else {
			j := strings.IndexByte(setting[i:], ',')
			if j < 0 {
				j = len(setting) - i
			}
			name = strings.ToLower(strings.TrimSpace(setting[i : i+j]))
			i += j
		}
		i++ // the comma
		if name != "" && name != "$user" && name != "pg_catalog" && name != "pg_temp" && !strings.HasPrefix(name, "pg_temp_") {
			names = append(names, name)
		}
	}
	return names
}

// ident is name as the server quotes it (quote_ident), or always
// quoted when the server did not say.
func (e *NoSchemaError) ident(name string) string {
	if q, ok := e.quoted[name]; ok {
		return q
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}
