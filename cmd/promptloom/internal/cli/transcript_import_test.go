package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
