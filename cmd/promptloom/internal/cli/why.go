package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/explain"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/internal/textsafe"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/request"
	"github.com/promptloom/promptloom/transcript"
)

func init() {
	register("why", "why TEXT [OPTIONS.json|-] [--format text|json] [--limit N] [--without-tool N] [--with-tool N] [--with-cap N] [--without-cap N] [--project DIR] [--budget N] [--counter NAME] [--bindings FILE] [--max-bytes N] | why TEXT --transcript FILE [--call NAME] [--format text|json] [--limit N]", runWhy)
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
	tr := fs.String("transcript", "", "look in a recorded call's prompt instead, from its transcript (a file, or a postgres:// URL of one session), verified first; with --call")
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
		return e.fail("why: takes TEXT, then an options file or --transcript FILE [--call NAME]")
	}
	text := pos[0]
	if text == "" {
		return e.fail("why: TEXT is empty: it is everywhere and explains nothing")
	}
	out := whyJSON{Text: text}
	var x *explain.Explanation
	if *tr != "" || *call != "" {
		if err := onlyRecordedFlags(fs, "transcript", "call", "format", "limit"); err != nil {
			return e.fail("why: %v", err)
		}
		if msg := recordedUsage(*tr != "", true, len(pos) > 1, ""); msg != "" {
			return e.fail("why: --transcript FILE [--call NAME] looks in recorded calls: %s", msg)
		}
		data, rep, err := e.verifiedTranscript(*tr)
		if err != nil {
			return e.fail("why: %v", err)
		}
		// A call a manifest accounts for is explained from its prompt and
		// manifest; any other, or every call, from its whole request.
		c, err := verifiedCallAny(rep, *call)
		if *call == "" || err == nil && c.Unattributed {
			rq, err := whyRequest(data, rep, text, shown(*tr), *call, *limit)
			if err != nil {
				return e.fail("why: %s: %v", shown(*tr), err)
			}
			return e.printWhyRequest(rq, *format)
		}
		if err == nil {
			c, err = verifiedCall(rep, *call)
		}
		if err != nil {
			return e.fail("why: %s: %v", shown(*tr), err)
		}
		if x, err = recordedExplanation(c, data); err != nil {
			return e.fail("why: %s: call %s (line %d): %v", shown(*tr), *call, c.Line, err)
		}
		out.Transcript, out.Call = shown(*tr), *call
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

// A recorded call that no manifest accounts for (a proxied call, or one
// the transport made without a prompt on its context) keeps its whole
// body, redacted: why then looks for the text in every tool, system block
// and message of it, each named by the pointer request.FromPayload gives its
// segment, and says which call of the session first sent that segment (by
// its digest) and whether the call read it from the provider's cache, as
// cache --transcript predicts it.

// whyRequestJSON is what why --format json prints for the whole requests
// of recorded calls.
type whyRequestJSON struct {
	Text       string `json:"text"`
	Transcript string `json:"transcript"`
	// Call is the call searched; without one, every call was, and each
	// segment is reported at the call that first sent it.
	Call string `json:"call,omitempty"`
	// InRequest counts the places, listed or not.
	InRequest int            `json:"in_request"`
	Places    []requestPlace `json:"places"`
	// More counts the places past --limit, not listed.
	More int `json:"more,omitempty"`
	// NotSearched names the calls whose request the transcript does not
	// keep (nothing says its shape), or keeps as a body no reader reads.
	NotSearched []string `json:"not_searched,omitempty"`
}

// requestPlace is one occurrence of the text in a segment of a request.
type requestPlace struct {
	// Call and Line name the call the place is in (Line: its request's).
	Call string `json:"call"`
	Line int    `json:"line"`
	// Path is where the text is: the segment's pointer for a text block
	// or string (its text is the segment), else the pointer of the string
	// member that holds it, under the segment's (/tools/3/description).
	Path string `json:"path"`
	// Segment is the segment's own pointer, as request.FromPayload gives it.
	Segment string `json:"segment"`
	Section string `json:"section"`
	Role    string `json:"role,omitempty"`
	Type    string `json:"type,omitempty"`
	// Name is a tool's name.
	Name string `json:"name,omitempty"`
	// Start and End are the bytes of the string at Path the occurrence
	// covers.
	Start int `json:"start"`
	End   int `json:"end"`
	// Digest is the segment's (request.Segment.Digest).
	Digest digest.Digest `json:"digest"`
	// FirstCall and FirstLine name the call of the session that first
	// sent a segment with this digest.
	FirstCall string `json:"first_call"`
	FirstLine int    `json:"first_line"`
	// Cached says the segment lies in the prefix the provider's rules
	// predict this call read from its cache.
	Cached bool `json:"cached"`
	// Calls counts, without --call, the calls of the session that sent
	// the segment.
	Calls int `json:"calls,omitempty"`
}

// printWhyRequest writes why's answer for whole requests. Exit 0 when
// the text is in one, 1 when it is in none.
func (e *env) printWhyRequest(out *whyRequestJSON, format string) int {
	if format == "json" {
		if err := writeJSON(e, out); err != nil {
			return e.fail("why: %v", err)
		}
	} else {
		writeWhyRequest(e, out)
	}
	if out.InRequest > 0 {
		return ExitOK
	}
	return ExitFail
}

// verifiedTranscript reads a transcript once, whole, and verifies it.
func (e *env) verifiedTranscript(arg string) ([]byte, *transcript.Report, error) {
	data, err := e.readTranscript(context.Background(), arg, maxTranscriptBytes)
	if err != nil {
		return nil, nil, err
	}
	rep, err := transcript.Verify(bytes.NewReader(data), &transcript.Options{MaxLineBytes: maxLineBytes})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", shown(arg), err)
	}
	e.noteOpen(arg, rep)
	return data, rep, nil
}

// brokenBefore is the first problem of rep on a line up to through (0:
// any line), as a recorded call is held to it: what says only that the
// run is not finished (a session open, a last line not whole yet) is no
// objection, the run may still be being written.
func brokenBefore(rep *transcript.Report, through int) *manifest.RuleError {
	for _, p := range rep.Problems {
		if through > 0 && p.Line > through || p.Line == 0 && through > 0 || rep.Pending(p) {
			continue
		}
		return p
	}
	return nil
}

// searchedCall is one recorded call's request read for why: its parts as
// payload reads them and its segments as request.FromPayload makes them, one for
// one (unattributed: a system block is a segment, not the fragments a
// manifest would make of it).
type searchedCall struct {
	rec   *cache.Recorded
	parts []payload.Part
	segs  []request.Segment
	// through is the index of the last segment the predicted cache read
	// covers (-1: none).
	through int
}

// whyRequest looks for text in the whole requests of the transcript's
// calls: the one named call, or, call "", every call, each segment at the
// call that first sent it.
func whyRequest(data []byte, rep *transcript.Report, text, name, call string, limit int) (*whyRequestJSON, error) {
	out := &whyRequestJSON{Text: text, Transcript: name, Call: call, Places: []requestPlace{}}
	var target *transcript.CallReport
	if call != "" {
		c, err := verifiedCallAny(rep, call)
		if err != nil {
			return nil, err
		}
		if c.Status == "failed" && c.Problem != nil {
			return nil, fmt.Errorf("call %s (line %d) is not searched: %s", call, c.Line, c.Problem.Detail)
		}
		if p := brokenBefore(rep, c.Line+1); p != nil {
			return nil, fmt.Errorf("the transcript does not verify up to call %s (line %d), so it is not searched: %s", call, c.Line, p.Detail)
		}
		target = c
	} else if p := brokenBefore(rep, 0); p != nil {
		return nil, fmt.Errorf("the transcript does not verify, so it is not searched (promptloom verify --transcript says why): %s", p.Detail)
	}
	rs, err := cache.FromTranscript(data, rep)
	if err != nil {
		return nil, err
	}
	// The cache's prediction for every call, as cache --transcript makes
	// it: a call's is from the calls before it.
	verdicts := map[int]cache.Verdict{}
	if calls := cache.Calls(rs); len(calls) > 0 {
		for _, v := range cache.Run(calls, nil).Verdicts {
			verdicts[v.Line] = v
		}
	}
	type first struct {
		call  *transcript.CallReport
		calls int
	}
	firsts := map[string]*first{} // session and segment digest -> the call that first sent it
	key := func(r *cache.Recorded, d digest.Digest) string { return r.Session + "\x00" + d.String() }
	var searched []searchedCall
	for i := range rs {
		r := &rs[i]
		if target != nil && r.Report.Line > target.Line {
			break
		}
		mine := target == nil || r.Report.Line == target.Line
		if r.Body == nil || r.Err != nil {
			if mine {
				out.NotSearched = append(out.NotSearched, recordedName(r.Report))
			}
			continue
		}
		sc, err := readSearched(r, verdicts[r.Report.Line])
		if err != nil {
			return nil, fmt.Errorf("call %s (line %d): its request body, as the transcript kept it: %w", recordedName(r.Report), r.Report.Line, err)
		}
		for _, s := range sc.segs {
			k := key(r, s.Digest)
			if f := firsts[k]; f == nil {
				firsts[k] = &first{call: r.Report, calls: 1}
			} else if f.call.Line != r.Report.Line {
				f.calls++
			}
		}
		if mine {
			searched = append(searched, sc)
		}
	}
	if target == nil && len(searched) == 0 {
		return nil, fmt.Errorf("none of the transcript's %d call(s) kept its whole request (a call with a prompt and manifest keeps those): give --call NAME to look in one", len(rep.Calls))
	}
	if target != nil && len(searched) == 0 {
		if target.Unattributed {
			return nil, fmt.Errorf("call %s (line %d) did not give its request body (or gave one no reader reads): nothing says what it sent", call, target.Line)
		}
		return nil, fmt.Errorf("call %s (line %d) kept no request body to search", call, target.Line)
	}
	for _, sc := range searched {
		c := sc.rec.Report
		for i, p := range sc.parts {
			s := &sc.segs[i]
			f := firsts[key(sc.rec, s.Digest)]
			if target == nil && f.call.Line != c.Line {
				continue // listed at the call that first sent it
			}
			occurrences(p, text, func(path string, start int) {
				out.InRequest++
				if limit > 0 && len(out.Places) >= limit {
					out.More++
					return
				}
				pl := requestPlace{Call: recordedName(c), Line: c.Line, Path: path, Segment: p.Path, Section: p.Section,
					Role: p.Role, Type: p.Type, Name: p.Name, Start: start, End: start + len(text), Digest: s.Digest,
					FirstCall: recordedName(f.call), FirstLine: f.call.Line, Cached: i <= sc.through}
				if target == nil {
					pl.Calls = f.calls
				}
				out.Places = append(out.Places, pl)
			})
		}
	}
	return out, nil
}

// readSearched reads a recorded call's body into its parts and segments,
// and finds how far its predicted cache read reaches.
func readSearched(r *cache.Recorded, v cache.Verdict) (searchedCall, error) {
	sc := searchedCall{rec: r, through: -1}
	pr, err := payload.Read(r.Body, r.Provider)
	if err != nil {
		return sc, err
	}
	if sc.parts, err = pr.Parts(); err != nil {
		return sc, err
	}
	m, err := request.FromPayload(pr, nil)
	if err != nil {
		return sc, err
	}
	if len(m.Segments) != len(sc.parts) {
		return sc, fmt.Errorf("%d segments for %d parts", len(m.Segments), len(sc.parts))
	}
	sc.segs = m.Segments
	if v.ReadThrough != "" && len(v.Problems) == 0 {
		// The prediction names the last segment read by its pointer; a
		// manifest of fragments names a system block's by the block's.
		for i := range sc.segs {
			if sc.segs[i].Path == v.ReadThrough {
				sc.through = i
			}
		}
	}
	return sc, nil
}

// recordedName is a call's name as why prints it.
func recordedName(c *transcript.CallReport) string {
	if c.Call == "" {
		return "(unnamed)"
	}
	return c.Call
}

// occurrences calls fn for every occurrence of text in a part, with the
// pointer of the string it is in and where in that string it starts. A
// text block's text is the segment itself (what request counts it by); in
// anything else, each string member is searched, and a place is the
// member's pointer under the part's. Overlapping occurrences are each a
// place, as why counts them in a prompt.
func occurrences(p payload.Part, text string, fn func(path string, start int)) {
	if s, ok := p.Text(); ok {
		each(s, text, func(i int) { fn(p.Path, i) })
		return
	}
	stringValues(string(p.Raw), p.Path, func(ptr, s string) {
		each(s, text, func(i int) { fn(ptr, i) })
	})
}

// each calls fn with the offset of every occurrence of text in s.
func each(s, text string, fn func(int)) {
	for at := 0; at <= len(s); {
		i := strings.Index(s[at:], text)
		if i < 0 {
			return
		}
		fn(at + i)
		_, n := utf8.DecodeRuneInString(s[at+i:])
		at += i + n
	}
}

// pointerEscape escapes a key as a step of an RFC 6901 pointer.
var pointerEscape = strings.NewReplacer("~", "~0", "/", "~1")

// stringValues calls fn with every string value in raw (a JSON value
// payload read), and its RFC 6901 pointer under at, in order.
func stringValues(raw, at string, fn func(ptr, s string)) {
	if raw == "" {
		return
	}
	if raw[0] == '"' {
		fn(at, pjson.Unquote(raw))
		return
	}
	it := pjson.NewIter(raw)
	for i := 0; ; i++ {
		k, _, v, _, ok := it.Next()
		if !ok {
			return
		}
		step := strconv.Itoa(i)
		if k != "" {
			step = pointerEscape.Replace(pjson.Unquote(k))
		}
		stringValues(v, at+"/"+step, fn)
	}
}

// writeWhyRequest prints where the text is in the requests searched, a
// row a place, every value from the transcript escaped.
func writeWhyRequest(e *env, out *whyRequestJSON) {
	esc := textsafe.Line
	w := e.stdout
	q := strconv.Quote(out.Text)
	where := "the request of call " + esc(out.Call)
	if out.Call == "" {
		where = "the requests of " + esc(out.Transcript)
	}
	switch {
	case out.InRequest == 0:
		fmt.Fprintf(w, "%s is nowhere in %s\n", q, where)
	case out.Call == "":
		fmt.Fprintf(w, "%s is in %s %s, each where its segment was first sent:\n", q, where, times(out.InRequest))
	default:
		fmt.Fprintf(w, "%s is in %s %s:\n", q, where, times(out.InRequest))
	}
	if len(out.Places) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		// With a call, each place says where its segment was first sent
		// and whether the call read it from the cache; without, each is
		// listed where it was first sent, with how many calls sent it.
		head := []string{"PATH", "SECTION", "ROLE/TOOL", "BYTES", "FIRST SENT", "CACHED"}
		if out.Call == "" {
			head = []string{"FIRST SENT", "PATH", "SECTION", "ROLE/TOOL", "BYTES", "SENT BY"}
		}
		fmt.Fprintln(tw, strings.Join(head, "\t"))
		for _, p := range out.Places {
			who := "-"
			switch {
			case p.Name != "":
				who = "tool " + esc(p.Name)
			case p.Role != "":
				who = esc(p.Role)
			}
			span := fmt.Sprintf("%d-%d", p.Start, p.End)
			var cols []string
			if out.Call == "" {
				cols = []string{fmt.Sprintf("%s (line %d)", esc(p.Call), p.Line), esc(p.Path), p.Section, who, span, fmt.Sprintf("%d call(s)", p.Calls)}
			} else {
				cached := "no"
				if p.Cached {
					cached = "yes"
				}
				cols = []string{esc(p.Path), p.Section, who, span, fmt.Sprintf("%s (line %d)", esc(p.FirstCall), p.FirstLine), cached}
			}
			fmt.Fprintln(tw, strings.Join(cols, "\t"))
		}
		tw.Flush()
	}
	if out.More > 0 {
		fmt.Fprintf(w, "... and %d more not listed (--limit)\n", out.More)
	}
	if out.InRequest > 0 && out.Call != "" {
		fmt.Fprintln(w, "CACHED: in the prefix the provider's rules predict the call read from its cache (promptloom cache --transcript)")
	}
	if len(out.NotSearched) > 0 {
		fmt.Fprintf(w, "not searched, no request body kept whole: %s\n", esc(strings.Join(out.NotSearched, ", ")))
	}
}
