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
