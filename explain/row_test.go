package explain

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/reducer"
)

// TestRowJSON: a Row, which embeds manifest.Segment, writes Harn's
// prompt_explain row: its keys in Harn's order (source after id, offset
// between bytes and digest), every field, escaped as encoding/json escapes
// the same fields written flat (HTML escaping left to the caller's
// encoder), and it reads back to the same row.
func TestRowJSON(t *testing.T) {
	e, err := Explain([]byte(`{"system":[{"content":"a <b> & c\u2028","register":"craft","rank":2},"x",
		{"content":"off","enabled":false}]}`),
		WithReduceOptions(reducer.WithBudget(mustBudget(t))))
	if err != nil {
		t.Fatal(err)
	}
	rank := 3
	e.Fragments = append(e.Fragments, Row{Segment: &manifest.Segment{ID: "p", Producer: "r", Bucket: "after",
		Reason: "shed <x>", Digest: "blake3:00", Register: "considered", Rank: &rank, Sources: []string{"s:1"}, Tokens: &rank}, Source: "s"})
	wantKeys := map[bool]string{
		true:  "id source producer bucket included reason bytes offset digest",
		false: "id source producer bucket included reason bytes digest",
	}
	for i, r := range e.Fragments {
		for _, escapeHTML := range []bool{true, false} {
			got, flat := encode(t, r, escapeHTML), encode(t, r.wire(), escapeHTML)
			if !bytes.Equal(got, flat) {
				t.Errorf("row %d (escapeHTML %v): got %s, want %s", i, escapeHTML, got, flat)
			}
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if keys := strings.Join(jsonKeys(t, b), " "); !strings.HasPrefix(keys, wantKeys[r.Included]) {
			t.Errorf("row %d: keys %q, want them to start %q", i, keys, wantKeys[r.Included])
		}
		var back Row
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(r, back); d != "" {
			t.Errorf("row %d does not read back (-want +got):\n%s", i, d)
		}
	}
	if f := e.Fragments; f[0].Register != "craft" || f[0].Tokens == nil || f[0].Offset == nil || f[2].Included {
		t.Fatalf("the fixture is not what it says: %+v", f)
	}
}

func mustBudget(t *testing.T) *budget.Budget {
	t.Helper()
	c, err := budget.NewCounter("bytes")
	if err != nil {
		t.Fatal(err)
	}
	b, err := budget.New(c, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func encode(t *testing.T, v any, escapeHTML bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// jsonKeys lists an object's keys in the order they are written.
func jsonKeys(t *testing.T, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	var keys []string
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}
