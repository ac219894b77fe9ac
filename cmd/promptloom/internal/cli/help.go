package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
)

// examples holds one example invocation per flag set name (a subcommand, or
// "demo SCENARIO"). helpFor prints it under the flags.
var examples = map[string]string{
	"proxy":                "promptloom proxy --upstream https://api.anthropic.com --transcript run.jsonl",
	"cache":                "promptloom cache --transcript run.jsonl --strict",
	"assemble":             "promptloom assemble --format body conversation.json > body.json",
	"replay":               "promptloom replay --transcript run.jsonl --assemble --window 48000 --write bodies",
	"explain":              "promptloom explain --lint --strict opts.json",
	"manifest":             "promptloom manifest --hash opts.json",
	"diff":                 "promptloom diff opts.json --without-tool todo",
	"verify":               "promptloom verify manifest.json system.txt",
	"render":               "promptloom render prompt.prompt --bindings bindings.json",
	"demo":                 "promptloom demo prompt-guidance",
	"demo prompt-guidance": "promptloom demo prompt-guidance --format html > page.html",
	"demo negotiation":     "promptloom demo negotiation --record run.db",
	"report":               "promptloom report --transcript run.db.jsonl --format html > run.html",
	"keygen":               "promptloom keygen alice",
	"witness":              "promptloom witness --key w1.key --log run.pub --state witness-state",
	"prove":                "promptloom prove --transcript run.db.jsonl --call round-1/uk --key alice.pub --out call.proof",
	"serve":                "promptloom serve --transcript run.db.jsonl --key alice.pub --listen :8080",
	"transcript":           "promptloom transcript import run.db.jsonl 'postgres://loom@db/runs?session=run-1'",
}

// summaries say in a line what each command does, for the top-level help.
// TestEveryCommandHasASummary keeps one for each registered command.
var summaries = map[string]string{
	"proxy":      "a gateway any harness points its SDK's base URL at: every model call held to its prompt, journaled whole, and shown on a live page",
	"assemble":   "assemble a conversation (tools, system fragments, turns) into its latest call's request body, compacted as the provider's cache prices it, every part accounted for",
	"replay":     "assemble each recorded call again from its turns, and show it beside the call as recorded: tokens, cache reads and writes, cost",
	"cache":      "predict each recorded call's prompt-cache read and write from the calls before it, beside what the provider reported, and blame every miss",
	"demo":       "run a built-in scenario: prompt-guidance (a prompt explained) or negotiation (an event log, recorded)",
	"diff":       "compare two prompts, or a prompt and one derived from it, fragment by fragment",
	"explain":    "say why every fragment of a prompt is in it or not, with its bytes and digest",
	"keygen":     "write a signing key pair for transcripts: NAME.key (secret) and NAME.pub",
	"manifest":   "print a prompt's context manifest (harn.llm.context_manifest.v1)",
	"prove":      "write a proof that one recorded call is in a signed transcript, or that the run extends a checkpoint an auditor kept",
	"serve":      "serve a signed transcript's trees of calls as C2SP tlog-tiles, for auditors' tools",
	"render":     "render a template in Harn's template language",
	"report":     "show a verified transcript to a person: each call, its prompt and its reply",
	"transcript": "keep transcripts in PostgreSQL: migrate (create the tables), import (a file as one session), export (a session as its file)",
	"verify":     "check a manifest against a prompt or a request body, a transcript's chain, signatures and cosignatures, or a proof",
	"why":        "find every place a text occurs in a prompt and the fragment, template line and binding it came from",
	"witness":    "cosign transcript checkpoints (C2SP tlog-witness) only when each is consistent with the last one cosigned",
}

// details add to a command's help what its usage line cannot say.
var details = map[string]string{
	"keygen": "Writes NAME.key, the signer key (mode 0600: keep it secret; --sign takes it), and NAME.pub, the verifier key (verify --key and prove --key take it). An existing file is never overwritten.",
	"transcript": "migrate URL creates the transcript tables (the one step that needs CREATE on the schema). " +
		"import FILE URL stores a transcript file as one new session, named by ?session=NAME or after the file: all its lines or none. " +
		"export URL writes one session (?session=NAME) to stdout, byte for byte the file it came from.",
}

// usageOf returns the usage line of a flag set name: a registered command's,
// or a demo scenario's part of demo's.
func usageOf(name string) string {
	if c, ok := commands[name]; ok {
		return c.usage
	}
	if scenario, ok := strings.CutPrefix(name, "demo "); ok {
		for _, alt := range strings.Split(commands["demo"].usage, " | demo ") {
			if alt, _ = strings.CutPrefix(alt, "demo "); strings.HasPrefix(alt, scenario) {
				return "demo " + alt
			}
		}
	}
	return name
}

// writeHelp prints a flag set's help: the usage line, one line per flag
// (name, value placeholder, description, default when it is not the zero
// value), and an example.
func writeHelp(w io.Writer, name string, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: promptloom %s\n", usageOf(name))
	if d, ok := details[name]; ok {
		fmt.Fprintf(w, "\n%s\n", d)
	}
	var lines [][2]string
	width := 0
	fs.VisitAll(func(f *flag.Flag) {
		arg, desc := flag.UnquoteUsage(f)
		arg = placeholder(name, f.Name, arg)
		left := "--" + f.Name
		if arg != "" {
			left += " " + arg
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "-1" {
			desc += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		width = max(width, len(left))
		lines = append(lines, [2]string{left, strings.ReplaceAll(desc, "\n", " ")})
	})
	if len(lines) > 0 {
		fmt.Fprintln(w, "\nflags:")
		for _, l := range lines {
			fmt.Fprintf(w, "  %-*s  %s\n", width, l[0], l[1])
		}
	}
	if ex, ok := examples[name]; ok {
		fmt.Fprintf(w, "\nexample:\n  %s\n", ex)
	}
}

// placeholder names a flag's value as the usage line does ("--project
// DIR" gives DIR), else N for a number and VALUE for anything else but a
// boolean.
func placeholder(name, flagName, arg string) string {
	usage := usageOf(name)
	if i := strings.Index(usage, "--"+flagName+" "); i >= 0 {
		rest := usage[i+len(flagName)+3:]
		if j := strings.IndexAny(rest, " ]"); j >= 0 {
			rest = rest[:j]
		}
		if rest != "" && !strings.HasPrefix(rest, "-") && !strings.HasPrefix(rest, "[") {
			return rest
		}
	}
	switch arg {
	case "":
		return ""
	case "int", "uint", "int64", "uint64", "float":
		return "N"
	}
	return "VALUE"
}

// isHelp reports whether an argument asks for help.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help"
}

// demoHelp prints the help of every demo scenario.
func demoHelp(e *env) int {
	fmt.Fprintf(e.stdout, "usage: promptloom %s\n\nexample:\n  %s\n", commands["demo"].usage, examples["demo"])
	for _, args := range [][]string{{"prompt-guidance", "--help"}, {"negotiation", "--help"}} {
		fmt.Fprintln(e.stdout)
		if code := runDemo(e, args); code != ExitOK {
			return code
		}
	}
	return ExitOK
}

// version prints the module version and the VCS revision the binary was
// built from, as the Go toolchain recorded them.
func version(w io.Writer) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		fmt.Fprintln(w, "promptloom (no build information)")
		return
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	rev, modified := "unknown", ""
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = " (modified)"
			}
		}
	}
	fmt.Fprintf(w, "promptloom %s, revision %s%s, %s\n", v, rev, modified, info.GoVersion)
}

// noticeTerminal tells the user, on stderr, that a command is waiting for
// input typed at a terminal: reading stdin from one otherwise looks like a
// hang. A terminal is what answers a terminal's ioctl, not any character
// device: `explain < /dev/null` reads no terminal, and says nothing.
func (e *env) noticeTerminal() {
	if f, ok := e.stdin.(interface{ Fd() uintptr }); ok {
		if is, known := isTerminal(f.Fd()); known {
			if is {
				fmt.Fprintln(e.stderr, terminalNotice)
			}
			return
		}
	}
	f, ok := e.stdin.(interface{ Stat() (os.FileInfo, error) })
	if !ok {
		return
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return
	}
	if d, err := os.Stat(os.DevNull); err == nil && os.SameFile(st, d) {
		return
	}
	fmt.Fprintln(e.stderr, terminalNotice)
}

// terminalNotice is noticeTerminal's line.
const terminalNotice = "promptloom: reading from the terminal (stdin); end with Ctrl-D, or name a FILE"
