// Command gendoc writes docs/errors.md from the error catalogue
// (cmd/promptloom/testdata/errors and cmd/promptloom/internal/errdoc).
// Run it with go generate ./cmd/promptloom: it runs every case, and
// writes the page only when every case ran as the catalogue says.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/promptloom/promptloom/cmd/promptloom/internal/errdoc"
)

func main() {
	dir := flag.String("dir", ".", "the directory of cmd/promptloom")
	out := flag.String("o", "../../docs/errors.md", "the page to write")
	flag.Parse()
	page, err := errdoc.Generate(*dir, nil)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gendoc: %v\n", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, page.Markdown, 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "gendoc: %v\n", err)
		os.Exit(1)
	}
}
