package explain

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/promptloom/promptloom"
)

func TestLint(t *testing.T) {
	part := func(id, body string, gated bool, bucket string) string {
		s := fmt.Sprintf(`{"id":%q,"body":%q,"bucket":%q`, id, body, bucket)
		if gated {
			s += `,"requires_tools":["read"]`
		}
		return s + "}"
	}
	for _, tc := range []struct {
		name  string
		parts []string
		want  []string // id>before
	}{
		{"gated before unconditional", []string{part("g", "x", true, "before"), part("u", "y", false, "before")}, []string{"g>u"}},
		{"gated after unconditional", []string{part("u", "y", false, "before"), part("g", "x", true, "before")}, nil},
		// Every after fragment follows every before one, so a gated before
		// fragment shifts the after ones too.
		{"other bucket", []string{part("g", "x", true, "before"), part("u", "y", false, "after")}, []string{"g>u"}},
		{"after then before in input", []string{part("u", "y", false, "after"), part("g", "x", true, "before")}, []string{"g>u"}},
		{"gated after bucket last", []string{part("u", "y", false, "before"), part("g", "x", true, "after")}, nil},
		{"nearest unconditional named", []string{part("g1", "x", true, "after"), part("g2", "x", true, "after"),
			part("u1", "y", false, "after"), part("u2", "z", false, "after")}, []string{"g1>u1", "g2>u1"}},
		{"empty bodies do not count", []string{part("g", "x", true, "before"), part("e", " ", false, "before"),
			part("g0", " ", true, "before")}, nil},
		{"both buckets", []string{part("g", "x", true, "before"), part("u", "y", false, "before"),
			part("h", "x", true, "after"), part("v", "y", false, "after")}, []string{"g>u", "h>v"}},
		{"across buckets names the nearest", []string{part("g", "x", true, "before"),
			part("h", "x", true, "after"), part("v", "y", false, "after")}, []string{"g>v", "h>v"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := `{"_system_fragments":[` + strings.Join(tc.parts, ",") + `],"tools":[{"name":"read"}]}`
			e, err := Explain([]byte(opts), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range Lint(e) {
				got = append(got, w.ID+">"+before(w))
				if !strings.Contains(w.Message, w.ID) || before(w) == "" {
					t.Errorf("message %q names neither side", w.Message)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLintReadmeExample: the README's options put gated profile fragments
// (one included, one not: adding its capability would insert it) and a
// tool's guidance, all "before", ahead of an unconditional "after" item, so
// each splits the cache for it.
func TestLintReadmeExample(t *testing.T) {
	opts := `{"system":[{"title":"Role","content":"You are a careful coding agent."},
		{"content":"Answer in English.","position":"after"}],
		"tools":[{"name":"todo","guidance":"Keep the todo list current."}],
		"capabilities":["vcs.git"],
		"context_profile":{"prompt_fragments":[
			{"body":"Commit with a message that says why.","requires_caps":["vcs.git"]},
			{"body":"Run cargo test.","requires_caps":["language.rust"]}]},
		"call_role":"agent.main"}`
	e, err := Explain([]byte(opts), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range Lint(e) {
		got = append(got, w.ID+">"+before(w))
	}
	want := []string{"profile[0]>system[1]", "profile[1]>system[1]", "tool:todo.guidance>system[1]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

// before is the unconditional fragment a gated fragment's warning says it
// stands before.
func before(w promptloom.Warning) string {
	m := regexp.MustCompile(`stands before unconditional (\S+) `).FindStringSubmatch(w.Message)
	if m == nil {
		return ""
	}
	return m[1]
}

// A warning about a gated fragment says how to act on it, for its kind:
// profile fragments and tool guidance have no position key, so the advice
// is to move the unconditional fragment ahead of them (it used to say
// "move it after the unconditional fragments", which they cannot be); and
// following the advice makes the README's example lint-clean.
func TestLintSaysHowToActOnIt(t *testing.T) {
	readme := func(after string) string {
		return `{"system":[{"title":"Role","content":"You are a careful coding agent."},
		{"content":"Answer in English."` + after + `}],
		"tools":[{"name":"todo","guidance":"Keep the todo list current."}],
		"capabilities":["vcs.git"],
		"context_profile":{"prompt_fragments":[
			{"body":"Commit with a message that says why.","requires_caps":["vcs.git"]},
			{"body":"Run cargo test.","requires_caps":["language.rust"]}]}}`
	}
	for _, tc := range []struct{ opts, id, advice string }{
		{readme(`,"position":"after"`), "profile[0]", `a profile fragment has no position key (it always follows the system list's before items and the primary block), so make system[1] a before fragment instead`},
		{readme(`,"position":"after"`), "tool:todo.guidance", `tool guidance has no position key`},
		{`{"context_profile":{"prompt_fragments":[{"id":"g","body":"x","requires_caps":["c"]},{"id":"u","body":"y"}]}}`, "g", `list it after u in context_profile.prompt_fragments`},
		{`{"_system_fragments":[{"id":"g","body":"x","requires_tools":["t"]},{"id":"u","body":"y"}]}`, "g", `list it after u in _system_fragments, or give it "bucket": "after"`},
		{`{"_system_fragments":[{"id":"g","body":"x","requires_tools":["t"]},{"id":"u","body":"y","bucket":"after"}]}`, "g", `give it "bucket": "after" and list it after the unconditional items of _system_fragments, or make u a before fragment`},
	} {
		e, err := Explain([]byte(tc.opts), nil)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, w := range Lint(e) {
			if w.ID == tc.id {
				found = true
				if !strings.Contains(w.Message, tc.advice) || strings.Contains(w.Message, "move it after the unconditional fragments") {
					t.Errorf("%s: %s", tc.id, w.Message)
				}
			}
		}
		if !found {
			t.Errorf("%s: no warning in %v", tc.id, Lint(e))
		}
	}
	e, err := Explain([]byte(readme("")), nil)
	if err != nil {
		t.Fatal(err)
	}
	if ws := Lint(e); len(ws) != 0 {
		t.Errorf("the advice followed, still: %v", ws)
	}
}
