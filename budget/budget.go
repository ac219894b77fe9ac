package budget

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// Budget is a size limit and how to meet it.
type Budget struct {
	// Counter counts the prompt: bytes, or tokens of an encoding.
	Counter Counter
	// Total is the most the whole prompt may count.
	Total int
	// ShedOrder lists the registers that may be shed, first shed first;
	// nil means DefaultShedOrder. Binding may never be in it, and a register
	// not in it is never shed.
	ShedOrder []Register
	// Cache remembers counts; nil means a bounded cache shared by the
	// process.
	Cache *Cache
}

// DefaultShedOrder sheds considered material first, then generated prose,
// then craft advice; rules (binding) are never shed.
var DefaultShedOrder = []Register{Considered, Generated, Craft}

// Errors of a budget.
var (
	// ErrInvalid is a budget that cannot be used: binding in the shed
	// order, a register twice, no counter, a negative total.
	ErrInvalid = errors.New("invalid budget")
	// ErrBudgetExceeded is a prompt that does not fit even with everything
	// sheddable shed; errors.As gives the numbers in an *ExceededError.
	ErrBudgetExceeded = errors.New("budget exceeded")
)

// New returns a checked budget.
func New(counter Counter, total int, order ...Register) (*Budget, error) {
	b := &Budget{Counter: counter, Total: total, ShedOrder: order}
	if err := b.Check(); err != nil {
		return nil, err
	}
	return b, nil
}

// Check reports whether the budget can be used.
func (b *Budget) Check() error {
	switch {
	case b.Counter == nil:
		return fmt.Errorf("%w: no counter", ErrInvalid)
	case b.Total < 0:
		return fmt.Errorf("%w: total %d is negative", ErrInvalid, b.Total)
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
		return DefaultShedOrder
	}
	return b.ShedOrder
}

func (b *Budget) cache() *Cache {
	if b.Cache == nil {
		return defaultCache
	}
	return b.Cache
}

// Candidate is a fragment the budget may shed: its place in the prompt, its
// register and its rank.
type Candidate struct {
	Index    int
	Register Register
	Rank     int
}

// ShedSequence returns the candidates in the order they are shed: by the
// register's place in the shed order, then lowest rank first, then the one
// that stands later in the prompt first. Candidates whose register is not in
// the shed order (binding always) are left out: they are never shed.
func (b *Budget) ShedSequence(cands []Candidate) []Candidate {
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
		at := slices.Index(order, c.Register)
		if at < 0 {
			of[i] = -1
			continue
		}
		k := class{at, c.Rank}
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
	out := make([]Candidate, pos)
	// Within a class the later fragment goes first: filled from the last
	// candidate back, a class comes out in descending order of Index when
	// the candidates came in ascending order, as the reducer gives them.
	for i := len(cands) - 1; i >= 0; i-- {
		if id := of[i]; id >= 0 {
			out[start[id]] = cands[i]
			start[id]++
		}
	}
	if !slices.IsSortedFunc(cands, func(x, y Candidate) int { return cmp.Compare(x.Index, y.Index) }) {
		for _, id := range byOrder {
			n := counts[id]
			group := out[start[id]-n : start[id]]
			slices.SortStableFunc(group, func(x, y Candidate) int { return cmp.Compare(y.Index, x.Index) })
		}
	}
	return out
}

// ShedPrefix begins the manifest reason of every fragment a budget shed.
const ShedPrefix = "shed by budget: "

// ShedReason is the manifest reason of a shed fragment.
func ShedReason(r Register, rank int) string {
	return ShedPrefix + r.String() + " rank " + strconv.Itoa(rank)
}

// ExceededError is a prompt over its budget with nothing left to shed.
type ExceededError struct {
	Encoding string
	Total    int
	// Count is the prompt's size with every sheddable fragment shed.
	Count int
	// Shed is how many fragments were shed before giving up.
	Shed int
}

func (e *ExceededError) Error() string {
	unit := e.Encoding + " tokens"
	if e.Encoding == EncodingBytes {
		unit = "bytes"
	}
	return fmt.Sprintf("budget exceeded: the prompt is %d %s with every sheddable fragment shed (%d shed), over the budget of %d; binding fragments are never shed",
		e.Count, unit, e.Shed, e.Total)
}

// Is makes ExceededError match ErrBudgetExceeded.
func (e *ExceededError) Is(t error) bool { return t == ErrBudgetExceeded }
