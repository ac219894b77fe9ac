package explain

import (
	"sort"
	"strconv"
	"strings"

	"github.com/promptloom/promptloom"
)

// The changes: added and removed (on one side only); included and
// excluded (flips of the gate: both reasons are in the delta's rows);
// changed (the body changed: both digests); moved (the fragment kept its
// bytes but not its place); same.
const (
	added    = "added"
	removed  = "removed"
	included = "included"
	excluded = "excluded"
	changed  = "changed"
	moved    = "moved"
	same     = "same"
)

// FragmentDelta is one fragment's change; A or B is nil when the fragment
// is only on the other side.
type FragmentDelta struct {
	ID string `json:"id"`
	// Change says what became of the fragment: added or removed (on one
	// side only); included or excluded (its gate flipped: both reasons are
	// in the rows); changed (its body: both digests); moved (its bytes
	// kept, not its place); same.
	Change string `json:"change"`
	A      *Row   `json:"a"`
	B      *Row   `json:"b"`
	// Bindings and TemplateChanged say, for a changed fragment rendered
	// from a template on both sides, what behind it changed: the binding
	// paths whose values differ (and, when the template is the same, those
	// one side read and the other did not), sorted, and whether the
	// template or a file it included differs.
	Bindings        []string `json:"bindings,omitempty"`
	TemplateChanged bool     `json:"template_changed,omitempty"`
}

// Delta is what changes between two prompts, fragment by fragment and byte
// by byte, and what the change costs the provider's prompt cache.
type Delta struct {
	A         *Explanation    `json:"a"`
	B         *Explanation    `json:"b"`
	Fragments []FragmentDelta `json:"fragments"`
	// CommonPrefixBytes is the length of the longest common byte prefix of
	// the two prompts: what a prefix cache can still serve.
	CommonPrefixBytes int `json:"common_prefix_bytes"`
	// FirstChangedFragment is the id of the fragment in which the prompts
	// first differ; nil when they are identical.
	FirstChangedFragment *string `json:"first_changed_fragment"`
	// ResendBytes is how many bytes of B come after the common prefix and
	// must be sent (and cached) again.
	ResendBytes int  `json:"resend_bytes"`
	Identical   bool `json:"identical"`
	// Unified is a unified diff of the two prompts, line by line.
	Unified string `json:"unified"`
	// hunks is the same diff as data, with the characters that changed
	// inside each changed line.
	hunks []hunk
}

// Diff compares two explanations. aName and bName label the sides of the
// unified diff.
func Diff(a, b *Explanation, aName, bName string) *Delta {
	d := &Delta{A: a, B: b}
	at, bt := a.Text(), b.Text()
	d.Identical = at == bt && (a.System == nil) == (b.System == nil)
	d.CommonPrefixBytes = promptloom.CommonPrefix(at, bt)
	d.ResendBytes = len(bt) - d.CommonPrefixBytes
	d.Fragments = matchRows(a.Fragments, b.Fragments)
	explainInputs(d.Fragments)
	if !d.Identical {
		d.FirstChangedFragment = d.firstChanged()
	}
	d.hunks = lineHunks(at, bt, 3)
	d.Unified = renderUnified(d.hunks, aName, bName)
	return d
}

// firstChanged names the fragment in which the prompts first differ: the
// included row that covers the first differing byte, on the side where that
// row actually changed (an added fragment shows on B, a removed one on A).
func (d *Delta) firstChanged() *string {
	p := d.CommonPrefixBytes
	change := map[string]string{}
	for _, f := range d.Fragments {
		change[f.ID] = f.Change
	}
	var fallback *string
	for _, e := range []*Explanation{d.A, d.B} {
		r := rowAt(e, p)
		if r == nil {
			continue
		}
		id := r.ID
		if c := change[id]; c != same {
			return &id
		}
		if fallback == nil {
			fallback = &id
		}
	}
	return fallback
}

// rowAt returns the included row whose bytes hold offset p, or the row
// after the separator p falls in; nil when p is past the end.
func rowAt(e *Explanation, p int) *Row {
	for i := range e.Fragments {
		r := &e.Fragments[i]
		if r.Included && p < *r.Offset+r.Bytes {
			return r
		}
	}
	return nil
}

// key identifies a row across explanations: its id, and which occurrence of
// that id it is (ids are not guaranteed unique).
type key struct {
	id string
	n  int
}

func keys(rows []Row) []key {
	seen := map[string]int{}
	out := make([]key, len(rows))
	for i, r := range rows {
		out[i] = key{r.ID, seen[r.ID]}
		seen[r.ID]++
	}
	return out
}

// matchRows pairs rows by id and classifies each pair. The result follows
// B's wire order, each removed row placed after the row it followed in A.
func matchRows(a, b []Row) []FragmentDelta {
	ak, bk := keys(a), keys(b)
	inA := make(map[key]int, len(a))
	for i, k := range ak {
		inA[k] = i
	}
	inB := make(map[key]int, len(b))
	for i, k := range bk {
		inB[k] = i
	}

	// Rows on both sides keep their place when they lie on a longest
	// increasing run of A-positions taken in B order; the rest moved.
	var common []int // A positions, in B order
	for _, k := range bk {
		if i, ok := inA[k]; ok {
			common = append(common, i)
		}
	}
	stays := map[int]bool{} // A positions on the run
	for _, i := range longestIncreasing(common) {
		stays[common[i]] = true
	}

	classify := func(ai, bi int) string {
		ra, rb := &a[ai], &b[bi]
		switch {
		case ra.Included && !rb.Included:
			return excluded
		case !ra.Included && rb.Included:
			return included
		case ra.Digest != rb.Digest:
			return changed
		case !stays[ai] || ra.Bucket != rb.Bucket:
			return moved
		}
		return same
	}

	// Removed rows, grouped under the B position they should follow (-1:
	// before everything).
	removedAfter := map[int][]int{}
	lastB := -1
	for i, k := range ak {
		if bi, ok := inB[k]; ok {
			lastB = bi
			continue
		}
		removedAfter[lastB] = append(removedAfter[lastB], i)
	}

	out := make([]FragmentDelta, 0, len(b)+len(a))
	emitRemoved := func(after int) {
		for _, i := range removedAfter[after] {
			out = append(out, FragmentDelta{ID: a[i].ID, Change: removed, A: &a[i]})
		}
	}
	emitRemoved(-1)
	for bi, k := range bk {
		if ai, ok := inA[k]; ok {
			out = append(out, FragmentDelta{ID: k.id, Change: classify(ai, bi), A: &a[ai], B: &b[bi]})
		} else {
			out = append(out, FragmentDelta{ID: k.id, Change: added, B: &b[bi]})
		}
		emitRemoved(bi)
	}
	return out
}

// longestIncreasing returns the positions in seq of one longest strictly
// increasing run, in order (patience sorting, n log n).
func longestIncreasing(seq []int) []int {
	var tails []int // index into seq of the smallest tail of each length
	prev := make([]int, len(seq))
	for i, v := range seq {
		j := sort.Search(len(tails), func(j int) bool { return seq[tails[j]] >= v })
		if j > 0 {
			prev[i] = tails[j-1]
		} else {
			prev[i] = -1
		}
		if j == len(tails) {
			tails = append(tails, i)
		} else {
			tails[j] = i
		}
	}
	if len(tails) == 0 {
		return nil
	}
	run := make([]int, len(tails))
	for i, k := tails[len(tails)-1], len(tails)-1; i >= 0; i, k = prev[i], k-1 {
		run[k] = i
	}
	return run
}

// Counts tallies the deltas by change, for summaries.
func (d *Delta) counts() map[string]int {
	out := map[string]int{}
	for _, f := range d.Fragments {
		out[f.Change]++
	}
	return out
}

// summary is one line: "3 same, 1 excluded".
func (d *Delta) summary() string {
	order := []string{same, changed, included, excluded, added, removed, moved}
	counts := d.counts()
	var parts []string
	for _, c := range order {
		if counts[c] > 0 {
			parts = append(parts, strconv.Itoa(counts[c])+" "+string(c))
		}
	}
	if len(parts) == 0 {
		return "no fragments"
	}
	return strings.Join(parts, ", ")
}
