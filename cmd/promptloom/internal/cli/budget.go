package cli

import (
	"flag"
	"fmt"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/harn/options"
)

// pipeline is what the shared flags ask of a command's explanations.
type pipeline struct {
	explain explain.Options
	parse   options.ParseOptions
	// maxBytes bounds each options file read (--max-bytes).
	maxBytes int64
	// bindings is --bindings, the call's bindings file for templated
	// fragments ("": none); read once, by loadBindings.
	bindings string
}

// pipelineFlags adds the flags that shape a prompt's pipeline to a command
// (explain, manifest, diff): --project DIR, --budget N, --counter NAME and
// --max-bytes N. With --budget the prompt is held to N; with --counter
// alone it is counted without a limit. A negative --budget or a
// --max-bytes below 1 is an error, never a silent "no limit".
func pipelineFlags(fs *flag.FlagSet) func() (pipeline, error) {
	maxBytes := fs.Int("max-bytes", promptloom.DefaultMaxBytes, "refuse options files larger than N bytes")
	projectDir := fs.String("project", "", "add the project profile of DIR: its signals become capabilities and gated fragments")
	total := fs.Int("budget", 0, "hold the prompt to N bytes or tokens, shedding by register and rank")
	counter := fs.String("counter", "", "what --budget counts: bytes, o200k_base (the default) or cl100k_base; alone, count without a limit")
	bindings := fs.String("bindings", "", "a JSON object of the call's bindings (a file, or - for stdin): templated fragments render with them, over their own")
	return func() (pipeline, error) {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if *maxBytes < 1 {
			return pipeline{}, fmt.Errorf("--max-bytes must be at least 1, got %d", *maxBytes)
		}
		if set["budget"] && *total < 0 {
			return pipeline{}, fmt.Errorf("--budget must be 0 or more, got %d", *total)
		}
		if set["project"] && *projectDir == "" {
			return pipeline{}, fmt.Errorf("--project must name a directory, got \"\"")
		}
		if set["counter"] && *counter == "" {
			return pipeline{}, fmt.Errorf("--counter must name a counter, got \"\"")
		}
		// Every options file is read into a buffer of its own that nothing
		// changes afterwards: it is parsed in place.
		p := pipeline{parse: options.ParseOptions{MaxBytes: *maxBytes, InPlace: true}, maxBytes: int64(*maxBytes), bindings: *bindings}
		p.explain = explain.Options{ParseOptions: options.ParseOptions{MaxBytes: *maxBytes, InPlace: true}, Project: *projectDir}
		if !set["budget"] && !set["counter"] {
			return p, nil
		}
		name := *counter
		if name == "" {
			name = "o200k_base"
		}
		c, err := budget.NewCounter(name)
		if err != nil {
			return p, fmt.Errorf("--counter: %w", err)
		}
		// --counter alone counts the prompt and holds it to nothing.
		p.explain.Budget = &budget.Budget{Counter: c, Total: *total, Unlimited: !set["budget"]}
		return p, nil
	}
}
