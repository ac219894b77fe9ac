package cli

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/internal/testkit/pgtest"
)

// An empty file is refused for what it is, a file of no lines, not as a
// torn last line; it is refused before the store is asked (the URL names
// no server).
func TestTranscriptImportOfAnEmptyFile(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := run(t, "transcript", "import", empty, "postgres://127.0.0.1:1/runs?session=empty")
	if code != ExitBadArgs || !strings.Contains(errOut, empty+" is empty: it holds no lines to import") || strings.Contains(errOut, "newline") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// transcript migrate, and every command that opens a store, on a
// search_path whose schema does not exist say so and how to create it.
func TestTranscriptNoSchema(t *testing.T) {
	dsn := pgtest.NoSchemaURL(t)
	u, _ := url.Parse(dsn)
	name := u.Query().Get("search_path")
	for _, args := range [][]string{
		{"transcript", "migrate", dsn},
		{"transcript", "export", dsn + "&session=s"},
	} {
		code, _, errOut := run(t, args...)
		if code != ExitBadArgs || !strings.Contains(errOut, "CREATE SCHEMA "+name) || strings.Contains(errOut, "3F000") || strings.Contains(errOut, "no transcript tables") {
			t.Errorf("%s: exit %d: %s", args[:2], code, errOut)
		}
	}
}
