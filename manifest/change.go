package manifest

import (
	"github.com/promptloom/promptloom/internal/seq"
	"strconv"
	"strings"

	"github.com/promptloom/promptloom/budget"
)

// What became of a fragment between two lists of segments (Change.Kind):
// Added and Removed are on one side only; Included and Excluded are flips
// of the gate (or the budget); Changed is a fragment whose body changed
// (both digests); Moved one that kept its bytes but not its place (its
// order among the fragments on both sides, or its bucket); Same one that
// did neither.
const (
	Added    = "added"
	Removed  = "removed"
	Included = "included"
	Excluded = "excluded"
	Changed  = "changed"
	Moved    = "moved"
	Same     = "same"
)

// Change is what became of one fragment between two lists of segments
// (two calls' manifests, two explanations' rows): the one vocabulary of
// change, which explain's Diff (explain.FragmentDelta), the journal's
// report and replay's pin misses share.
type Change struct {
	ID string `json:"id"`
	// Kind is what became of the fragment in the prompt: Added, Removed,
	// Included, Excluded, Changed, Moved or Same.
	Kind string `json:"change"`
	// What says what differs, as the report and replay print it: "added"
	// or "removed"; else the fields that differ, in this order: "digest",
	// the state ("included → shed", from Segment.State), the register
	// ("register binding → craft") and the rank ("rank 2 → 0"), joined by
	// ", "; else "moved" when only its place differs. It is "" when
	// nothing does: a Same fragment may still have a What (a rank, or a
	// fragment excluded one way and shed the other).
	What string `json:"-"`
	// InA and InB are the fragment's index in each list compared (-1: not
	// in that one).
	InA int `json:"-"`
	InB int `json:"-"`
}

// String is the change as the report and replay print it: "ID (What)",
// or "ID (same)" when nothing differs.
func (c Change) String() string {
	if c.What == "" {
		return c.ID + " (" + Same + ")"
	}
	return c.ID + " (" + c.What + ")"
}

// Compare pairs the segments of a and b by id (the n-th segment of an id
// with the n-th: ids need not be unique) and says what became of each
// fragment: one Change for every fragment of either, in b's order, each
// one only in a placed after the fragment it followed there. A fragment on
// both sides keeps its place when it lies on a longest run of them in the
// same order on both sides; the rest moved.
func Compare(a, b []Segment) []Change {
	ak, bk := keys(a), keys(b)
	inA := make(map[key]int, len(a))
	for i, k := range ak {
		inA[k] = i
	}
	inB := make(map[key]int, len(b))
	for i, k := range bk {
		inB[k] = i
	}

	// Segments on both sides keep their place when they lie on a longest
	// increasing run of a-positions taken in b order; the rest moved.
	var common []int // a positions, in b order
	for _, k := range bk {
		if i, ok := inA[k]; ok {
			common = append(common, i)
		}
	}
	stays := map[int]bool{} // a positions on the run
	for _, i := range seq.LongestIncreasing(common) {
		stays[common[i]] = true
	}

	// Removed segments, grouped under the b position they should follow
	// (-1: before everything).
	removedAfter := map[int][]int{}
	lastB := -1
	for i, k := range ak {
		if bi, ok := inB[k]; ok {
			lastB = bi
			continue
		}
		removedAfter[lastB] = append(removedAfter[lastB], i)
	}

	out := make([]Change, 0, len(b)+len(a)-len(common))
	emitRemoved := func(after int) {
		for _, i := range removedAfter[after] {
			out = append(out, Change{ID: a[i].ID, Kind: Removed, What: Removed, InA: i, InB: -1})
		}
	}
	emitRemoved(-1)
	for bi, k := range bk {
		if ai, ok := inA[k]; ok {
			out = append(out, pair(&a[ai], &b[bi], ai, bi, stays[ai]))
		} else {
			out = append(out, Change{ID: k.id, Kind: Added, What: Added, InA: -1, InB: bi})
		}
		emitRemoved(bi)
	}
	return out
}

// Differing is the changes of Compare(a, b) in which something differs
// (What is not ""), in its order: what the journal's report and replay's
// pin misses list.
func Differing(a, b []Segment) []Change {
	var out []Change
	for _, c := range Compare(a, b) {
		if c.What != "" {
			out = append(out, c)
		}
	}
	return out
}

// pair is the change of a fragment on both sides; stays says it kept its
// order.
func pair(sa, sb *Segment, ai, bi int, stays bool) Change {
	c := Change{ID: sb.ID, InA: ai, InB: bi}
	switch {
	case sa.Included && !sb.Included:
		c.Kind = Excluded
	case !sa.Included && sb.Included:
		c.Kind = Included
	case sa.Digest != sb.Digest:
		c.Kind = Changed
	case !stays || sa.Bucket != sb.Bucket:
		c.Kind = Moved
	default:
		c.Kind = Same
	}
	var what []string
	if sa.Digest != sb.Digest {
		what = append(what, "digest")
	}
	if x, y := sa.State(), sb.State(); x != y {
		what = append(what, x+" → "+y)
	}
	if x, y := register(sa), register(sb); x != y {
		what = append(what, "register "+x+" → "+y)
	}
	if x, y := rank(sa), rank(sb); x != y {
		what = append(what, "rank "+strconv.Itoa(x)+" → "+strconv.Itoa(y))
	}
	switch {
	case len(what) > 0:
		c.What = strings.Join(what, ", ")
	case c.Kind == Moved:
		c.What = Moved
	}
	return c
}

// register and rank read a segment's, which the manifest leaves out for a
// binding fragment of rank 0 with no sources.
func register(s *Segment) string {
	if s.Register == "" {
		return budget.Binding.String()
	}
	return s.Register
}

func rank(s *Segment) int {
	if s.Rank == nil {
		return 0
	}
	return *s.Rank
}

// key identifies a segment across lists: its id, and which occurrence of
// that id it is.
type key struct {
	id string
	n  int
}

func keys(segs []Segment) []key {
	seen := map[string]int{}
	out := make([]key, len(segs))
	for i := range segs {
		id := segs[i].ID
		out[i] = key{id, seen[id]}
		seen[id]++
	}
	return out
}
