package budget

import (
	"errors"
	"fmt"
)

// Budget is a size limit and how to meet it: promptloom.Reduce holds a
// prompt to it (Options.Budget), shedding fragments by register and rank.
// Its zero value counts nothing and is invalid: it needs a Counter.
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
