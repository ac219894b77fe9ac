package pgschema

import (
	"context"
	"errors"
	"io/fs"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/internal/testkit/pgtest"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A search_path is read as the server reads it.
func TestSearchPath(t *testing.T) {
	for setting, want := range map[string][]string{
		`loom`:                                 {"loom"},
		`"$user", public`:                      {"public"},
		`$user,Loom , "My ""S"" x",pg_catalog`: {"loom", `My "S" x`},
		`"a,b", pg_temp`:                       {"a,b"},
		``:                                     nil,
		` , `:                                  nil,
	} {
		if got := SearchPath(setting); !slices.Equal(got, want) {
			t.Errorf("SearchPath(%q) = %q, want %q", setting, got, want)
		}
	}
}

func pool(t *testing.T, dsn string) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// A search_path naming no schema, or one the role may not use, is a
// NoSchemaError saying what to run; an existing usable one is the schema.
func TestPostgresCurrent(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.URL(t)
	u, _ := url.Parse(dsn)
	schema := u.Query().Get("search_path")
	if got, err := Current(ctx, pool(t, dsn)); got != schema || err != nil {
		t.Errorf("Current = %q, %v; want %q", got, err, schema)
	}

	missing := pgtest.NoSchemaURL(t)
	u, _ = url.Parse(missing)
	name := u.Query().Get("search_path")
	_, err := Current(ctx, pool(t, missing))
	var ns *NoSchemaError
	if !errors.As(err, &ns) || !errors.Is(err, fs.ErrNotExist) || !slices.Equal(ns.Missing, []string{name}) ||
		!strings.Contains(err.Error(), "the schema "+name+" named by search_path does not exist: create it with CREATE SCHEMA "+name) {
		t.Errorf("a missing schema: %v", err)
	}

	// A schema the role has no USAGE on.
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	role := "r_" + strings.TrimPrefix(schema, "t_")
	if _, err := conn.Exec(ctx, "CREATE ROLE "+role+" LOGIN"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Exec(ctx, "DROP ROLE "+role) })
	u, _ = url.Parse(dsn)
	u.User = url.User(role)
	p := pool(t, u.String())
	_, err = Current(ctx, p)
	want := "role " + role + " may not use the schema " + schema + " named by search_path: GRANT USAGE ON SCHEMA " + schema + " TO " + role
	if !errors.As(err, &ns) || !slices.Equal(ns.Denied, []string{schema}) || err.Error() != want {
		t.Errorf("a schema without USAGE: %v\nwant %s", err, want)
	}
	p.Close()

	// No schema named at all.
	u, _ = url.Parse(dsn)
	q := u.Query()
	q.Set("search_path", `"$user"`)
	u.RawQuery = q.Encode()
	if _, err := Current(ctx, pool(t, u.String())); !errors.As(err, &ns) || !strings.Contains(err.Error(), "names no schema: name one in the URL") {
		t.Errorf("a search_path of $user: %v", err)
	}
}
