package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/cmd/promptloom/internal/cli"
	"github.com/promptloom/promptloom/cmd/promptloom/internal/errdoc"
)

// TestREADME runs the README's tour as a reader would type it: the first
// JSON block is opts.json, and every shell block's `$ promptloom ...` lines
// run in order in one directory (so system.txt and run.db carry from one
// block to the next), each compared with the output the README shows under
// it. So the README cannot drift from what the command prints. A block
// marked `sh` is an illustration that needs something the test has not got
// (a PostgreSQL server at a made-up address) and is not run.
//
// The README's shell is small: `promptloom ARGS` (an argument may be in
// single quotes, as errdoc.Args reads them), optionally with `> FILE`
// or `>> FILE`, `echo 'TEXT' | promptloom ARGS`, `printf TEXT >> FILE`, and
// a trailing `# comment`. In the shown output a line `...` stands for any
// number of lines, and `…` inside a line for any text.
func TestREADME(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```(\\w*)\\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	dir := t.TempDir()
	t.Chdir(dir)
	opts, ran := false, 0
	for _, b := range blocks {
		lang, body := b[1], b[2]
		if lang == "json" && !opts {
			if err := os.WriteFile("opts.json", []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			opts = true
			continue
		}
		if lang != "" || !strings.HasPrefix(body, "$ promptloom ") && !strings.HasPrefix(body, "$ echo ") {
			continue
		}
		for _, step := range readmeSteps(body) {
			ran++
			got := runReadmeStep(t, step.command)
			if !matchShown(step.shown, got) {
				t.Errorf("README: $ %s\nprints:\n%s\nREADME shows:\n%s", step.command, strings.Join(got, "\n"), strings.Join(step.shown, "\n"))
			}
		}
	}
	if !opts || ran < 10 {
		t.Fatalf("README: found opts.json %v and %d commands; the tour has moved", opts, ran)
	}
}

type readmeStep struct {
	command string
	shown   []string
}

// readmeSteps splits a shell block into commands and the lines shown under
// each.
func readmeSteps(body string) []readmeStep {
	var steps []readmeStep
	for _, line := range strings.Split(strings.TrimRight(body, "\n"), "\n") {
		if cmd, ok := strings.CutPrefix(line, "$ "); ok {
			if i := strings.Index(cmd, "  #"); i >= 0 {
				cmd = strings.TrimSpace(cmd[:i])
			}
			steps = append(steps, readmeStep{command: cmd})
			continue
		}
		if n := len(steps); n > 0 {
			steps[n-1].shown = append(steps[n-1].shown, line)
		}
	}
	return steps
}

// runReadmeStep runs one command of the README's small shell and returns
// what it printed on the terminal (stdout, then stderr), as lines.
func runReadmeStep(t *testing.T, command string) []string {
	t.Helper()
	var stdin string
	if rest, ok := strings.CutPrefix(command, "printf "); ok {
		text, file, ok := strings.Cut(rest, " >> ")
		if !ok {
			t.Fatalf("README: cannot run %q", command)
		}
		appendFile(t, file, text)
		return nil
	}
	if rest, ok := strings.CutPrefix(command, "echo '"); ok {
		text, pipe, ok := strings.Cut(rest, "' | ")
		if !ok {
			t.Fatalf("README: cannot run %q", command)
		}
		stdin, command = text+"\n", pipe
	}
	args := errdoc.Args(strings.TrimPrefix(command, "promptloom "))
	var redirect string
	var appendTo bool
	if n := len(args); n >= 2 && (args[n-2] == ">" || args[n-2] == ">>") {
		redirect, appendTo, args = args[n-1], args[n-2] == ">>", args[:n-2]
	}
	var stdout, stderr bytes.Buffer
	cli.Main(args, strings.NewReader(stdin), &stdout, &stderr)
	if redirect != "" {
		if !appendTo {
			if err := os.WriteFile(redirect, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		appendFile(t, redirect, stdout.String())
		stdout.Reset()
	}
	out := strings.TrimRight(stdout.String()+stderr.String(), "\n")
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

func appendFile(t *testing.T, name, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Clean(name), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// matchShown reports whether got is what the README shows: line for line,
// where a shown line "..." stands for any number of lines and "…" inside a
// shown line for any text.
func matchShown(shown, got []string) bool {
	if len(shown) == 0 {
		return len(got) == 0
	}
	if shown[0] == "..." {
		for i := 0; i <= len(got); i++ {
			if matchShown(shown[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && matchLine(shown[0], got[0]) && matchShown(shown[1:], got[1:])
}

func matchLine(shown, got string) bool {
	parts := strings.Split(shown, "…")
	if len(parts) == 1 {
		return shown == got
	}
	pattern := "^"
	for i, p := range parts {
		if i > 0 {
			pattern += ".*"
		}
		pattern += regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(pattern + "$").MatchString(got)
}

// TestREADMEProxyRuns: the README's proxy tour (a block it cannot run, as
// it needs a provider and a harness) is run by testdata/script/proxy.txtar:
// every promptloom subcommand the tour types is one the script runs.
func TestREADMEProxyRuns(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile("testdata/script/proxy.txtar")
	if err != nil {
		t.Fatal(err)
	}
	_, tour, ok := strings.Cut(string(readme), "## Any harness, any language: the proxy")
	if !ok {
		t.Fatal("README: no proxy section")
	}
	tour, _, _ = strings.Cut(tour, "\n## ")
	n := 0
	for _, m := range regexp.MustCompile(`(?m)^promptloom (\w+)`).FindAllStringSubmatch(tour, -1) {
		n++
		if !strings.Contains(string(script), "promptloom "+m[1]+" ") {
			t.Errorf("README's proxy tour runs promptloom %s; proxy.txtar does not", m[1])
		}
	}
	if n < 4 {
		t.Errorf("README's proxy tour has %d promptloom commands; it has moved", n)
	}
}
