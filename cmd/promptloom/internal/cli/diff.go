package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/harn/options"
)

func init() {
	register("diff", "diff [--format text|json|html] A [B] [--without-tool N] [--with-tool N] [--with-cap N] [--without-cap N] [--project DIR] [--budget N] [--counter NAME] [--bindings FILE] [--max-bytes N] | diff --transcript FILE --call A --call B [--format text|json|html] | diff --request [--provider P] [--model NAME] [--min MODEL=N] [--format text|json] A.json B.json | diff --request --transcript FILE --call A --call B", runDiff)
}

// change is one flag-derived edit of B, in the order given.
type change struct{ flag, name string }

// kind is what the change's name names: a tool or a capability.
func (c change) kind() string {
	if strings.HasSuffix(c.flag, "-tool") {
		return "tool"
	}
	return "capability"
}

// gatedOn reports whether a fragment of a or b is gated on the change's
// tool or capability: when none is, the change cannot alter B's prompt.
func gatedOn(c change, xs ...*explain.Explanation) bool {
	for _, x := range xs {
		if x.Reduction == nil {
			return true // nothing to tell from: say nothing
		}
		for _, r := range x.Reduction.Rows {
			gates := r.Fragment.RequiresCaps
			if c.kind() == "tool" {
				gates = r.Fragment.RequiresTools
			}
			if slices.Contains(gates, c.name) {
				return true
			}
		}
	}
	return false
}

// deriveHelp says what each derivation flag does to B.
var deriveHelp = map[string]string{
	"without-tool": "tool N, declared in B, made inactive (its guidance excluded by its gate)",
	"with-tool":    "tool N, declared in B, made active (guidance gated on it included)",
	"with-cap":     "capability N set",
	"without-cap":  "capability N unset, in capabilities and the profile's caps",
}

// runDiff compares two prompts. Exit 0 when the system strings are
// identical, 1 when they differ, 2 on bad input, like diff(1).
func runDiff(e *env, args []string) int {
	fs := newFlags("diff")
	format := fs.String("format", "text", "text, json or html")
	var changes []change
	for _, name := range []string{"without-tool", "with-tool", "with-cap", "without-cap"} {
		fs.Func(name, "derive B: "+deriveHelp[name]+" (repeatable)", func(v string) error {
			changes = append(changes, change{name, v})
			return nil
		})
	}
	pipelineOpts := pipelineFlags(fs)
	transcript := fs.String("transcript", "", "compare two recorded calls instead, from their transcript (a file, or a postgres:// URL of one session), verified first; with --call A --call B")
	var calls []string
	fs.Func("call", "with --transcript, a call to compare, by its name (twice: A, then B)", func(v string) error {
		calls = append(calls, v)
		return nil
	})
	whole := fs.Bool("request", false, "compare two whole provider requests instead: diff --request A.json B.json, or two recorded calls' with --transcript FILE --call A --call B (where B leaves A's prefix, and what that costs under the provider's cache)")
	wf := addWholeFlags(fs)
	pos, err := parseInterleaved(fs, args)
	if err == nil && *whole {
		pl, err := pipelineOpts()
		if err != nil {
			return e.flagError(fs, "diff", err)
		}
		return e.diffRequest(pos, wf, *format, *transcript, calls, pl)
	}
	if err == nil {
		err = oneOf("format", *format, "text", "json", "html")
	}
	if err == nil && (*transcript != "" || len(calls) > 0) {
		return e.diffRecorded(fs, pos, *transcript, calls, *format)
	}
	var pl pipeline
	if err == nil {
		pl, err = pipelineOpts()
	}
	if err != nil {
		return e.flagError(fs, "diff", err)
	}
	if len(pos) == 0 || len(pos) > 2 || (len(pos) == 1 && len(changes) == 0) {
		return e.fail("diff: give two options files, or one and at least one --with/--without flag")
	}
	if err := e.loadBindings(&pl); err != nil {
		return e.fail("%v", err)
	}

	oa, err := e.parseOptions(pos[0], pl)
	if err != nil {
		return e.fail("%v", named(pos[0], err))
	}
	ob, bName := derived(oa), pos[0]
	if len(pos) == 2 {
		if ob, err = e.parseOptions(pos[1], pl); err != nil {
			return e.fail("%v", named(pos[1], err))
		}
		bName = pos[1]
	}
	if err := contradicts(changes); err != nil {
		return e.fail("diff: %v", err)
	}
	var described []string
	for _, c := range changes {
		if err := apply(ob, c); err != nil {
			return e.fail("diff: --%s: %v", c.flag, err)
		}
		described = append(described, c.flag+" "+c.name)
	}
	if len(described) > 0 {
		bName += " (" + strings.Join(described, ", ") + ")"
	}

	a, err := explain.FromOptions(oa, &pl.explain)
	if err != nil {
		return e.fail("%s: %v", pos[0], err)
	}
	b, err := explain.FromOptions(ob, &pl.explain)
	if err != nil {
		return e.fail("%s: %v", bName, err)
	}
	for _, c := range changes {
		if !gatedOn(c, a, b) {
			fmt.Fprintf(e.stderr, "promptloom: diff: note: no fragment is gated on %s %q, so --%s %s changes nothing\n", c.kind(), c.name, c.flag, c.name)
		}
	}
	d := explain.Diff(a, b, pos[0], bName)
	switch *format {
	case "json":
		err = d.WriteJSON(e.stdout)
	case "html":
		err = d.WriteHTML(e.stdout, pos[0], bName)
	default:
		err = d.WriteText(e.stdout, pos[0], bName)
	}
	if err != nil {
		return e.fail("diff: %v", err)
	}
	if d.Identical {
		return ExitOK
	}
	return ExitFail
}

// named prefixes err with the file it concerns, unless it names it already.
func named(name string, err error) error {
	var big *InputTooLargeError
	if errors.As(err, &big) || strings.Contains(err.Error(), name) {
		return err
	}
	if name == "-" {
		name = "stdin"
	}
	return fmt.Errorf("%s: %w", name, err)
}

// contradicts refuses --with-X N beside --without-X N: which one wins
// would be the flags' order, and either way the other asked for nothing.
func contradicts(changes []change) error {
	opposite := map[string]string{"with-tool": "without-tool", "without-tool": "with-tool", "with-cap": "without-cap", "without-cap": "with-cap"}
	for i, a := range changes {
		for _, b := range changes[:i] {
			if b.name == a.name && b.flag == opposite[a.flag] {
				return fmt.Errorf("--%s %s and --%s %s contradict each other; give one", b.flag, b.name, a.flag, a.name)
			}
		}
	}
	return nil
}

// derived is a copy of o whose tools and capabilities can be changed
// without changing o's.
func derived(o *options.Options) *options.Options {
	c := *o
	c.Tools = slices.Clone(o.Tools)
	c.Capabilities, c.ProfileCaps = slices.Clone(o.Capabilities), slices.Clone(o.ProfileCaps)
	return &c
}

// apply makes one --with/--without change to B's active tools and
// capabilities. Both tool flags take a tool B declares, and refuse another
// (a misspelt name would otherwise derive B unchanged): --without-tool
// keeps the tool declared but inactive, so its guidance is still built and
// excluded by its gate; --with-tool makes it active. --with-cap sets a
// capability; --without-cap unsets it wherever it was set (capabilities
// or the profile's caps).
func apply(o *options.Options, c change) error {
	first := slices.IndexFunc(o.Tools, func(t options.Tool) bool { return t.Name == c.name })
	if first < 0 && (c.flag == "without-tool" || c.flag == "with-tool") {
		return fmt.Errorf("no such tool: %q is not declared in tools", c.name)
	}
	switch c.flag {
	case "without-tool":
		o.Tools[first].Active = false
	case "with-tool":
		o.Tools[first].Active = true
	case "with-cap":
		if !slices.Contains(o.AllCapabilities(), c.name) {
			o.Capabilities = append(o.Capabilities, c.name)
		}
	case "without-cap":
		is := func(s string) bool { return s == c.name }
		o.Capabilities, o.ProfileCaps = slices.DeleteFunc(o.Capabilities, is), slices.DeleteFunc(o.ProfileCaps, is)
	}
	return nil
}

func (e *env) parseOptions(name string, pl pipeline) (*options.Options, error) {
	if err := e.loadBindings(&pl); err != nil {
		return nil, err
	}
	data, err := e.readLimited(name, pl.maxBytes)
	if err != nil {
		return nil, err
	}
	e.boundHeap(len(data))
	files, done := optionsDir(name)
	defer done()
	pl.parse.Files = files
	return options.Parse(data, &pl.parse)
}
