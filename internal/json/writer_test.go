package json

import (
	"bytes"
	stdjson "encoding/json"
	"math/rand/v2"
	"testing"
)

// stdString is encoding/json's encoding of s with HTML escaping off.
func stdString(t *testing.T, s string) string {
	t.Helper()
	out, err := MarshalRaw(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestAppendStdString: AppendStdString writes what encoding/json writes,
// with HTML escaping off, for every byte below 0x80, the two separators it
// escapes, invalid and truncated UTF-8, and random mixes of them.
func TestAppendStdString(t *testing.T) {
	cases := []string{"", "plain", "a\u2028b\u2029c", "\xff", "\xe2\x80", "é€𝄞", "<&>", "\x7f"}
	for c := range 0x80 {
		cases = append(cases, string(rune(c)), "x"+string(rune(c))+"y")
	}
	r := rand.New(rand.NewPCG(23, 29))
	pieces := []string{"a", " ", "\"", "\\", "\n", "\t", "\x00", "\x1f", "\b", "\f", "é", "\u2028", "\u2029", "\xff", "\xc3", "𝄞", "<", "&"}
	for range 5000 {
		var s []byte
		for range r.IntN(12) {
			s = append(s, pieces[r.IntN(len(pieces))]...)
		}
		cases = append(cases, string(s))
	}
	for _, s := range cases {
		if got, w := string(AppendStdString(nil, s)), stdString(t, s); got != w {
			t.Fatalf("AppendStdString(%q) = %s, encoding/json %s", s, got, w)
		}
	}
}

// TestAppendIndent: on every document encoding/json accepts among the
// syntax cases and the corpus, AppendIndent lays it out as json.Indent
// does, with and without a prefix.
func TestAppendIndent(t *testing.T) {
	for _, doc := range append(append([]string{}, syntaxCases...), corpus(t)...) {
		if len(doc) > 4096 || !stdjson.Valid([]byte(doc)) {
			continue // a document 10,000 deep is 100 MB indented
		}
		for _, prefix := range []string{"", "    "} {
			var want bytes.Buffer
			if err := stdjson.Indent(&want, []byte(doc), prefix, "  "); err != nil {
				t.Fatal(err)
			}
			// Indent keeps leading and trailing white space; an encoder's
			// value has none.
			w := bytes.TrimSpace(want.Bytes())
			if got := AppendIndent(nil, []byte(doc), prefix, "  "); !bytes.Equal(got, w) {
				t.Fatalf("AppendIndent(%q, %q)\n got %s\nwant %s", doc, prefix, got, w)
			}
		}
	}
}

// TestWriter: a document written member by member and item by item is
// what an indenting encoder without HTML escaping writes for it whole.
func TestWriter(t *testing.T) {
	type item struct {
		N int    `json:"n"`
		S string `json:"s"`
	}
	hostile := "q\"\\\n\x01\u2028\xff<&>é"
	raw := stdjson.RawMessage(`{"b":[1, 2],"a":"\u00e9","e":{},"l":[]}`)
	whole := struct {
		S     *string            `json:"s"`
		N     int                `json:"n"`
		Raw   stdjson.RawMessage `json:"raw"`
		Null  stdjson.RawMessage `json:"null"`
		Items []item             `json:"items"`
		V     map[string]any     `json:"v"`
	}{&hostile, -7, raw, nil, []item{{1, "<a>"}, {2, hostile}}, map[string]any{"k": []int{1}}}
	var want bytes.Buffer
	enc := stdjson.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(whole); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	w := NewWriter(&got)
	w.Member("s")
	w.String(hostile)
	w.Member("n")
	w.Int(-7)
	w.Member("raw")
	w.Raw(raw)
	w.Member("null")
	w.Raw(nil)
	w.Member("items")
	w.BeginArray()
	for _, it := range whole.Items {
		w.Item()
		w.Value(it)
	}
	w.EndArray()
	w.Member("v")
	w.Value(whole.V)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("streamed\n%s\nwhole\n%s", got.String(), want.String())
	}

	var empty bytes.Buffer
	if err := NewWriter(&empty).Close(); err != nil || empty.String() != "{}\n" {
		t.Errorf("an empty object: %q, %v", empty.String(), err)
	}
}
