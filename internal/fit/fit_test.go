package fit

import (
	stdcmp "cmp"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/digest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var words = []string{
	"the", "tool", "Keep", "list", "current", "it's", "don't", "we'll", "HTTPServer", "naïve", "日本語",
	"emoji🎉", "123", "45678", "3.14", "a", "I", "x", ".", ",", "!", "?", ":", "`code`", "\"q\"", "(p)",
	"--", "##", "\n", "\n\n", "\t", "  ", "'s", "'", "é", "Ünïcode", "rm -rf", "line\r\n", "under_score",
	"CamelCase", "UPPER", "https://example.com/x", "<tag>", "&", "…", "—", "é", "ß", "ﬁ",
}

func randomText(r *rand.Rand) string {
	var b strings.Builder
	for n := 1 + r.IntN(20); n > 0; n-- {
		b.WriteString(words[r.IntN(len(words))])
		switch r.IntN(4) {
		case 0, 1:
			b.WriteByte(' ')
		case 2:
			if r.IntN(3) == 0 {
				b.WriteString("\n")
			}
		}
	}
	return strings.TrimSpace(b.String())
}

func counters(t *testing.T) []budget.Counter {
	var out []budget.Counter
	for _, name := range []string{"bytes", "o200k_base", "cl100k_base"} {
		c, err := budget.NewCounter(name)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// TestTallyMatchesTokenizer: the count a Tally holds is the tokenizer's own
// count of the whole prompt, before and after every removal, over random
// fragments and joins.
func TestTallyMatchesTokenizer(t *testing.T) {
	for _, c := range counters(t) {
		t.Run(c.Encoding(), func(t *testing.T) {
			r := rand.New(rand.NewPCG(11, 12))
			cache := newCountCache(1 << 12)
			for trial := range 150 {
				var texts []string
				var pieces []Item
				for n := 1 + r.IntN(12); n > 0; n-- {
					s := randomText(r)
					if s == "" {
						continue
					}
					texts = append(texts, s)
					pieces = append(pieces, Item{Text: s, Key: digest.String(s)})
				}
				tally := newTally(c, cache, pieces, "\n\n")
				alive := make([]bool, len(texts))
				for i := range alive {
					alive[i] = true
				}
				check := func(step string) {
					var kept []string
					for i, a := range alive {
						if a {
							kept = append(kept, texts[i])
						}
					}
					whole := strings.Join(kept, "\n\n")
					if want := c.Count(whole); tally.count() != want {
						t.Fatalf("trial %d, %s: tally %d, tokenizer %d for %q", trial, step, tally.count(), want, whole)
					}
				}
				check("start")
				for _, i := range r.Perm(len(texts)) {
					tally.remove(i)
					alive[i] = false
					check("after removing " + texts[i])
				}
			}
		})
	}
}

func TestShedSequence(t *testing.T) {
	b := &budget.Budget{Counter: budget.Bytes(), Total: 10}
	cands := []candidate{
		{0, budget.Binding, 0},
		{1, budget.Craft, 0},
		{2, budget.Considered, 5},
		{3, budget.Generated, 1},
		{4, budget.Considered, 1},
		{5, budget.Considered, 1},
		{6, budget.Generated, 0},
	}
	var got []int
	for _, c := range shedSequence(b, cands) {
		got = append(got, c.index)
	}
	// considered (rank 1: later first, then rank 5), generated (rank 0, 1), craft; never binding
	if diff := cmp.Diff([]int{5, 4, 2, 6, 3, 1}, got); diff != "" {
		t.Errorf("shed sequence (-want +got):\n%s", diff)
	}
}

func TestBudgetChecks(t *testing.T) {
	tests := []struct {
		name string
		b    budget.Budget
	}{
		{"binding in the order", budget.Budget{Counter: budget.Bytes(), Total: 5, ShedOrder: []budget.Register{budget.Craft, budget.Binding}}},
		{"register twice", budget.Budget{Counter: budget.Bytes(), Total: 5, ShedOrder: []budget.Register{budget.Craft, budget.Craft}}},
		{"no counter", budget.Budget{Total: 5}},
		{"negative total", budget.Budget{Counter: budget.Bytes(), Total: -1}},
	}
	for _, tt := range tests {
		if _, err := Fit(&tt.b, nil, ""); !errors.Is(err, budget.ErrInvalid) {
			t.Errorf("%s: Fit = %v", tt.name, err)
		}
	}
}

func TestCacheIsBounded(t *testing.T) {
	c := newCountCache(3)
	t0 := newTally(budget.Bytes(), c, nil, "")
	count := func(s string) int {
		return t0.countWindow(cacheKey{kind: textKey, text: s}, func() string { return s })
	}
	for _, s := range []string{"a", "bb", "ccc", "dddd", "a"} {
		if n := count(s); n != len(s) {
			t.Errorf("count(%q) = %d", s, n)
		}
	}
	hits, misses, entries := c.stats()
	if entries != 3 || misses != 5 || hits != 0 {
		t.Errorf("stats: %d hits, %d misses, %d entries (a was evicted before its second use)", hits, misses, entries)
	}
	count("dddd")
	if hits, _, _ := c.stats(); hits != 1 {
		t.Errorf("a recent entry was not a hit")
	}
}

// TestShedSequenceSorts: the counting sort gives what sorting the
// candidates by (register's place, rank, later first) gives, on random
// candidates in and out of prompt order.
func TestShedSequenceSorts(t *testing.T) {
	b := &budget.Budget{Counter: budget.Bytes(), Total: 10}
	r := rand.New(rand.NewPCG(1, 9))
	for round := range 500 {
		n := r.IntN(60)
		cands := make([]candidate, n)
		for i := range cands {
			cands[i] = candidate{index: i, register: budget.Register(r.IntN(4)), rank: r.IntN(5) - 2}
		}
		if round%2 == 1 {
			r.Shuffle(n, func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
		}
		var want []candidate
		for _, c := range cands {
			if slices.Contains(defaultShedOrder, c.register) {
				want = append(want, c)
			}
		}
		slices.SortFunc(want, func(x, y candidate) int {
			return stdcmp.Or(
				stdcmp.Compare(slices.Index(defaultShedOrder, x.register), slices.Index(defaultShedOrder, y.register)),
				stdcmp.Compare(x.rank, y.rank),
				stdcmp.Compare(y.index, x.index))
		})
		if diff := cmp.Diff(want, shedSequence(b, cands), cmpopts.EquateEmpty(), cmp.AllowUnexported(candidate{})); diff != "" {
			t.Fatalf("round %d (-sorted +ShedSequence):\n%s", round, diff)
		}
	}
}
