package cli

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/assemble"
	"github.com/promptloom/promptloom/internal/textsafe"
)

func init() {
	register("assemble", "assemble [--format text|json|body] [--strategy priced|when-full] [--expected-turns N] [--keep TOKENS] FILE", runAssemble)
}

// runAssemble is assemble FILE: the conversation in FILE (docs/assemble.md)
// assembled into its latest call's request body, and every part and
// breakpoint accounted for: text (a line a part), json (the manifest), or
// body (the request body to send).
func runAssemble(e *env, args []string) int {
	fs := newFlags("assemble")
	format := fs.String("format", "text", "text, json (the manifest) or body (the request body)")
	strategy := fs.String("strategy", "priced", "when to compact: priced (when a cut pays for itself, or the turns do not fit) or when-full")
	expected := fs.Int("expected-turns", 0, "further calls a cut is expected to serve (0: 20)")
	keep := fs.Int("keep", 0, "tokens of the latest turns a compaction leaves whole (0: a quarter of the input budget)")
	pos, err := parseInterleaved(fs, args)
	if err == nil {
		err = oneOf("format", *format, "text", "json", "body")
	}
	if err == nil {
		err = oneOf("strategy", *strategy, "priced", "when-full")
	}
	if err != nil {
		return e.flagError(fs, "assemble", err)
	}
	if len(pos) != 1 {
		return e.fail("assemble: give one conversation FILE (or - for stdin)")
	}
	data, err := e.readLimited(pos[0], promptloom.DefaultMaxBytes)
	if err != nil {
		return e.fail("assemble: %v", err)
	}
	c, err := assemble.Read(data)
	if err != nil {
		return e.fail("assemble: %s: %v", shown(pos[0]), err)
	}
	o := &assemble.Options{ExpectedTurns: *expected, KeepRecent: *keep}
	if *strategy == "when-full" {
		o.Strategy = assemble.WhenFull
	}
	r, err := assemble.Assemble(c, o)
	if err != nil {
		return e.fail("assemble: %s: %v", shown(pos[0]), err)
	}
	switch *format {
	case "body":
		_, err = e.stdout.Write(append(r.Body, '\n'))
	case "json":
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(r.Manifest)
	default:
		err = writeAssembly(e, r.Manifest)
	}
	if err != nil {
		return e.fail("assemble: %v", err)
	}
	return ExitOK
}

// writeAssembly prints a manifest for a person: the totals, a line a
// part, the breakpoints and the compactions.
func writeAssembly(e *env, m *assemble.Manifest) error {
	counts := map[string]int{}
	for _, p := range m.Parts {
		counts[p.Status]++
	}
	fmt.Fprintf(e.stdout, "%s %s: %d input tokens (%s) of %d (window %d, output reserve %d); %d included, %d cleared, %d summarised, %d dropped\n",
		textsafe.Line(m.Provider), textsafe.Line(m.Model), m.Tokens, m.Counter, m.Window-m.OutputReserve, m.Window, m.OutputReserve,
		counts[assemble.Included], counts[assemble.Cleared], counts[assemble.Summarised], counts[assemble.Dropped])
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "status\tid\tkind\ttokens\tpath\treason")
	for _, p := range m.Parts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", p.Status, textsafe.Line(p.ID), p.Kind, p.Tokens, p.Path, textsafe.Line(p.Reason))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, b := range m.Breakpoints {
		where := b.Path
		if where == "" {
			where = "(implicit)"
		}
		fmt.Fprintf(e.stdout, "breakpoint %s %s (%d tokens): %s\n", where, b.TTL, b.Tokens, textsafe.Line(b.Reason))
	}
	for i, c := range m.Compactions {
		fmt.Fprintf(e.stdout, "compaction %d, at %s: %d cleared, %d summarised, %d dropped, %d tokens saved, %d rewritten: %s\n",
			i+1, textsafe.Line(c.At), c.Cleared, c.Summarised, c.Dropped, c.Saved, c.Rewrite, textsafe.Line(c.Reason))
	}
	_, err := fmt.Fprintf(e.stdout, "body %s\n", m.BodyDigest)
	return err
}
