package explain

import (
	"github.com/promptloom/promptloom/internal/seq"
	"strings"

	dmp "github.com/sergi/go-diff/diffmatchpatch"
)

// maxGapLines bounds the regions that are aligned line by line. Myers'
// diff costs about the square of what differs (docs/performance.md has what
// that meant before this bound), and a deadline would make the diff depend
// on the machine, so the
// bound is on size: after the common first and last lines are set aside,
// lines that occur once on each side (in the same order) anchor the
// prompts to each other, as in a patience diff, and each region between
// anchors is aligned by Myers' diff only when it holds at most this many
// lines on both sides together. A larger region is shown coarse: all of A's
// lines removed, then all of B's added, and its hunk is labelled so. The
// same inputs always give the same diff, and the whole costs about linear
// time in the prompts' lines plus maxGapLines per line at worst.
const maxGapLines = 1000

// coarseLabel follows the ranges of a hunk holding a coarse region.
const coarseLabel = "coarse: too many differing lines to align; shown as removed, then added"

// lineOp is one line of the line diff: its op and its id in the table of
// distinct lines.
type lineOp struct {
	op     byte
	id     int32
	coarse bool
}

// splitLines cuts a prompt into its lines (without their "\n") and interns
// them: ids index table, equal lines share an id.
func splitLines(s string, ids map[string]int32, table *[]string) []int32 {
	s = withNewline(s)
	if s == "" {
		return nil
	}
	out := make([]int32, 0, strings.Count(s, "\n"))
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		line := s[:i]
		s = s[i+1:]
		id, ok := ids[line]
		if !ok {
			id = int32(len(*table))
			ids[line] = id
			*table = append(*table, line)
		}
		out = append(out, id)
	}
	return out
}

// diffLines aligns two sequences of line ids.
func diffLines(a, b []int32, d *dmp.DiffMatchPatch) []lineOp {
	out := make([]lineOp, 0, max(len(a), len(b)))
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		out = append(out, lineOp{op: ' ', id: a[p]})
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	am, bm := a[p:len(a)-s], b[p:len(b)-s]
	if len(am)+len(bm) <= maxGapLines { // small enough: Myers' minimal diff
		out = diffGap(out, am, bm, d)
		for _, id := range a[len(a)-s:] {
			out = append(out, lineOp{op: ' ', id: id})
		}
		return out
	}
	i, j := 0, 0
	for _, k := range anchors(am, bm) {
		out = diffGap(out, am[i:k[0]], bm[j:k[1]], d)
		out = append(out, lineOp{op: ' ', id: am[k[0]]})
		i, j = k[0]+1, k[1]+1
	}
	out = diffGap(out, am[i:], bm[j:], d)
	for _, id := range a[len(a)-s:] {
		out = append(out, lineOp{op: ' ', id: id})
	}
	return out
}

// anchors returns the pairs (i, j) with a[i] == b[j] occurring once in a
// and once in b, keeping the longest run increasing in both (patience
// sorting, k log k).
func anchors(a, b []int32) [][2]int {
	type seen struct{ na, nb, ia, ib int }
	count := map[int32]*seen{}
	for i, id := range a {
		c := count[id]
		if c == nil {
			c = &seen{}
			count[id] = c
		}
		c.na++
		c.ia = i
	}
	for j, id := range b {
		if c := count[id]; c != nil {
			c.nb++
			c.ib = j
		}
	}
	var pairs [][2]int
	for i, id := range a {
		if c := count[id]; c.na == 1 && c.nb == 1 {
			pairs = append(pairs, [2]int{i, c.ib})
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	// The longest run increasing in b too.
	bs := make([]int, len(pairs))
	for x, pr := range pairs {
		bs[x] = pr[1]
	}
	at := seq.LongestIncreasing(bs)
	run := make([][2]int, len(at))
	for k, x := range at {
		run[k] = pairs[x]
	}
	return run
}

// diffGap appends the alignment of one region between anchors: Myers'
// diff when the region is within maxGapLines, else the coarse form.
func diffGap(out []lineOp, a, b []int32, d *dmp.DiffMatchPatch) []lineOp {
	coarse := len(a) > 0 && len(b) > 0 && len(a)+len(b) > maxGapLines
	if coarse || len(a) == 0 || len(b) == 0 {
		for _, id := range a {
			out = append(out, lineOp{op: '-', id: id, coarse: coarse})
		}
		for _, id := range b {
			out = append(out, lineOp{op: '+', id: id, coarse: coarse})
		}
		return out
	}
	// go-diff diffs runes: give the region's lines small local runes (a
	// line id can be past the last rune, or a surrogate that does not
	// survive a string).
	local := map[int32]rune{}
	toRunes := func(ids []int32) []rune {
		r := make([]rune, len(ids))
		for i, id := range ids {
			lr, ok := local[id]
			if !ok {
				lr = rune(len(local) + 1)
				local[id] = lr
			}
			r[i] = lr
		}
		return r
	}
	ra, rb := toRunes(a), toRunes(b)
	i, j := 0, 0
	for _, df := range d.DiffMainRunes(ra, rb, false) {
		n := len([]rune(df.Text))
		for range n {
			switch df.Type {
			case dmp.DiffEqual:
				out = append(out, lineOp{op: ' ', id: a[i]})
				i++
				j++
			case dmp.DiffDelete:
				out = append(out, lineOp{op: '-', id: a[i]})
				i++
			case dmp.DiffInsert:
				out = append(out, lineOp{op: '+', id: b[j]})
				j++
			}
		}
	}
	return out
}
