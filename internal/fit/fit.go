// Package fit holds a prompt's texts to a budget.Budget: the exact count
// of the whole as texts are shed, by register (never binding), then rank,
// then later-first. The reducer's rule 6 (promptloom.Reduce with
// Options.Budget) is its one user; budget holds the vocabulary (Budget,
// Register, Counter, the errors).
//
// Counting is done once per distinct text: a bounded cache keyed by content
// digest remembers counts across calls, and a tally keeps the exact count
// of a whole prompt as texts leave it, recounting only a few words around
// each join (see tally).
package fit

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/digest"
)

// defaultShedOrder is the ShedOrder of a Budget that names none.
var defaultShedOrder = []budget.Register{budget.Considered, budget.Generated, budget.Craft}

// check reports whether the budget can be used.
func check(b *budget.Budget) error {
	switch {
	case b.Counter == nil:
		return fmt.Errorf("%w: no counter", budget.ErrInvalid)
	case b.Total < 0:
		return fmt.Errorf("%w: total %d is negative", budget.ErrInvalid, b.Total)
	case b.Unlimited && b.Total != 0:
		return fmt.Errorf("%w: an unlimited budget has no total, got %d", budget.ErrInvalid, b.Total)
	}
	for i, r := range b.ShedOrder {
		if r == budget.Binding {
			return fmt.Errorf("%w: binding fragments are never shed, so binding cannot be in the shed order", budget.ErrInvalid)
		}
		if slices.Contains(b.ShedOrder[:i], r) {
			return fmt.Errorf("%w: %s is in the shed order twice", budget.ErrInvalid, r)
		}
	}
	return nil
}

func order(b *budget.Budget) []budget.Register {
	if b.ShedOrder == nil {
		return defaultShedOrder
	}
	return b.ShedOrder
}

// Item is one text of a prompt the budget counts and may shed: the text,
// the digest of the text as it is (the count cache's key; not redacted,
// since two texts that redact alike count differently), and the register
// and rank that decide when it is shed.
type Item struct {
	Text     string
	Key      digest.Digest
	Register budget.Register
	Rank     int
}

// Fitted is what Fit did to a prompt's items.
type Fitted struct {
	// Counts is each item's own count.
	Counts []int
	// Shed lists the items shed, by index, in the order they were shed.
	Shed []int
	// Count is the exact count of the items left, joined: tokens merge
	// across joins, so it is not the sum of their counts.
	Count int
}

// Fit counts items joined by sep and, unless the budget is Unlimited,
// sheds them while the whole is over Total: by the register's place in the
// shed order, then lowest rank first, then the later item first. A prompt
// still over Total with everything sheddable shed is a
// *budget.ExceededError; a budget that cannot be used matches
// budget.ErrInvalid.
func Fit(b *budget.Budget, items []Item, sep string) (*Fitted, error) {
	if err := check(b); err != nil {
		return nil, err
	}
	t := newTally(b.Counter, defaultCache, items, sep)
	f := &Fitted{Counts: make([]int, len(items))}
	for i := range items {
		f.Counts[i] = t.pieceCount(i)
	}
	if !b.Unlimited {
		cands := make([]candidate, len(items))
		for i := range items {
			cands[i] = candidate{index: i, register: items[i].Register, rank: items[i].Rank}
		}
		for _, c := range shedSequence(b, cands) {
			if t.count() <= b.Total {
				break
			}
			t.remove(c.index)
			f.Shed = append(f.Shed, c.index)
		}
	}
	f.Count = t.count()
	if !b.Unlimited && f.Count > b.Total {
		return nil, &budget.ExceededError{Encoding: b.Counter.Encoding(), Total: b.Total, Count: f.Count, Shed: len(f.Shed)}
	}
	return f, nil
}

// candidate is an item the budget may shed: its place in the prompt, its
// register and its rank.
type candidate struct {
	index    int
	register budget.Register
	rank     int
}

// shedSequence returns the candidates in the order they are shed: by the
// register's place in the shed order, then lowest rank first, then the one
// that stands later in the prompt first. Candidates whose register is not in
// the shed order (binding always) are left out: they are never shed.
func shedSequence(b *budget.Budget, cands []candidate) []candidate {
	order := order(b)
	// Candidates fall into classes, one per register and rank, usually far
	// fewer than the candidates: the classes are sorted, then each
	// candidate is placed after the classes before its own (a counting
	// sort), instead of sorting the candidates themselves.
	type class struct{ at, rank int }
	ids := map[class]int{}
	var classes []class
	of := make([]int, len(cands)) // each candidate's class; -1: never shed
	for i, c := range cands {
		at := slices.Index(order, c.register)
		if at < 0 {
			of[i] = -1
			continue
		}
		k := class{at, c.rank}
		id, ok := ids[k]
		if !ok {
			id = len(classes)
			ids[k] = id
			classes = append(classes, k)
		}
		of[i] = id
	}
	byOrder := make([]int, len(classes))
	for i := range byOrder {
		byOrder[i] = i
	}
	slices.SortFunc(byOrder, func(x, y int) int {
		return cmp.Or(cmp.Compare(classes[x].at, classes[y].at), cmp.Compare(classes[x].rank, classes[y].rank))
	})
	start := make([]int, len(classes)+1) // where each class begins in out
	for _, id := range of {
		if id >= 0 {
			start[id+1]++
		}
	}
	counts := slices.Clone(start[1:])
	pos := 0
	for _, id := range byOrder {
		start[id], pos = pos, pos+counts[id]
	}
	out := make([]candidate, pos)
	// Within a class the later fragment goes first: filled from the last
	// candidate back, a class comes out in descending order of Index when
	// the candidates came in ascending order, as the reducer gives them.
	for i := len(cands) - 1; i >= 0; i-- {
		if id := of[i]; id >= 0 {
			out[start[id]] = cands[i]
			start[id]++
		}
	}
	if !slices.IsSortedFunc(cands, func(x, y candidate) int { return cmp.Compare(x.index, y.index) }) {
		for _, id := range byOrder {
			n := counts[id]
			group := out[start[id]-n : start[id]]
			slices.SortStableFunc(group, func(x, y candidate) int { return cmp.Compare(y.index, x.index) })
		}
	}
	return out
}

// ShedPrefix begins the manifest reason of every fragment a budget shed:
// "shed by budget: REGISTER rank N" (manifest.Segment.State reads it).
const ShedPrefix = "shed by budget: "
