package main

import (
	"testing"

	"github.com/promptloom/promptloom/internal/testkit/exampletest"
)

// Two streamed turns with a tool call through the official SDK and the
// transport: the transcript verifies, the secret never reaches it, and
// the second turn's cache read is recorded beside the prefix kept stable.
func TestExample(t *testing.T) { exampletest.Check(t, run, fakeOpenAI) }

// The promptloom-specific code is at most exampletest.MaxLines lines.
func TestPromptloomLines(t *testing.T) { t.Logf("%d lines", exampletest.Lines(t)) }

// The example builds and runs as a program, and `promptloom verify` passes.
func TestProgram(t *testing.T) { exampletest.Program(t) }
