package explain

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/harn/options"

	"github.com/google/go-cmp/cmp"
)

// vector is one file of testdata/conformance/*/ or testdata/vectors/:
// options in, and either the explanation expected out or a word the error
// must name.
type vector struct {
	Options    json.RawMessage `json:"options"`
	Expect     map[string]any  `json:"expect"`
	ErrorNames string          `json:"error_names"`
}

func vectorFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{"../testdata/conformance/core/*.json", "../testdata/vectors/*.json"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 28 {
		t.Fatalf("found %d vector files; the conformance vectors are missing", len(files))
	}
	return files
}

func TestVectors(t *testing.T) {
	for _, file := range vectorFiles(t) {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".json"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var v vector
			if err := json.Unmarshal(data, &v); err != nil {
				t.Fatal(err)
			}
			e, err := Explain(v.Options, nil)
			if v.ErrorNames != "" {
				if err == nil {
					t.Fatalf("Explain succeeded; want an error naming %q", v.ErrorNames)
				}
				if !strings.Contains(err.Error(), v.ErrorNames) || strings.Contains(err.Error(), "\n") {
					t.Errorf("error %q is not one line naming %q", err, v.ErrorNames)
				}
				var oe *options.Error
				if strings.HasPrefix(filepath.Base(file), "err-duplicate") != !errors.As(err, &oe) {
					t.Errorf("error %T: bad options must be *options.Error; only a duplicate is caught by the manifest", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Explain: %v", err)
			}
			if diff := cmp.Diff(v.Expect, projectKeys(t, e, v.Expect)); diff != "" {
				t.Errorf("explanation differs from the vector (-want +got):\n%s", diff)
			}
		})
	}
}

// projectKeys returns e's JSON form cut down to the keys the vector names, so
// that extra keys (offset, producer, ...) are allowed, as the conformance
// README says.
func projectKeys(t *testing.T, e *Explanation, want map[string]any) map[string]any {
	t.Helper()
	var buf bytes.Buffer
	if err := e.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for k, wv := range want {
		gv, ok := got[k]
		if !ok {
			continue // reported as missing by the diff
		}
		if k == "fragments" {
			gv = projectRows(gv.([]any), wv.([]any))
		}
		out[k] = gv
	}
	return out
}

func projectRows(got, want []any) []any {
	out := make([]any, len(got))
	for i, g := range got {
		if i >= len(want) {
			out[i] = g
			continue
		}
		row := map[string]any{}
		for k := range want[i].(map[string]any) {
			if v, ok := g.(map[string]any)[k]; ok {
				row[k] = v
			}
		}
		out[i] = row
	}
	return out
}
