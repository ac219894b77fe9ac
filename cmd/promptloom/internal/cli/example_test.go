package cli_test

import (
	"os"
	"strings"

	"github.com/promptloom/promptloom/cmd/promptloom/internal/cli"
)

func ExampleMain() {
	opts := strings.NewReader(`{"system": ["You are careful."]}`)
	code := cli.Main([]string{"explain", "--format", "raw"}, opts, os.Stdout, os.Stderr)
	os.Stdout.WriteString("\n")
	_ = code
	// Output: You are careful.
}
