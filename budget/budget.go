package budget

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/promptloom/promptloom/digest"
)

// Budget is a size limit and how to meet it. Its zero value counts nothing
// and is invalid: it needs a Counter.
type Budget struct {
	// Counter counts the prompt: Bytes(), or the tokens of an encoding.
	Counter Counter
	// Total is the most the whole prompt may count.
	Total int
	// Unlimited counts the prompt and each fragment without holding the
	// prompt to anything: nothing is shed and Total, which must be 0, is
	// not recorded. It is how a harness learns what a prompt costs
	// without a limit that would have to be invented (and then hashed into
	// its manifest).
	Unlimited bool
	// ShedOrder lists the registers that may be shed, first shed first;
	// nil sheds considered material first, then generated prose, then
	// craft advice. Binding may never be in it, and a register not in it
	// is never shed.
	ShedOrder []Register
}

// defaultShedOrder is the ShedOrder of a Budget that names none.
var defaultShedOrder = []Register{Considered, Generated, Craft}

// Errors of a budget.
var (
	// ErrInvalid is a budget that cannot be used: no counter, a negative
	// total, a total beside Unlimited, binding in the shed order, a
	// register twice.
	ErrInvalid = errors.New("invalid budget")
	// ErrExceeded is a prompt that does not fit even with everything
	// sheddable shed; errors.As gives the numbers in an *ExceededError.
	ErrExceeded = errors.New("budget exceeded")
)

// check reports whether the budget can be used.
func (b *Budget) check() error {
	switch {
	case b.Counter == nil:
		return fmt.Errorf("%w: no counter", ErrInvalid)
	case b.Total < 0:
		return fmt.Errorf("%w: total %d is negative", ErrInvalid, b.Total)
	case b.Unlimited && b.Total != 0:
		return fmt.Errorf("%w: an unlimited budget has no total, got %d", ErrInvalid, b.Total)
	}
	for i, r := range b.ShedOrder {
		if r == Binding {
			return fmt.Errorf("%w: binding fragments are never shed, so binding cannot be in the shed order", ErrInvalid)
		}
		if slices.Contains(b.ShedOrder[:i], r) {
			return fmt.Errorf("%w: %s is in the shed order twice", ErrInvalid, r)
		}
	}
	return nil
}

func (b *Budget) order() []Register {
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
	Register Register
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
// still over Total with everything sheddable shed is an *ExceededError.
func (b *Budget) Fit(items []Item, sep string) (*Fitted, error) {
	if err := b.check(); err != nil {
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
		for _, c := range b.shedSequence(cands) {
			if t.count() <= b.Total {
				break
			}
			t.remove(c.index)
			f.Shed = append(f.Shed, c.index)
		}
	}
	f.Count = t.count()
	if !b.Unlimited && f.Count > b.Total {
		return nil, &ExceededError{Encoding: b.Counter.Encoding(), Total: b.Total, Count: f.Count, Shed: len(f.Shed)}
	}
	return f, nil
}

// candidate is an item the budget may shed: its place in the prompt, its
// register and its rank.
type candidate struct {
	index    int
	register Register
	rank     int
}

// shedSequence returns the candidates in the order they are shed: by the
// register's place in the shed order, then lowest rank first, then the one
// that stands later in the prompt first. Candidates whose register is not in
// the shed order (binding always) are left out: they are never shed.
func (b *Budget) shedSequence(cands []candidate) []candidate {
	order := b.order()
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

// ShedPrefix begins the manifest reason of every fragment a budget shed.
const ShedPrefix = "shed by budget: "

// ExceededError is a prompt over its budget with nothing left to shed.
type ExceededError struct {
	Encoding string
	Total    int
	// Count is the prompt's size with every sheddable fragment shed.
	Count int
	// Shed is how many fragments were shed before giving up.
	Shed int
}

// Error says the numbers: the count with everything sheddable shed, and the total.
func (e *ExceededError) Error() string {
	unit := e.Encoding + " tokens"
	if e.Encoding == "bytes" {
		unit = "bytes"
	}
	return fmt.Sprintf("budget exceeded: the prompt is %d %s with every sheddable fragment shed (%d shed), over the budget of %d; binding fragments are never shed",
		e.Count, unit, e.Shed, e.Total)
}

// Is makes ExceededError match ErrExceeded.
func (e *ExceededError) Is(t error) bool { return t == ErrExceeded }
