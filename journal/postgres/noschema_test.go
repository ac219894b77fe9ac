package postgres

import (
	"errors"
	"io/fs"
	"net/url"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/internal/pgschema"
	"github.com/promptloom/promptloom/internal/testkit/pgtest"
)

// A search_path whose schema does not exist is said to be that, with the
// statement that creates it, whether Open migrates (it was SQLSTATE
// 3F000) or not (it was "no transcript tables"); it still matches
// fs.ErrNotExist.
func TestPostgresNoSchema(t *testing.T) {
	dsn := pgtest.NoSchemaURL(t)
	u, _ := url.Parse(dsn)
	name := u.Query().Get("search_path")
	for _, o := range []*Options{nil, {Migrate: true}} {
		_, err := Open(ctx, dsn, o)
		var ns *pgschema.NoSchemaError
		if !errors.As(err, &ns) || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "CREATE SCHEMA "+name) {
			t.Errorf("Open (%+v) on search_path=%s: %v", o, name, err)
		}
	}
}
