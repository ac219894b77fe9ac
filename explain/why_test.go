package explain

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/harn/options"
	"github.com/promptloom/promptloom/internal/fit"
)

// readmeOptions are the README's options.
const readmeOptions = `{
  "system": [
    {"title": "Role", "content": "You are a careful coding agent."},
    {"content": "Answer in English.", "position": "after"}
  ],
  "tools": [{"name": "todo", "guidance": "Keep the todo list current."}],
  "capabilities": ["vcs.git"],
  "context_profile": {"prompt_fragments": [
    {"body": "Commit with a message that says why.", "requires_caps": ["vcs.git"]},
    {"body": "Run cargo test.", "requires_caps": ["language.rust"]}
  ]},
  "call_role": "agent.main"
}`

// place is what a test compares of a Place.
type place struct {
	Offset      int
	ID, State   string
	Reason      string
	Start, End  int
	Joiner      bool
	Tools, Caps []string
	WholeBody   bool
}

func why(e *Explanation, text string) []place {
	var out []place
	for p := range e.Why(text) {
		q := place{Offset: p.Offset, Start: p.Start, End: p.End, Joiner: p.Joiner,
			Tools: p.RequiresTools, Caps: p.RequiresCaps, WholeBody: p.WholeBody}
		if p.Row != nil {
			q.ID, q.State, q.Reason = p.Row.ID, p.Row.State(), p.Row.Reason
		}
		out = append(out, q)
	}
	return out
}

func samePlaces(t *testing.T, text string, got, want []place) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Why(%q):\n got %+v\nwant %+v", text, got, want)
	}
}

// The README's sentence is in tool:todo.guidance, because the tool is
// present; without the tool it is in the same fragment, left out because
// the tool is not available.
func TestWhyREADME(t *testing.T) {
	const text = "Keep the todo list current."
	samePlaces(t, text, why(explainJSON(t, readmeOptions), text), []place{
		{Offset: 79, ID: "tool:todo.guidance", State: "included", Reason: "tool(s) present: todo", End: 27, Tools: []string{"todo"}},
	})

	o, err := options.Parse([]byte(readmeOptions), nil)
	if err != nil {
		t.Fatal(err)
	}
	o.Tools[0].Active = false
	without, err := FromOptions(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	samePlaces(t, text, why(without, text), []place{
		{Offset: -1, ID: "tool:todo.guidance", State: "excluded", Reason: "requires tool `todo` (not available)", End: 27, Tools: []string{"todo"}},
	})
	// A gated-out capability's fragment, found in part.
	samePlaces(t, "cargo", why(without, "cargo"), []place{
		{Offset: -1, ID: "profile[1]", State: "excluded", Reason: "requires capability `language.rust` (not set)", Start: 4, End: 9, Caps: []string{"language.rust"}},
	})
	if got := why(without, "nowhere at all"); got != nil {
		t.Errorf("a text in no fragment: %+v", got)
	}
}

// Every occurrence, in the prompt first (overlapping ones too), then in the
// fragments left out, in row order.
func TestWhyEveryOccurrence(t *testing.T) {
	e := explainJSON(t, `{"system": ["aaa", {"content": "  xaa  ", "enabled": true}, {"content": "aa", "position": "after"}],
		"_system_fragments": [{"id": "off", "body": "baab", "requires_tools": ["t"]}]}`)
	if e.System != "aaa\n\nxaa\n\naa" {
		t.Fatalf("prompt %q", e.System)
	}
	samePlaces(t, "aa", why(e, "aa"), []place{
		{Offset: 0, ID: "system[0]", State: "included", Reason: "unconditional", End: 2},
		{Offset: 1, ID: "system[0]", State: "included", Reason: "unconditional", Start: 1, End: 3},
		{Offset: 6, ID: "system[1]", State: "included", Reason: "unconditional", Start: 1, End: 3},
		{Offset: 10, ID: "system[2]", State: "included", Reason: "unconditional", End: 2},
		{Offset: -1, ID: "off", State: "excluded", Reason: "requires tool `t` (not available)", Start: 1, End: 3, Tools: []string{"t"}},
	})
}

// An occurrence that crosses the join separator is a place for each
// fragment it covers part of, with the same offset; one wholly in a
// separator is no fragment's.
func TestWhyAcrossTheJoiner(t *testing.T) {
	e := explainJSON(t, `{"system": ["one two", "three", "four"]}`)
	samePlaces(t, "two\n\nthree\n\nf", why(e, "two\n\nthree\n\nf"), []place{
		{Offset: 4, ID: "system[0]", State: "included", Reason: "unconditional", Start: 4, End: 7, Joiner: true},
		{Offset: 4, ID: "system[1]", State: "included", Reason: "unconditional", End: 5, Joiner: true},
		{Offset: 4, ID: "system[2]", State: "included", Reason: "unconditional", End: 1, Joiner: true},
	})
	// Starting in a separator and ending in a fragment.
	samePlaces(t, "\nthree", why(e, "\nthree"), []place{
		{Offset: 8, ID: "system[1]", State: "included", Reason: "unconditional", End: 5, Joiner: true},
	})
	samePlaces(t, "\n\n", why(e, "\n\n"), []place{
		{Offset: 7, Start: 0, End: 2, Joiner: true},
		{Offset: 14, Start: 0, End: 2, Joiner: true},
	})
	samePlaces(t, "\n", why(e, "\n"), []place{
		{Offset: 7, Start: 0, End: 1, Joiner: true},
		{Offset: 8, Start: 1, End: 2, Joiner: true},
		{Offset: 14, Start: 0, End: 1, Joiner: true},
		{Offset: 15, Start: 1, End: 2, Joiner: true},
	})
}

// A fragment shed by a budget is a place left out, shed.
func TestWhyShed(t *testing.T) {
	b := &budget.Budget{Counter: budget.Bytes(), Total: 10}
	e, err := Explain([]byte(`{"system": ["keep this", {"content": "shed this", "register": "considered"}]}`), &Options{Budget: b})
	if err != nil {
		t.Fatal(err)
	}
	got := why(e, "shed")
	if len(got) != 1 || got[0].ID != "system[1]" || got[0].State != "shed" || got[0].Offset != -1 || !strings.HasPrefix(got[0].Reason, fit.ShedPrefix) {
		t.Errorf("Why(shed) = %+v", got)
	}
}

// An explanation without its reduction (read back from JSON, or recorded)
// holds no left-out body: a left-out fragment is found only when the text
// is its whole body, by its digest.
func TestWhyWithoutTheReduction(t *testing.T) {
	o, _ := options.Parse([]byte(readmeOptions), nil)
	o.Tools[0].Active = false
	e, err := FromOptions(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var back Explanation
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	samePlaces(t, "Commit", why(&back, "Commit"), []place{
		{Offset: 41, ID: "profile[0]", State: "included", Reason: "capabilit(ies) present: vcs.git", End: 6},
	})
	samePlaces(t, " Keep the todo list current.\n", why(&back, " Keep the todo list current.\n"), []place{
		{Offset: -1, ID: "tool:todo.guidance", State: "excluded", Reason: "requires tool `todo` (not available)", End: 27, WholeBody: true},
	})
	if got := why(&back, "todo list"); got != nil {
		t.Errorf("part of a body not held: %+v", got)
	}
	if got := why(&back, "  "); got != nil {
		t.Errorf("white space: %+v", got)
	}
}

func TestWhyEdges(t *testing.T) {
	var nilE *Explanation
	for range nilE.Why("x") {
		t.Error("a nil explanation has a place")
	}
	e := explainJSON(t, readmeOptions)
	for range e.Why("") {
		t.Error("the empty text has a place")
	}
	for range (&Explanation{}).Why("x") {
		t.Error("an empty explanation has a place")
	}
	// A caller may stop early.
	n := 0
	for range e.Why("e") {
		n++
		break
	}
	if n != 1 {
		t.Errorf("stopped after %d", n)
	}
	// A hand-built row claiming more bytes than the prompt has cannot send
	// the search out of it.
	sys := "short"
	bad := &Explanation{System: sys, Fragments: []Row{{Segment: &e.Manifest.Segments[0]}}}
	if got := why(bad, "short"); len(got) != 1 || got[0].End != 5 {
		t.Errorf("hand-built: %+v", got)
	}
	// A replacement root is one fragment, byte for byte.
	r := explainJSON(t, `{"system": {"mode": "replace", "content": "  exact\n"}}`)
	samePlaces(t, " exact\n", why(r, " exact\n"), []place{
		{Offset: 1, ID: "replacement", State: "included", Reason: "exclusive replacement root", Start: 1, End: 8},
	})
}

// Every place in the prompt is an occurrence there, and its parts are the
// occurrence's bytes in each fragment: the fragment's slice of the prompt
// at Start..End is the text's bytes at the same distance from Offset.
func TestWhyPlacesAreOccurrences(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"a", "b", "ab", "ba", "\n", " "}
	for range 300 {
		var items []string
		for range 1 + rng.IntN(5) {
			var b strings.Builder
			for range 1 + rng.IntN(4) {
				b.WriteString(words[rng.IntN(len(words))])
			}
			items = append(items, fmt.Sprintf("%q", b.String()))
		}
		e := explainJSON(t, `{"system": [`+strings.Join(items, ",")+`]}`)
		sys := e.System
		for _, text := range []string{"a", "ab", "b\n\na", "\n\n", "a\n", "ab ba"} {
			var offs []int
			for p := range e.Why(text) {
				if p.Offset < 0 {
					continue
				}
				if sys[p.Offset:p.Offset+len(text)] != text {
					t.Fatalf("%q in %q: no occurrence at %d", text, sys, p.Offset)
				}
				if p.Row != nil {
					at := *p.Row.Offset + p.Start
					if got, want := sys[at:*p.Row.Offset+p.End], text[at-p.Offset:at-p.Offset+p.End-p.Start]; got != want {
						t.Fatalf("%q in %q at %d, %s: %q, want %q", text, sys, p.Offset, p.Row.ID, got, want)
					}
				}
				if len(offs) == 0 || offs[len(offs)-1] != p.Offset {
					offs = append(offs, p.Offset)
				}
			}
			var want []int
			for i := 0; i+len(text) <= len(sys); i++ {
				if sys[i:i+len(text)] == text {
					want = append(want, i)
				}
			}
			if !slices.Equal(offs, want) {
				t.Fatalf("%q in %q: offsets %v, want %v", text, sys, offs, want)
			}
		}
	}
}

// A templated fragment's places say which template text or binding
// produced the bytes, in the place's own terms; a text span cut at its
// start (by the reducer's trim, or by the occurrence) starts where the
// occurrence's first byte is in the template.
func TestWhyTemplate(t *testing.T) {
	e := explainJSON(t, `{"system": [{"title": "Role", "template": "  Work in {{ cwd | upper }} today.", "bindings": {"cwd": "/srv/app"}}],
		"_system_fragments": [{"id": "off", "template": "\n  Run {{ tool }} now.", "bindings": {"tool": "cargo"}, "requires_tools": ["cargo"]}]}`)
	if e.System != "## Role\nWork in /SRV/APP today." {
		t.Fatalf("prompt %q", e.System)
	}
	spans := func(text string) string {
		var out []string
		for p := range e.Why(text) {
			out = append(out, fmt.Sprintf("%s %d-%d:", p.Row.ID, p.Start, p.End))
			for _, s := range p.Spans {
				out = append(out, fmt.Sprintf("%d-%d %s %d:%d %s %v", s.Start, s.End, s.Kind, s.Line, s.Col, s.Path, s.Filters))
			}
		}
		return strings.Join(out, " ")
	}
	for text, want := range map[string]string{
		"/SRV/APP":   "system[0] 16-24: 16-24 binding 1:11 cwd [upper]",
		"in /SRV":    "system[0] 13-20: 13-16 text 1:8  [] 16-20 binding 1:11 cwd [upper]",
		"Role\nWork": "system[0] 3-12: 8-12 text 1:3  []",
		"## Role":    "system[0] 0-7:",
		"cargo":      "off 4-9: 4-9 binding 2:7 tool []",
		"Run":        "off 0-3: 0-3 text 2:3  []",
	} {
		if got := spans(text); got != want {
			t.Errorf("Why(%q): %s\nwant %s", text, got, want)
		}
	}
}
