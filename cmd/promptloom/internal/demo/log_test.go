package demo

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/internal/testkit/pgtest"
)

// --db URL on a search_path whose schema does not exist says so, and how
// to create it, not that the schema has no tables (a run with --db would
// create those).
func TestOpenLogNoSchema(t *testing.T) {
	dsn := pgtest.NoSchemaURL(t)
	u, _ := url.Parse(dsn)
	name := u.Query().Get("search_path")
	for _, create := range []bool{true, false} {
		_, err := OpenLog(context.Background(), dsn, nil, create)
		if err == nil || !strings.Contains(err.Error(), "CREATE SCHEMA "+name) || strings.Contains(err.Error(), "no event log tables") {
			t.Errorf("OpenLog (create %v) on search_path=%s: %v", create, name, err)
		}
	}
}
