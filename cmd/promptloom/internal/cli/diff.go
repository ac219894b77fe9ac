package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/harn/options"
	"github.com/promptloom/promptloom/payload"
)

func init() {
	register("diff", "diff [--format text|json|html] A [B] [--without-tool N] [--with-tool N] [--with-cap N] [--without-cap N] [--provider P | --model NAME] [--project DIR] [--budget N] [--counter NAME] [--bindings FILE] [--max-bytes N] | diff --transcript FILE --call A --call B [--format text|json|html] | diff --request [--provider P] [--model NAME] [--min MODEL=N] [--format text|json] A.json B.json | diff --request --transcript FILE --call A --call B", runDiff)
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
		if *transcript != "" {
			return e.diffRecordedRequests(pos, wf, *format, *transcript, calls)
		}
		return e.diffRequest(pos, wf, *format, pl)
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
	order, err := cacheOrderOf(*wf.provider, *wf.model)
	if err != nil {
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
		if gatedOn(c, a, b) {
			continue
		}
		if c.kind() == "tool" {
			fmt.Fprintf(e.stderr, "promptloom: diff: note: no fragment is gated on tool %q, so --%s %s changes nothing in the system prompt (the tools sent still differ)\n", c.name, c.flag, c.name)
		} else {
			fmt.Fprintf(e.stderr, "promptloom: diff: note: no fragment is gated on %s %q, so --%s %s changes nothing\n", c.kind(), c.name, c.flag, c.name)
		}
	}
	d := explain.Diff(a, b, pos[0], bName)
	if msg := order.account(d, oa.ActiveTools(), ob.ActiveTools()); msg != "" {
		fmt.Fprintf(e.stderr, "promptloom: diff: %s\n", msg)
	}
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

// diffRecordedRequests is diff --request --transcript FILE --call A
// --call B: where B leaves A's prefix, and what that costs under the
// provider's cache. The calls go with what their provider reported, so
// B's predicted read and write are scaled as cache --transcript scales
// them: for B after the call before it, the figures cache gives it. Exit
// 0 when B keeps A's whole prefix, 1 when it leaves it.
func (e *env) diffRecordedRequests(pos []string, w *wholeFlags, format, transcript string, calls []string) int {
	if err := oneOf("format", format, "text", "json"); err != nil {
		return e.fail("diff: --request: %v", err)
	}
	if len(calls) != 2 || len(pos) > 0 {
		return e.fail("diff: --transcript FILE --call A --call B --request compares two recorded calls' whole requests: give --call twice and no file")
	}
	rs, err := e.recordedRequests(transcript)
	if err != nil {
		return e.fail("diff: %v", err)
	}
	ra, err := pickCall(rs, calls[0])
	var rb *cache.Recorded
	if err == nil {
		rb, err = pickCall(rs, calls[1])
	}
	if err != nil {
		return e.fail("diff: %s: %v", shown(transcript), err)
	}
	c := cache.Compare(cache.Call{Name: calls[0], Request: ra.Request, Reported: ra.Report.Usage},
		cache.Call{Name: calls[1], Request: rb.Request, Reported: rb.Report.Usage}, w.cacheOptions())
	if format == "json" {
		err = c.WriteJSON(e.stdout)
	} else {
		err = c.WriteText(e.stdout)
	}
	if err != nil {
		return e.fail("diff: %v", err)
	}
	if c.KeepsPrefix {
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
	c.Capabilities = slices.Clone(o.Capabilities)
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
		if !slices.Contains(o.Capabilities, c.name) {
			o.Capabilities = append(o.Capabilities, c.name)
		}
	case "without-cap":
		is := func(s string) bool { return s == c.name }
		o.Capabilities = slices.DeleteFunc(o.Capabilities, is)
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

// cacheOrder is where a provider's prompt cache reads the tool
// definitions: a diff of options compares system prompts, and a changed
// tool ahead of the system prompt leaves none of it to read. Its zero
// value is a provider not known.
type cacheOrder struct {
	provider   string // "" when not known
	toolsFirst bool
}

// cacheOrderOf is the order of the provider --provider names, or of the
// one --model's name belongs to; neither given (or a model of no known
// family) is the zero cacheOrder.
func cacheOrderOf(provider, model string) (cacheOrder, error) {
	p, err := payload.ParseProvider(provider)
	if err != nil {
		return cacheOrder{}, fmt.Errorf("--provider: %w", err)
	}
	if p != payload.Auto {
		if model != "" && modelProvider(model) != "" && modelProvider(model) != providerFamily(p) {
			return cacheOrder{}, fmt.Errorf("--model %s is not a model of --provider %s", model, p)
		}
		return cacheOrder{provider: string(p), toolsFirst: toolsFirst(p)}, nil
	}
	switch modelProvider(model) {
	case "anthropic":
		return cacheOrder{provider: "anthropic", toolsFirst: true}, nil
	case "openai":
		return cacheOrder{provider: "openai", toolsFirst: true}, nil
	case "gemini":
		return cacheOrder{provider: "gemini"}, nil
	}
	return cacheOrder{}, nil
}

// toolsFirst reports whether p's requests put the tool definitions ahead
// of the system prompt in cache order (docs/request.md): Anthropic's
// (tools, system, messages) and OpenAI's (tools, then the instructions or
// the messages) do; Gemini's reads systemInstruction first.
func toolsFirst(p payload.Provider) bool { return p != payload.Gemini }

// providerFamily is the family modelProvider names p's models by.
func providerFamily(p payload.Provider) string {
	if p == payload.OpenAIChat || p == payload.OpenAIResponses {
		return "openai"
	}
	return string(p)
}

// modelProvider is the provider whose models are named as model is
// (claude-…, gpt-… or o1…, gemini-…); "" for another name.
func modelProvider(model string) string {
	m := strings.ToLower(model)
	switch {
	case strings.HasPrefix(m, "claude-"):
		return "anthropic"
	case strings.HasPrefix(m, "gemini-"):
		return "gemini"
	case strings.HasPrefix(m, "gpt-"), len(m) > 1 && m[0] == 'o' && m[1] >= '1' && m[1] <= '9':
		return "openai"
	}
	return ""
}

// account makes d's cache figures the provider's when B's active tools
// are not A's, and says what it did; "" when the tools are the same. A
// provider that reads the tools first shares nothing of B's system
// prompt with A's cache: d then says 0 bytes in common, B re-sent whole,
// and not identical (the requests differ, whatever the prompts do). With
// the provider not known the figure stays the system prompt's, and the
// message says what it assumes.
func (o cacheOrder) account(d *explain.Delta, ta, tb []string) string {
	if slices.Equal(ta, tb) {
		return ""
	}
	what := toolChange(ta, tb)
	shared := fmt.Sprintf("the system prompts alone share %d bytes", d.CommonPrefixBytes)
	if d.Identical {
		shared = "the system prompts are identical"
	}
	switch {
	case o.provider == "":
		return fmt.Sprintf("cache: B's tools differ from A's (%s); the figure is the system prompt's alone, as Gemini reads it (before the tools); Anthropic and OpenAI read the tools first and would share none of it: give --provider or --model", what)
	case !o.toolsFirst:
		return fmt.Sprintf("cache: B's tools differ from A's (%s); %s reads the system prompt before the tools, so the cache figure holds, and the tools and what follows them are sent again", what, o.provider)
	}
	d.CommonPrefixBytes, d.ResendBytes, d.Identical = 0, len(d.B.System), false
	return fmt.Sprintf("cache: B's tools differ from A's (%s), and %s reads the tools before the system prompt: nothing of B is read from A's cache (%s)", what, o.provider, shared)
}

// toolChange says how tb differs from ta: the tools it is without or
// with, or that they are reordered.
func toolChange(ta, tb []string) string {
	var parts []string
	var without, with []string
	for _, t := range ta {
		if !slices.Contains(tb, t) {
			without = append(without, t)
		}
	}
	for _, t := range tb {
		if !slices.Contains(ta, t) {
			with = append(with, t)
		}
	}
	if len(without) > 0 {
		parts = append(parts, "without "+strings.Join(without, ", "))
	}
	if len(with) > 0 {
		parts = append(parts, "with "+strings.Join(with, ", "))
	}
	if len(parts) == 0 {
		return "the same tools, reordered"
	}
	return strings.Join(parts, "; ")
}
