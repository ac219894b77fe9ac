package explain

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// spell rebuilds both sides from hunks and the unchanged lines between
// them: ' ' and '-' lines are A, ' ' and '+' lines are B.
func spell(t *testing.T, a, b string, hunks []hunk) {
	t.Helper()
	la := strings.Split(strings.TrimSuffix(withNewline(a), "\n"), "\n")
	lb := strings.Split(strings.TrimSuffix(withNewline(b), "\n"), "\n")
	if a == "" {
		la = nil
	}
	if b == "" {
		lb = nil
	}
	var ga, gb []string
	ai := 0
	for _, h := range hunks {
		// unchanged lines before the hunk (AStart-1 of A's lines stand
		// before it) are the same on both sides
		for ai < h.AStart-1 {
			ga, gb = append(ga, la[ai]), append(gb, la[ai])
			ai++
		}
		for _, l := range h.Lines {
			if l.Op != '+' {
				ga = append(ga, l.Text)
			}
			if l.Op != '-' {
				gb = append(gb, l.Text)
			}
		}
		ai = len(ga)
	}
	for ; ai < len(la); ai++ {
		ga, gb = append(ga, la[ai]), append(gb, la[ai])
	}
	if strings.Join(ga, "\n") != strings.Join(la, "\n") || strings.Join(gb, "\n") != strings.Join(lb, "\n") {
		t.Fatalf("hunks do not spell the two sides:\n%s", renderUnified(hunks, "a", "b"))
	}
}

// Random prompts, small and past the alignment bound, with repeated lines,
// unique lines, moves and blocks of change: the hunks always spell both
// sides, and a hunk is labelled coarse exactly when it holds unpaired
// lines of a region past the bound.
func TestLineDiffSpellsBothSides(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for n := range 60 {
		size := 5 + r.IntN(40)
		if n%3 == 0 {
			size = 400 + r.IntN(1200)
		}
		var a []string
		for i := range size {
			switch r.IntN(4) {
			case 0:
				a = append(a, "")
			case 1:
				a = append(a, fmt.Sprintf("repeated %d", r.IntN(5)))
			default:
				a = append(a, fmt.Sprintf("line %d of %d", i, n))
			}
		}
		b := append([]string(nil), a...)
		for range 1 + r.IntN(6) {
			at := r.IntN(len(b) + 1)
			switch r.IntN(3) {
			case 0: // a block of new lines
				var blk []string
				for k := range r.IntN(size) {
					blk = append(blk, fmt.Sprintf("new %d %d", at, k))
				}
				b = append(b[:at], append(blk, b[at:]...)...)
			case 1: // a block removed
				end := min(len(b), at+r.IntN(size))
				b = append(b[:at], b[end:]...)
			case 2: // lines changed
				for k := at; k < min(len(b), at+r.IntN(20)); k++ {
					b[k] += " (changed)"
				}
			}
		}
		as, bs := strings.Join(a, "\n"), strings.Join(b, "\n")
		spell(t, as, bs, lineHunks(as, bs, 3))
	}
}

// 100,000 differing lines: the diff stays bounded (about linear; it took
// 28 s with Myers' diff over the whole), shows every line, and says it is
// coarse.
func TestManyDifferingLinesAreCoarse(t *testing.T) {
	a, b := differing(100_000)
	hunks := lineHunks(a, b, 3)
	spell(t, a, b, hunks)
	if len(hunks) != 1 || !hunks[0].Coarse {
		t.Fatalf("%d hunks, first coarse %v; want one coarse hunk", len(hunks), len(hunks) > 0 && hunks[0].Coarse)
	}
	u := renderUnified(hunks, "a", "b")
	if want := "@@ -1,100000 +1,100000 @@ " + coarseLabel + "\n"; !strings.Contains(u, want) {
		t.Errorf("unified diff does not start its hunk with %q:\n%.300s", want, u)
	}
	for _, l := range hunks[0].Lines {
		if l.Spans != nil {
			t.Fatal("a line of a coarse region was paired")
		}
	}
}

// Two large prompts with a few scattered changes are still aligned line by
// line: unique lines anchor them, so no hunk is coarse.
func TestScatteredChangesInLargePromptsAreAligned(t *testing.T) {
	var a []string
	for i := range 50_000 {
		a = append(a, fmt.Sprintf("rule %d: keep it short", i))
	}
	b := append([]string(nil), a...)
	b[100] = "rule 100: keep it shorter"
	b[25_000] = "a new rule"
	b = append(b[:40_000], b[40_010:]...)
	as, bs := strings.Join(a, "\n"), strings.Join(b, "\n")
	hunks := lineHunks(as, bs, 3)
	spell(t, as, bs, hunks)
	if len(hunks) != 3 {
		t.Fatalf("%d hunks, want 3", len(hunks))
	}
	for _, h := range hunks {
		if h.Coarse {
			t.Errorf("hunk %s is coarse", hunkHeader(h))
		}
	}
	if got := hunks[0].Lines[4].Spans; len(got) == 0 {
		t.Error("the changed rule is not paired with its new form")
	}
}

func differing(n int) (string, string) {
	var a, b strings.Builder
	for i := range n {
		fmt.Fprintf(&a, "a line %d\n", i)
		fmt.Fprintf(&b, "b line %d\n", i)
	}
	return a.String(), b.String()
}

// BenchmarkDiffManyDifferingLines: two prompts of 100,000 lines that differ
// on every line (28 s with Myers' diff over the whole).
func BenchmarkDiffManyDifferingLines(b *testing.B) {
	x, y := differing(100_000)
	b.ReportAllocs()
	for b.Loop() {
		lineHunks(x, y, 3)
	}
}

// BenchmarkDiffScatteredChanges: 100,000 lines with changes in one line of
// every hundred.
func BenchmarkDiffScatteredChanges(b *testing.B) {
	var x, y strings.Builder
	for i := range 100_000 {
		fmt.Fprintf(&x, "line %d\n", i)
		if i%100 == 0 {
			fmt.Fprintf(&y, "line %d changed\n", i)
		} else {
			fmt.Fprintf(&y, "line %d\n", i)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		lineHunks(x.String(), y.String(), 3)
	}
}
