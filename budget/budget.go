package budget

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/promptloom/promptloom/fragment"
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
	ShedOrder []fragment.Register
	// Cache remembers counts; nil means a bounded cache shared by the
	// process.
	Cache *Cache
}

// DefaultShedOrder sheds considered material first, then generated prose,
// then craft advice; rules (binding) are never shed.
var DefaultShedOrder = []fragment.Register{fragment.Considered, fragment.Generated, fragment.Craft}

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
func New(counter Counter, total int, order ...fragment.Register) (*Budget, error) {
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
		if r == fragment.Binding {
			return fmt.Errorf("%w: binding fragments are never shed, so binding cannot be in the shed order", ErrInvalid)
		}
		if slices.Contains(b.ShedOrder[:i], r) {
			return fmt.Errorf("%w: %s is in the shed order twice", ErrInvalid, r)
		}
	}
	return nil
}

func (b *Budget) order() []fragment.Register {
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
	Register fragment.Register
	Rank     int
}

// ShedSequence returns the candidates in the order they are shed: by the
// register's place in the shed order, then lowest rank first, then the one
// that stands later in the prompt first. Candidates whose register is not in
// the shed order (binding always) are left out: they are never shed.
func (b *Budget) ShedSequence(cands []Candidate) []Candidate {
	order := b.order()
	out := make([]Candidate, 0, len(cands))
	for _, c := range cands {
		if slices.Contains(order, c.Register) {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(x, y Candidate) int {
		return cmp.Or(
			cmp.Compare(slices.Index(order, x.Register), slices.Index(order, y.Register)),
			cmp.Compare(x.Rank, y.Rank),
			cmp.Compare(y.Index, x.Index), // later first
		)
	})
	return out
}

// ShedReason is the manifest reason of a shed fragment.
func ShedReason(r fragment.Register, rank int) string {
	return "shed by budget: " + r.String() + " rank " + strconv.Itoa(rank)
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
