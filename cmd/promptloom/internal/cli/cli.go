// Package cli is the promptloom command line: a thin layer that reads
// files, calls the library and prints. Each subcommand lives in its own
// file; none of them holds logic the library lacks.
//
// Every command's --help prints its usage line, one line per flag and an
// example (help.go), and exits 0. Exit codes follow diff(1): 0 for yes or
// same, 1 for a check that failed (verify, a diff that differs, lint under
// --strict), 2 for bad input. An options, manifest, system or payload file
// of "-" (for options, the default) reads stdin, with a notice on stderr
// when stdin is a terminal. A transcript is a file (or a pipe: each
// command reads it once) or a postgres:// URL (transcript.go); a
// key=value connection string is refused rather than taken as a path.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/promptloom/promptloom/internal/textsafe"
)

// Exit codes, as diff(1) uses them: 0 for yes/same, 1 for no/different, 2
// for trouble (bad input, unreadable file).
const (
	ExitOK      = 0
	ExitFail    = 1
	ExitBadArgs = 2
)

// env is what a command may touch: its streams and the file system through
// the working directory.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// optionBytes counts the options read so far, for the heap's soft
	// limit (boundHeap).
	optionBytes int64
	// cmd is the subcommand running: every error line names it.
	cmd string
}

type command struct {
	usage string
	run   func(e *env, args []string) int
}

var commands = map[string]command{}

func register(name, usage string, run func(e *env, args []string) int) {
	commands[name] = command{usage: usage, run: run}
}

// Main runs the command line and returns the exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) > 1 && args[0] == "help" && args[1] != "help" {
		// promptloom help explain is promptloom explain --help (and help
		// demo negotiation is demo negotiation --help).
		if _, ok := commands[args[1]]; !ok {
			return e.fail("help: unknown command %q (try: promptloom help)", args[1])
		}
		return Main(append(slices.Clone(args[1:]), "--help"), stdin, stdout, stderr)
	}
	if len(args) == 0 {
		usage(stderr) // a usage error: stderr, exit 2, as every usage error
		return ExitBadArgs
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return ExitOK
	}
	if args[0] == "--version" || args[0] == "version" {
		version(stdout)
		return ExitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		return e.fail("unknown command %q (try: promptloom help)", args[0])
	}
	defer e.releaseHeap()
	e.cmd = args[0]
	return c.run(e, args[1:])
}

// usage prints a line per command, what it does; a command's own help
// (promptloom help COMMAND) has its usage and flags.
func usage(w io.Writer) {
	fmt.Fprintln(w, "promptloom: build, explain, diff and verify LLM system prompts.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "usage: promptloom COMMAND [ARGS]; promptloom help COMMAND for its usage and flags; promptloom --version")
	fmt.Fprintln(w)
	names := make([]string, 0, len(commands))
	width := 0
	for n := range commands {
		names = append(names, n)
		width = max(width, len(n))
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-*s  %s\n", width, n, summaries[n])
	}
}

// fail prints one line to stderr and returns ExitBadArgs. Control
// characters in the message (from a file name, an id, a reason) are escaped
// (textsafe.Line): the line stays one line and no escape sequence reaches
// the terminal.
func (e *env) fail(format string, args ...any) int {
	msg := fmt.Sprintf(format, args...)
	if e.cmd != "" && msg != e.cmd && !strings.HasPrefix(msg, e.cmd+":") && !strings.HasPrefix(msg, e.cmd+" ") {
		msg = e.cmd + ": " + msg // every line names its subcommand, the same way
	}
	fmt.Fprintln(e.stderr, "promptloom: "+textsafe.Line(msg))
	return ExitBadArgs
}

// parseInterleaved parses flags that may stand before, between or after the
// positional arguments (promptloom diff a.json --without-tool todo).
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	// A flag that takes one value is refused the second time, instead of
	// the flag package's last-wins: --bindings A --bindings B would
	// silently use B for both sides of a diff. The repeatable ones are
	// fs.Func flags, which keep every value (they have no Get).
	fs.VisitAll(func(f *flag.Flag) {
		if g, ok := f.Value.(flag.Getter); ok {
			o := &once{Getter: g}
			if b, ok := g.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				f.Value = onceBool{o}
			} else {
				f.Value = o
			}
		}
	})
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// once is a flag that may be given once.
type once struct {
	flag.Getter
	set bool
}

func (o *once) Set(v string) error {
	if o.set {
		return errors.New("the flag is given twice; give it once")
	}
	o.set = true
	return o.Getter.Set(v)
}

// onceBool is a boolean flag that may be given once.
type onceBool struct{ *once }

func (onceBool) IsBoolFlag() bool { return true }

// newFlags returns a flag set that reports errors through e and not os.Exit.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// flagError turns a parse error of command's flags fs into the one-line
// failure, or --help into the command's help.
func (e *env) flagError(fs *flag.FlagSet, command string, err error) int {
	if errors.Is(err, flag.ErrHelp) {
		writeHelp(e.stdout, fs.Name(), fs)
		return ExitOK
	}
	msg := flagName.ReplaceAllString(err.Error(), "$1--$2")
	return e.fail("%s: %s (usage: promptloom %s)", command, msg, commands[command].usage)
}

// flagName finds the flag package's -name in its messages ("flag provided
// but not defined: -x", "invalid value \"y\" for flag -x: ..."), which
// the command writes --name, as its help and usage do.
var flagName = regexp.MustCompile(`(: |for flag |for )-([A-Za-z][-A-Za-z0-9]*)`)

// oneOf checks a flag's value against its choices.
func oneOf(flagName, value string, choices ...string) error {
	for _, c := range choices {
		if value == c {
			return nil
		}
	}
	return fmt.Errorf("--%s must be one of %s, got %q", flagName, strings.Join(choices, ", "), value)
}
