package cli

import (
	"flag"
	"fmt"
	"math"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/options"
)

// pipeline is what the shared flags ask of a command's explanations.
type pipeline struct {
	explain []explain.Option
	parse   []options.ParseOption
}

// pipelineFlags adds the flags that shape a prompt's pipeline to a command
// (explain, manifest, diff): --project DIR, --budget N, --counter NAME and
// --max-bytes N. With --budget the prompt is held to N; with --counter
// alone it is counted without a limit.
func pipelineFlags(fs *flag.FlagSet) func() (pipeline, error) {
	maxBytes := fs.Int("max-bytes", options.DefaultMaxBytes, "refuse options files larger than N bytes")
	projectDir := fs.String("project", "", "add the project profile of DIR: its signals become capabilities and gated fragments")
	total := fs.Int("budget", -1, "hold the prompt to N bytes or tokens, shedding by register and rank")
	counter := fs.String("counter", "", "what --budget counts: bytes, o200k_base (the default) or cl100k_base")
	return func() (pipeline, error) {
		p := pipeline{parse: []options.ParseOption{options.MaxBytes(*maxBytes)}}
		p.explain = append(p.explain, explain.WithParseOptions(p.parse...))
		if *projectDir != "" {
			p.explain = append(p.explain, explain.WithProject(*projectDir, nil))
		}
		if *total < 0 && *counter == "" {
			return p, nil
		}
		name := *counter
		if name == "" {
			name = budget.EncodingO200k
		}
		c, err := budget.NewCounter(name)
		if err != nil {
			return p, fmt.Errorf("--counter: %w", err)
		}
		n := *total
		if n < 0 {
			n = math.MaxInt
		}
		b, err := budget.New(c, n)
		if err != nil {
			return p, err
		}
		p.explain = append(p.explain, explain.WithBudget(b))
		return p, nil
	}
}
