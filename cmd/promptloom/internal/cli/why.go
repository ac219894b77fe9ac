package cli

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/internal/textsafe"
)

func init() {
	register("why", "why TEXT [OPTIONS.json|-] [--format text|json] [--limit N] [--without-tool N] [--with-tool N] [--with-cap N] [--without-cap N] [--project DIR] [--budget N] [--counter NAME] [--bindings FILE] [--max-bytes N] | why TEXT --transcript FILE --call NAME [--format text|json] [--limit N]", runWhy)
	examples["why"] = "promptloom why 'Keep the todo list current.' opts.json --without-tool todo"
}

// whyJSON is what why --format json prints.
type whyJSON struct {
	Text string `json:"text"`
	// Transcript and Call name the recorded call, when the prompt is one.
	Transcript string `json:"transcript,omitempty"`
	Call       string `json:"call,omitempty"`
	// InPrompt counts the occurrences in the system prompt (an occurrence
	// across a join separator is one, and a place for each fragment it
	// covers part of); LeftOut the places in fragments left out.
	InPrompt int             `json:"in_prompt"`
	LeftOut  int             `json:"left_out"`
	Places   []explain.Place `json:"places"`
	// More counts the places past --limit, not listed.
	More int `json:"more,omitempty"`
	// NotSearched lists, for a recorded call, the fragments left out whose
	// bodies the transcript does not keep: the text may be in part of one.
	NotSearched []string `json:"not_searched,omitempty"`
}

// runWhy says where a text is in a prompt, and why. Exit 0 when it is in
// the system prompt; 1 when it is not (only in fragments left out, or
// nowhere); 2 on bad input.
func runWhy(e *env, args []string) int {
	fs := newFlags("why")
	format := fs.String("format", "text", "text or json")
	limit := fs.Int("limit", 1000, "list at most N places, and count the rest (0: all)")
	transcript := fs.String("transcript", "", "look in a recorded call's prompt instead, from its transcript (a file, or a postgres:// URL of one session), verified first; with --call")
	call := fs.String("call", "", "with --transcript, the call, by its name")
	var changes []change
	for _, f := range [][2]string{
		{"without-tool", "the tool NAME declared but not available"},
		{"with-tool", "the tool NAME available"},
		{"with-cap", "the capability NAME set"},
		{"without-cap", "the capability NAME unset"},
	} {
		name := f[0]
		fs.Func(name, "look in the prompt built with "+f[1]+" (repeatable), as diff derives B", func(v string) error {
			changes = append(changes, change{name, v})
			return nil
		})
	}
	pipelineOpts := pipelineFlags(fs)
	pos, err := parseInterleaved(fs, args)
	if err == nil {
		err = oneOf("format", *format, "text", "json")
	}
	if err == nil && *limit < 0 {
		err = fmt.Errorf("--limit must be 0 or more, got %d", *limit)
	}
	var pl pipeline
	if err == nil {
		pl, err = pipelineOpts()
	}
	if err != nil {
		return e.flagError(fs, "why", err)
	}
	if len(pos) == 0 {
		return e.fail("why: takes TEXT, then an options file or --transcript FILE --call NAME")
	}
	text := pos[0]
	if text == "" {
		return e.fail("why: TEXT is empty: it is everywhere and explains nothing")
	}
	out := whyJSON{Text: text}
	var x *explain.Explanation
	if *transcript != "" || *call != "" {
		if err := onlyRecordedFlags(fs, "transcript", "call", "format", "limit"); err != nil {
			return e.fail("why: %v", err)
		}
		if msg := recordedUsage(*transcript != "", *call != "", len(pos) > 1, "--call NAME"); msg != "" {
			return e.fail("why: --transcript FILE --call NAME looks in a recorded call: %s", msg)
		}
		recs, err := e.recordedCalls(*transcript, *call)
		if err != nil {
			return e.fail("why: %v", err)
		}
		x, out.Transcript, out.Call = recs[0].x, recs[0].name, *call
	} else {
		if x, err = e.whyOptions(pos[1:], pl, changes); err != nil {
			return e.fail("why: %v", err)
		}
	}

	last := -1
	for p := range x.Why(text) {
		if p.Offset >= 0 && p.Offset != last {
			out.InPrompt++
			last = p.Offset
		} else if p.Offset < 0 {
			out.LeftOut++
		}
		if *limit == 0 || len(out.Places) < *limit {
			out.Places = append(out.Places, p)
		} else {
			out.More++
		}
	}
	if x.Reduction == nil {
		for _, r := range x.Fragments {
			if !r.Included && r.Bytes == 0 && r.Reason != "empty body" {
				out.NotSearched = append(out.NotSearched, r.ID)
			}
		}
	}
	if *format == "json" {
		if out.Places == nil {
			out.Places = []explain.Place{}
		}
		if err := writeJSON(e, out); err != nil {
			return e.fail("why: %v", err)
		}
	} else {
		writeWhy(e, x, &out)
	}
	if out.InPrompt > 0 {
		return ExitOK
	}
	return ExitFail
}

// whyOptions explains the options file named (stdin when none), changed
// as the --with/--without flags say.
func (e *env) whyOptions(pos []string, pl pipeline, changes []change) (*explain.Explanation, error) {
	path, ok := onePath(pos)
	if !ok {
		return nil, fmt.Errorf("takes TEXT and one options file, got %d files", len(pos))
	}
	o, err := e.parseOptions(path, pl)
	if err != nil {
		return nil, named(path, err)
	}
	if err := contradicts(changes); err != nil {
		return nil, err
	}
	for _, c := range changes {
		if err := apply(o, c); err != nil {
			return nil, fmt.Errorf("--%s: %w", c.flag, err)
		}
	}
	x, err := explain.FromOptions(o, &pl.explain)
	if err != nil {
		return nil, named(path, err)
	}
	return x, nil
}

// writeJSON writes v indented, without HTML escaping (prompts are full of
// < and &), as explain --format json does.
func writeJSON(e *env, v any) error {
	enc := json.NewEncoder(e.stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeWhy prints the answer: where the text is in the prompt, then in
// which fragments left out, each row escaped as explain's table is.
func writeWhy(e *env, x *explain.Explanation, out *whyJSON) {
	esc := textsafe.Line
	q := strconv.Quote(out.Text)
	w := e.stdout
	where := "the system prompt"
	if out.Call != "" {
		where = "the system prompt of call " + esc(out.Call)
	}
	recorded := x.Reduction == nil
	var in, left []explain.Place
	for _, p := range out.Places {
		if p.Offset >= 0 {
			in = append(in, p)
		} else {
			left = append(left, p)
		}
	}
	table := func(places []explain.Place, leftOut bool) {
		if len(places) == 0 {
			return // every place past --limit: no header over no rows
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		templated := slices.ContainsFunc(places, func(p explain.Place) bool {
			return len(p.Spans) > 0 || p.Row != nil && p.Row.Template != nil
		})
		// The header is built column by column as each row is below.
		source := "SOURCE"
		if recorded {
			source = "PRODUCER"
		}
		head := []string{"ID", source}
		if leftOut {
			head = append(head, "STATE")
		} else {
			head = append([]string{"OFFSET"}, head...)
		}
		head = append(head, "BODY BYTES")
		if !recorded {
			head = append(head, "GATES")
		}
		if templated {
			head = append(head, "TEMPLATE")
		}
		fmt.Fprintln(tw, strings.Join(append(head, "REASON"), "\t"))
		for _, p := range places {
			id, src, state, reason := "(join separator)", "-", "-", "between two fragments: no fragment's bytes"
			if r := p.Row; r != nil {
				id, src, state, reason = esc(r.ID), esc(r.Source), r.State(), esc(r.Reason)
				if recorded {
					src = esc(r.Producer)
				}
			}
			span := fmt.Sprintf("%d-%d", p.Start, p.End)
			if p.WholeBody {
				span += " (whole body, by digest)"
			}
			if p.Joiner && p.Row != nil {
				span += " (across the joiner)"
			}
			cols := []string{id, src}
			if leftOut {
				cols = append(cols, state)
			} else {
				cols = append([]string{strconv.Itoa(p.Offset)}, cols...)
			}
			cols = append(cols, span)
			if !recorded {
				cols = append(cols, gates(p))
			}
			if templated {
				cols = append(cols, templateOf(p))
			}
			fmt.Fprintln(tw, strings.Join(append(cols, reason), "\t"))
		}
		tw.Flush()
	}
	switch {
	case out.InPrompt > 0:
		fmt.Fprintf(w, "%s is in %s %s:\n", q, where, times(out.InPrompt))
		table(in, false)
		switch {
		case out.LeftOut > 0 && len(left) > 0:
			fmt.Fprintf(w, "and in fragments left out (%s):\n", places(out.LeftOut))
			table(left, true)
		case out.LeftOut > 0:
			// --limit kept none of them: say so on the line, not under an
			// empty heading.
			fmt.Fprintf(w, "and in fragments left out (%s, not listed: --limit)\n", places(out.LeftOut))
		}
	case out.LeftOut > 0:
		fmt.Fprintf(w, "%s is not in %s; it is only in fragments left out (%s):\n", q, where, places(out.LeftOut))
		table(left, true)
	case len(out.NotSearched) > 0:
		which := "this one"
		if n := len(out.NotSearched); n > 1 {
			which = fmt.Sprintf("one of these %d", n)
		}
		fmt.Fprintf(w, "%s is not in %s. A transcript keeps no body of a fragment left out, only its digest: it may be in part of %s:\n", q, where, which)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATE\tREASON")
		for _, r := range x.Fragments {
			if !r.Included && r.Bytes == 0 && r.Reason != "empty body" {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", esc(r.ID), r.State(), esc(r.Reason))
			}
		}
		tw.Flush()
	default:
		fmt.Fprintf(w, "%s is nowhere: not in %s, nor in any fragment left out\n", q, where)
	}
	if out.InPrompt > 0 && len(out.NotSearched) > 0 {
		fmt.Fprintf(w, "a transcript keeps no body of a fragment left out; not searched: %s\n", esc(strings.Join(out.NotSearched, ", ")))
	}
	if out.More > 0 {
		fmt.Fprintf(w, "... and %d more not listed (--limit)\n", out.More)
	}
	for _, p := range out.Places {
		if p.Joiner {
			fmt.Fprintf(w, "an occurrence across the join separator %q is a row for each fragment it covers part of, at the same offset; the separator is no fragment's\n", "\n\n")
			break
		}
	}
}

// templateOf says which parts of a template produced a place's bytes:
// "text at FILE:LINE:COL" or "binding PATH | FILTER at FILE:LINE:COL" for
// each span, FILE "inline" for a template in the options, and for bytes
// from an included file where the top template includes it. A recorded
// fragment's manifest row names its template and the bindings it read, but
// no positions.
func templateOf(p explain.Place) string {
	var parts []string
	for _, s := range p.Spans {
		file := s.File
		if file == "" {
			file = "inline"
		}
		at := fmt.Sprintf("%s:%d:%d", file, s.Line, s.Col)
		if s.IncludeLine > 0 {
			at += fmt.Sprintf(" (included at %d:%d)", s.IncludeLine, s.IncludeCol)
		}
		switch s.Kind {
		case "binding":
			parts = append(parts, "binding "+strings.Join(append([]string{s.Path}, s.Filters...), " | ")+" at "+at)
		default:
			parts = append(parts, s.Kind+" at "+at)
		}
	}
	if len(parts) > 0 {
		return textsafe.Line(strings.Join(parts, "; "))
	}
	if p.Row == nil || p.Row.Template == nil {
		return "-"
	}
	if !p.WholeBody && (p.Row.Spans != nil || !p.Row.Included) {
		// Positions known (a left-out fragment's come from the options,
		// or there are none): these bytes are the options', around the
		// render.
		return "none: added by the options around the render"
	}
	t := p.Row.Template
	file := t.File
	if file == "" {
		file = "inline"
	}
	desc := "template " + file
	if len(t.Bindings) > 0 {
		desc += ", bindings read: " + strings.Join(slices.Sorted(maps.Keys(t.Bindings)), ", ")
	}
	return textsafe.Line(desc + " (a manifest records no positions)")
}

// gates is a place's gates as the table shows them.
func gates(p explain.Place) string {
	var g []string
	for _, t := range p.RequiresTools {
		g = append(g, "tool "+textsafe.Line(t))
	}
	for _, c := range p.RequiresCaps {
		g = append(g, "cap "+textsafe.Line(c))
	}
	if len(g) == 0 {
		return "-"
	}
	return strings.Join(g, ", ")
}

func places(n int) string {
	if n == 1 {
		return "1 place"
	}
	return strconv.Itoa(n) + " places"
}

func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return strconv.Itoa(n) + " times"
}
