package journal

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/transcript"
)

// Each way a transcript breaks is told apart by its rule alone: a caller
// never reads Detail to know which condition it met (a session not closed
// is not a session opened twice).
func TestRulesOneConditionEach(t *testing.T) {
	lines := strings.SplitAfter(recorded(t), "\n")
	lines = lines[:len(lines)-1] // the empty string after the last newline
	with := func(edit func(ls []string) []string) string {
		return rechain(strings.Join(edit(slices.Clone(lines)), ""))
	}
	set := func(i int, old, new string) func([]string) []string {
		return func(ls []string) []string {
			if !strings.Contains(ls[i], old) {
				t.Fatalf("line %d has no %s", i+1, old)
			}
			ls[i] = strings.Replace(ls[i], old, new, 1)
			return ls
		}
	}
	for _, tc := range []struct {
		name string
		edit func([]string) []string
		want manifest.Rule
	}{
		{"a session not closed", func(ls []string) []string { return ls[:11] }, transcript.RuleSessionUnclosed},
		{"a session opened twice", func(ls []string) []string { return slices.Insert(ls, 7, ls[0]) }, transcript.RuleSessionReopened},
		{"a session opened without an id", set(0, `"session":"s1"`, `"session":""`), transcript.RuleSessionID},
		{"a close that miscounts", set(11, `"calls":3`, `"calls":2`), transcript.RuleCloseCount},
		{"a close of a session not open", func(ls []string) []string { return append(ls, ls[11]) }, transcript.RuleSessionNotOpen},
		{"a request of a session not open", set(9, `"session":"s1"`, `"session":"s2"`), transcript.RuleSessionNotOpen},
		{"an answer given twice", func(ls []string) []string { return slices.Insert(ls, 11, ls[10]) }, transcript.RuleAnsweredTwice},
		{"an answer to no request", set(10, `"request_seq":10`, `"request_seq":99`), transcript.RuleOutcome},
		{"a request not answered", func(ls []string) []string { return slices.Delete(ls, 10, 11) }, transcript.RuleUnanswered},
		{"an answer that does not hash", set(10, `reply to c3`, `reply to c4`), transcript.RuleOutcomeContentHash},
		{"an unknown kind", set(11, `"kind":"journal_close"`, `"kind":"journal_end"`), transcript.RuleKind},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := transcript.Verify(strings.NewReader(with(tc.edit)), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []manifest.Rule
			found := false
			for _, p := range rep.Problems {
				got = append(got, p.Rule)
				found = found || errors.Is(p, tc.want)
			}
			for _, c := range rep.Calls {
				if c.Problem != nil {
					got = append(got, c.Problem.Rule)
					found = found || errors.Is(c.Problem, tc.want)
				}
			}
			if !found {
				t.Errorf("rules %q, want %q among them", got, tc.want)
			}
		})
	}
}
