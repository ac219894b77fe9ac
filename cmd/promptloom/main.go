// Command promptloom builds, explains, diffs and verifies LLM system
// prompts. Run `promptloom help` for the subcommands; the README has a tour.
package main

import (
	"os"

	"github.com/promptloom/promptloom/cmd/promptloom/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
