package journal

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The writer reads back only what it appends after (the last line, a
// session's open), and the reader every line: both with internal/json,
// the one JSON reader, so no line reads one way here and another there.
// Neither imports gjson; transcript imports encoding/json not at all, and
// journal only to write (its Marshal and RawMessage), never to decode.
func TestOneJSONReader(t *testing.T) {
	for _, dir := range []string{".", "../transcript", "../internal/chain"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				switch {
				case p == "github.com/tidwall/gjson":
					t.Errorf("%s reads JSON with gjson: read it with internal/json", name)
				case p == "encoding/json" && dir != ".":
					t.Errorf("%s imports encoding/json: read it with internal/json", name)
				}
			}
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			src := string(b)
			for _, decode := range []string{"json.Unmarshal", "json.NewDecoder", "json.Valid"} {
				if strings.Contains(src, decode+"(") {
					t.Errorf("%s decodes with %s: read it with internal/json", name, decode)
				}
			}
		}
	}
}
