package cli

import (
	"flag"
	"fmt"
	"math"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/explain"
)

// budgetFlags adds --budget and --counter to a command. The returned
// function gives the explain options they ask for: with --budget, hold the
// prompt to N; with --counter alone, count without a limit.
func budgetFlags(fs *flag.FlagSet) func() ([]explain.Option, error) {
	total := fs.Int("budget", -1, "hold the prompt to N bytes or tokens, shedding by register and rank")
	counter := fs.String("counter", "", "what --budget counts: bytes, o200k_base (the default) or cl100k_base")
	return func() ([]explain.Option, error) {
		if *total < 0 && *counter == "" {
			return nil, nil
		}
		name := *counter
		if name == "" {
			name = budget.EncodingO200k
		}
		c, err := budget.NewCounter(name)
		if err != nil {
			return nil, fmt.Errorf("--counter: %w", err)
		}
		n := *total
		if n < 0 {
			n = math.MaxInt
		}
		b, err := budget.New(c, n)
		if err != nil {
			return nil, err
		}
		return []explain.Option{explain.WithBudget(b)}, nil
	}
}
