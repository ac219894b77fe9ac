package explain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/manifest"
)

// sameJSON fails t unless e streams to the bytes encoding/json writes for
// it whole.
func sameJSON(t *testing.T, name string, e *Explanation) {
	t.Helper()
	var whole, streamed bytes.Buffer
	if err := writeJSON(&whole, e.wire()); err != nil {
		t.Fatal(err)
	}
	if err := e.WriteJSON(&streamed); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(whole.Bytes(), streamed.Bytes()) {
		t.Fatalf("%s: streamed JSON differs:\nwhole:\n%.2000s\nstreamed:\n%.2000s", name, whole.Bytes(), streamed.Bytes())
	}
}

// TestWriteJSONStreams: the streamed JSON of an explanation is, byte for
// byte, what encoding/json writes for the whole value at once, on random
// Harn-shaped options (with and without a budget, lint, reminders and
// traces), on every vector's options, and on the empty explanation.
func TestWriteJSONStreams(t *testing.T) {
	sameJSON(t, "empty", &Explanation{})
	rich, err := Explain([]byte(`{"system":[{"content":"a <b> & c","register":"craft","rank":2},"x"],
		"tools":[{"name":"t","guidance":"use <t>"}],"actor_chain":{"b":[1, 2],"a":"\u00e9"},
		"reminders":[{"body":"be <brief>","tags":["x"],"ttl_turns":2},{"body":"b","dedupe_key":"k"},{"body":"c","dedupe_key":"k"}]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rich.Reminders == nil || len(rich.Traces) == 0 {
		t.Fatal("the rich case lost its reminders or traces")
	}
	sameJSON(t, "rich", rich)
	r := rand.New(rand.NewPCG(17, 19))
	for i := range 1000 {
		data, err := json.Marshal(randOptions(r))
		if err != nil {
			t.Fatal(err)
		}
		var opts *Options
		if i%2 == 0 {
			b := &budget.Budget{Counter: budget.Bytes(), Total: 1 << 20}
			opts = &Options{Budget: b}
		}
		e, err := Explain(data, opts)
		if err != nil {
			continue
		}
		if i%3 == 0 {
			e.Traces = nil
		}
		e.Lint = Lint(e, nil)
		sameJSON(t, string(data), e)
	}
	files, _ := filepath.Glob("../testdata/*/*/*.json")
	more, _ := filepath.Glob("../testdata/vectors/*.json")
	for _, path := range append(files, more...) {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Options json.RawMessage `json:"options"`
		}
		if json.Unmarshal(raw, &v) != nil || len(v.Options) == 0 {
			continue
		}
		if e, err := Explain(v.Options, nil); err == nil {
			sameJSON(t, path, e)
		}
	}
}

// TestWriteJSONRowFields: every optional field of a row (offset, register,
// rank, sources, tokens), present and absent, and hostile text in every
// string, stream as encoding/json writes them.
func TestWriteJSONRowFields(t *testing.T) {
	one, two := 1, 22
	hostile := "q\"\\\n\x01\u2028\xff<&>"
	e := &Explanation{System: hostile, Manifest: &manifest.Manifest{Schema: hostile, CallRole: hostile}, Fragments: []Row{
		{Segment: &manifest.Segment{}, Source: hostile},
		{Segment: &manifest.Segment{}, Source: "s", Offset: &one},
	}}
	e.Fragments[0].ID, e.Fragments[0].Reason, e.Fragments[0].Digest = hostile, hostile, digest.Of(hostile)
	e.Fragments[1].Register, e.Fragments[1].Rank, e.Fragments[1].Tokens = "craft", &two, &one
	e.Fragments[1].Sources = []string{"ev:1", hostile}
	sameJSON(t, "hostile rows", e)
}

// TestWriteJSONLongPrompt: a prompt longer than one piece of writeString,
// with characters, invalid bytes and escapes straddling every piece
// boundary, streams as encoding/json writes it.
func TestWriteJSONLongPrompt(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 37))
	pieces := []string{"a", "é", "€", "𝄞", "\xff", "\xe2\x82", "\"", "\n", "\u2028", "\x01"}
	var b []byte
	for len(b) < 200<<10 {
		b = append(b, pieces[r.IntN(len(pieces))]...)
	}
	for offset := range 4 {
		system := string(b[offset:])
		e := &Explanation{System: system}
		sameJSON(t, fmt.Sprintf("offset %d, a %d-byte prompt", offset, len(system)), e)
	}
}
