package explain

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/manifest"

	"github.com/google/go-cmp/cmp"
)

// TestRowJSON: a Row, which embeds manifest.Segment, writes Harn's
// prompt_explain row: its keys in Harn's order (source after id, offset
// between bytes and digest), every field, escaped as encoding/json escapes
// the same fields written flat (HTML escaping left to the caller's
// encoder), and it reads back to the same row.
func TestRowJSON(t *testing.T) {
	e, err := Explain([]byte(`{"system":[{"content":"a <b> & c\u2028","register":"craft","rank":2},"x",
		{"content":"off","enabled":false}]}`),
		&Options{Budget: mustBudget(t)})
	if err != nil {
		t.Fatal(err)
	}
	rank := 3
	e.Fragments = append(e.Fragments, Row{Segment: &manifest.Segment{ID: "p", Producer: "r", Bucket: "after",
		Reason: "shed <x>", Digest: digest.Of("x"), Register: "considered", Rank: &rank, Sources: []string{"s:1"}, Tokens: &rank}, Source: "s"})
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
	b := &budget.Budget{Counter: c, Total: 1000}
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

// TestRowRoundTrip: an explanation's JSON read back with encoding/json
// gives rows that each have a segment of their own, and writes the same
// bytes again; a row without one (built by hand, or read from JSON with
// none of its fields) writes as an empty row instead of panicking.
func TestRowRoundTrip(t *testing.T) {
	e, err := Explain([]byte(`{"system":[{"content":"a","register":"craft","rank":2},"b",{"content":"c","enabled":false}],
		"tools":[{"name":"t","guidance":"use t"}]}`), &Options{Budget: mustBudget(t)})
	if err != nil {
		t.Fatal(err)
	}
	var first bytes.Buffer
	if err := e.WriteJSON(&first); err != nil {
		t.Fatal(err)
	}
	var back Explanation
	if err := json.Unmarshal(first.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	for i, r := range back.Fragments {
		if r.Segment == nil || r.Segment == e.Fragments[i].Segment {
			t.Fatalf("row %d read back without a segment of its own", i)
		}
	}
	var second bytes.Buffer
	if err := back.WriteJSON(&second); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Fatalf("read back and written again, the JSON differs:\n%s\n%s", first.Bytes(), second.Bytes())
	}

	var bare Explanation
	if err := json.Unmarshal([]byte(`{"system":"hi","fragments":[{"source":"s","offset":0}]}`), &bare); err != nil {
		t.Fatal(err)
	}
	bare.Fragments = append(bare.Fragments, Row{Source: "by hand"})
	var out bytes.Buffer
	if err := bare.WriteJSON(&out); err != nil {
		t.Fatal(err)
	}
	if _, err := json.Marshal(bare.Fragments[1]); err != nil {
		t.Fatal(err)
	}
}
