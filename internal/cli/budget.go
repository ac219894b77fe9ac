package cli

import (
	"flag"
	"fmt"
	"math"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/explain"
)

// pipelineFlags adds the flags that shape a prompt's pipeline to a command
// (explain, manifest, diff): --project DIR, --budget N and --counter NAME.
// The returned function gives the explain options they ask for: with
// --budget, hold the prompt to N; with --counter alone, count without a
// limit.
func pipelineFlags(fs *flag.FlagSet) func() ([]explain.Option, error) {
	projectDir := fs.String("project", "", "add the project profile of DIR: its signals become capabilities and gated fragments")
	total := fs.Int("budget", -1, "hold the prompt to N bytes or tokens, shedding by register and rank")
	counter := fs.String("counter", "", "what --budget counts: bytes, o200k_base (the default) or cl100k_base")
	return func() ([]explain.Option, error) {
		var opts []explain.Option
		if *projectDir != "" {
			opts = append(opts, explain.WithProject(*projectDir, nil))
		}
		if *total < 0 && *counter == "" {
			return opts, nil
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
		return append(opts, explain.WithBudget(b)), nil
	}
}
