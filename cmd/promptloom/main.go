// Command promptloom builds, explains, diffs and verifies LLM system
// prompts. Run `promptloom help` for the subcommands; the README has a tour.
package main

// docs/errors.md is generated from the error catalogue (testdata/errors and
// internal/errdoc), by running every case; TestErrorsDoc checks it is current.
//go:generate go run ./internal/errdoc/gendoc

import (
	"os"

	"github.com/promptloom/promptloom/cmd/promptloom/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
