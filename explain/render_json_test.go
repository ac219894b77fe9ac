package explain

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/reducer"
)

// TestWriteJSONStreams: the streamed JSON of an explanation is, byte for
// byte, what encoding/json writes for the whole value at once, on random
// Harn-shaped options (with and without a budget, lint, reminders and
// traces), on every vector's options, and on the empty explanation.
func TestWriteJSONStreams(t *testing.T) {
	same := func(name string, e *Explanation) {
		t.Helper()
		var whole, streamed bytes.Buffer
		if err := writeJSON(&whole, e); err != nil {
			t.Fatal(err)
		}
		if err := e.WriteJSON(&streamed); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(whole.Bytes(), streamed.Bytes()) {
			t.Fatalf("%s: streamed JSON differs:\nwhole:\n%s\nstreamed:\n%s", name, whole.Bytes(), streamed.Bytes())
		}
	}
	same("empty", &Explanation{})
	rich, err := Explain([]byte(`{"system":[{"content":"a <b> & c","register":"craft","rank":2},"x"],
		"tools":[{"name":"t","guidance":"use <t>"}],"actor_chain":{"b":[1, 2],"a":"\u00e9"},
		"reminders":[{"body":"be <brief>","tags":["x"],"ttl_turns":2},{"body":"b","dedupe_key":"k"},{"body":"c","dedupe_key":"k"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if rich.Reminders == nil || len(rich.Traces) == 0 {
		t.Fatal("the rich case lost its reminders or traces")
	}
	same("rich", rich)
	r := rand.New(rand.NewPCG(17, 19))
	for i := range 1000 {
		data, err := json.Marshal(randOptions(r))
		if err != nil {
			t.Fatal(err)
		}
		var opts []Option
		if i%2 == 0 {
			b, _ := budget.New(budget.Bytes(), 1<<20)
			opts = append(opts, WithReduceOptions(reducer.WithBudget(b)))
		}
		e, err := Explain(data, opts...)
		if err != nil {
			continue
		}
		if i%3 == 0 {
			e.Traces = nil
		}
		e.Lint = Lint(e)
		same(string(data), e)
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
		if e, err := Explain(v.Options); err == nil {
			same(path, e)
		}
	}
}
