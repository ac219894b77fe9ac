package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/internal/testkit/exampletest"
	"github.com/promptloom/promptloom/transcript"
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

// The README's first cache verdict is this example's, and a clean one:
// each turn's read and write are what the rules predict (docs/caching.md),
// nothing is blamed, and the line the README shows is the one report
// prints for turn 1.
func TestREADMEFirstVerdictIsClean(t *testing.T) {
	t.Setenv("PROMPTLOOM_EXAMPLE_SECRET", "")
	f := fakeAnthropic()
	defer f.Close()
	path := filepath.Join(t.TempDir(), "run.jsonl")
	if err := run(path, io.Discard, f.URL); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := transcript.Verify(bytes.NewReader(data), nil)
	if err != nil || !rep.OK() {
		t.Fatalf("the transcript does not verify: %v", err)
	}
	rs, err := cache.FromTranscript(data, rep)
	if err != nil {
		t.Fatal(err)
	}
	an := cache.Run(cache.Calls(rs), nil)
	if len(an.Verdicts) != 2 {
		t.Fatalf("%d verdicts, want 2", len(an.Verdicts))
	}
	for _, v := range an.Verdicts {
		if v.Reported == nil || v.Predicted != *v.Reported || len(v.Blame) > 0 || len(v.Problems) > 0 {
			t.Errorf("%s: %s; blame %+v", v.Call, v, v.Blame)
		}
	}
	if v := an.Verdicts[1]; v.Predicted.Read == 0 {
		t.Errorf("turn 2 reads nothing: %s", v)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "## A harness on an official SDK")
	section, _, _ = strings.Cut(section, "\n## ")
	want := "#   cache: " + an.Verdicts[0].String()
	if !strings.Contains(section, "\n"+want+"\n") {
		t.Errorf("the README's harness section does not show turn 1's verdict:\n%s", want)
	}
}
