// Package pgtest gives tests a PostgreSQL log of their own: a fresh schema
// in the database named by PROMPTLOOM_TEST_POSTGRES, dropped when the test
// ends. Tests that need it skip, naming the variable, when it is unset.
package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Env is the variable that holds the test database's URL.
const Env = "PROMPTLOOM_TEST_POSTGRES"

var n atomic.Int64

// URL returns a postgres:// URL whose search_path is a new, empty schema,
// or skips the test when Env is unset.
func URL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(Env)
	if base == "" {
		t.Skipf("set %s to a postgres:// URL (a database the test may create schemas in) to run this test", Env)
	}
	schema := fmt.Sprintf("t_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, n.Add(1))
	ctx := context.Background()
	// Parsed as a pool's URL, so pool_* parameters are allowed.
	pcfg, err := pgxpool.ParseConfig(base)
	if err != nil {
		t.Fatalf("%s: %v", Env, err)
	}
	conn, err := pgx.ConnectConfig(ctx, pcfg.ConnConfig.Copy())
	if err != nil {
		t.Fatalf("%s: %v", Env, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn, err := pgx.ConnectConfig(ctx, pcfg.ConnConfig.Copy())
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Error(err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", Env, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// NoSchemaURL returns a postgres:// URL whose search_path names a schema
// that does not exist, or skips the test when Env is unset.
func NoSchemaURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(Env)
	if base == "" {
		t.Skipf("set %s to a postgres:// URL (a database the test may create schemas in) to run this test", Env)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", Env, err)
	}
	q := u.Query()
	q.Set("search_path", fmt.Sprintf("t_missing_%d_%d", os.Getpid(), n.Add(1)))
	u.RawQuery = q.Encode()
	return u.String()
}
