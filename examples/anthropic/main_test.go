package main

import (
	"os"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/internal/testkit/exampletest"
)

// Two streamed turns with a tool call through the official SDK and the
// transport: the transcript verifies, the secret never reaches it, and
// the second turn's cache read is recorded beside the prefix kept stable.
func TestExample(t *testing.T) { exampletest.Check(t, run, fakeAnthropic) }

// The promptloom-specific code is at most exampletest.MaxLines lines.
func TestPromptloomLines(t *testing.T) { t.Logf("%d lines", exampletest.Lines(t)) }

// The example builds and runs as a program, and `promptloom verify` passes.
func TestProgram(t *testing.T) { exampletest.Program(t) }

// The README's harness section is this example: each line of its Go block
// (but the "// ..." elisions) is a line of main.go, in order.
func TestREADMEShowsThisExample(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "## A harness on an official SDK")
	_, block, ok2 := strings.Cut(section, "```go\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("the README has no harness section with a Go block")
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	at := 0
	for _, want := range strings.Split(strings.TrimSpace(block), "\n") {
		if strings.HasPrefix(strings.TrimSpace(want), "// ...") || strings.TrimSpace(want) == "" {
			continue
		}
		for at < len(lines) && lines[at] != want {
			at++
		}
		if at == len(lines) {
			t.Fatalf("the README's line is not in main.go (in order): %s", want)
		}
	}
}
