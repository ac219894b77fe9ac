// Package report shows a verified transcript to a person: each call in
// order with the fragments it was served (included, excluded or shed, with
// reasons and sources), or, for a call no manifest accounts for (a
// proxied call), its request's text in cache order (Options.Requests),
// its verdict and reply, against the last call of
// the same role what changed, and its cache verdict: the read and write
// the provider's rules predict (package cache) beside those it reported,
// with the blame for a miss (Options.Cache). It renders
// a transcript.Report, which Verify filled in one pass over the transcript,
// and computes what it shows beyond the verdicts (Compare) from what that
// pass resolved for each call, never reading the transcript again: what is
// shown is what was verified.
package report

import (
	"bufio"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"

	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/internal/seq"
	"github.com/promptloom/promptloom/internal/textsafe"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/transcript"
)

// WriteText writes the report a call a block, then the verdicts
// (transcript.Report.WriteText). Every value taken from the transcript is
// escaped (textsafe.Line): a reply holding a newline or an ESC sequence
// cannot forge a row or reach the terminal.
//
// A call citing the manifest an earlier call showed says so instead of
// listing its rows again, and the text is written as it is made: a run of
// many calls on one large manifest is as long, and takes as much memory,
// as the manifest once.
func WriteText(w io.Writer, rep *transcript.Report, o *Options) error {
	b := bufio.NewWriter(w)
	verdicts := o.byLine()
	q := textsafe.Line
	shown := map[*manifest.Manifest]string{} // manifest -> the call that listed it
	reqs := o.requests()
	since := compare(rep, reqs.retried)
	for i := range rep.Calls {
		c := &rep.Calls[i]
		if reqs.retried[c.Line] {
			continue // listed as an attempt of the call that retried it
		}
		if c.Unattributed {
			fmt.Fprintf(b, "%s %s (line %d): unattributed: no manifest accounts for its prompt; its whole request is kept (explain --request --transcript FILE --call %s shows it)\n", c.Status, q(callName(c)), c.Line, q(callName(c)))
			if v := reqs.view(c); v != nil {
				writeRequestText(b, v)
			}
		} else {
			fmt.Fprintf(b, "%s %s (role %s, line %d): %d-byte prompt\n", c.Status, q(callName(c)), q(role(c)), c.Line, c.SystemBytes)
		}
		if c.Problem != nil {
			fmt.Fprintf(b, "  problem: %s\n", q(c.Problem.Detail))
		}
		if first, ok := shown[c.Manifest]; ok && c.Manifest != nil {
			fmt.Fprintf(b, "  fragments: as listed for %s (the same manifest)\n", q(first))
		} else {
			for _, f := range c.Manifest.Rows() {
				fmt.Fprintf(b, "  %-8s %s: %s\n", f.State(), q(f.ID), q(f.Reason))
			}
			if c.Manifest != nil {
				shown[c.Manifest] = callName(c) + " (line " + strconv.Itoa(c.Line) + ")"
			}
		}
		if s := since[i]; s != nil {
			fmt.Fprintf(b, "  since %s: %d change(s), %d bytes in common, %d re-sent\n", q(s.Previous), len(s.Changes), s.CommonPrefixBytes, s.ResendBytes)
			for _, ch := range s.Changes {
				fmt.Fprintf(b, "    %s\n", q(ch.String()))
			}
		}
		if v, ok := verdicts[c.Line]; ok {
			fmt.Fprintf(b, "  cache: %s\n", q(v.String()))
			for _, bl := range v.Blame {
				fmt.Fprintf(b, "    %s: %s\n", bl.Kind, q(bl.Reason))
			}
			fmt.Fprintf(b, "  cost: %s\n", q(costLine(v)))
		} else if c.Usage != nil {
			fmt.Fprintf(b, "  cache: %s\n", q(cacheLine(c, since[i])))
		}
		for n, a := range reqs.attempts[c.Line] {
			fmt.Fprintf(b, "  %s\n", q(attemptLine(n, a)))
		}
		if c.Outcome != "" {
			fmt.Fprintf(b, "  reply: %s\n", q(c.Outcome))
		}
		for _, tc := range c.ToolCalls {
			fmt.Fprintf(b, "  tool call: %s\n", q(toolCallLine(tc)))
		}
	}
	if o != nil && o.Cache != nil {
		writeCosts(b, &o.Cache.Summary)
	}
	if err := b.Flush(); err != nil {
		return err
	}
	return rep.WriteText(w)
}

// costLine is a call's cost at the price table's list prices, and what its
// misses cost over reading the same tokens; or why it has no price.
func costLine(v cache.Verdict) string {
	if !v.Priced {
		if v.Unpriced != "" {
			return v.Unpriced + ": tokens only"
		}
		return "not priced: tokens only"
	}
	line := usd(v.Cost) + " (" + v.CostBasis + ")"
	if v.MissCost > 0 {
		line += "; its misses " + usd(v.MissCost) + " over reading their tokens"
	}
	return line
}

// writeCosts writes the run's cost: in all, by session, by model and by
// the cause of its misses, as package cache adds them up.
func writeCosts(b *bufio.Writer, s *cache.Summary) {
	if s.Cost == 0 && s.MissCost == 0 && len(s.Unpriced) == 0 {
		return
	}
	q := textsafe.Line
	fmt.Fprintf(b, "cost: %s in all, %s of it misses", usd(s.Cost), usd(s.MissCost))
	if s.PricesTaken != "" {
		fmt.Fprintf(b, " (list prices taken %s)", q(s.PricesTaken))
	}
	fmt.Fprintln(b)
	for _, g := range []struct {
		name string
		ts   []cache.Total
	}{{"session", s.Sessions}, {"model", s.Models}, {"cause", s.Causes}} {
		for _, t := range g.ts {
			fmt.Fprintf(b, "  %s %s: %d call(s), %s, misses %s tokens %s\n", g.name, q(t.Key), t.Calls, usd(t.Cost), strconv.Itoa(t.MissTokens), usd(t.MissCost))
		}
	}
	for _, m := range s.Unpriced {
		fmt.Fprintf(b, "  model %s is not in the price table: its calls show tokens only\n", q(m))
	}
}

// usd writes micro-dollars as dollars, exactly.
func usd(micros int64) string {
	sign := ""
	if micros < 0 {
		sign, micros = "-", -micros
	}
	return fmt.Sprintf("%s$%d.%06d", sign, micros/1_000_000, micros%1_000_000)
}

// Since is a call set against the last call of its role before it, both
// with a manifest: the fragments that changed, the bytes the two prompts
// share from the start (what a provider's prefix cache can still serve)
// and the bytes re-sent after them.
type Since struct {
	// Previous is the earlier call's name.
	Previous string
	// Changes are the fragments that differ between the two manifests
	// (manifest.Differing), in this call's order.
	Changes                        []manifest.Change
	CommonPrefixBytes, ResendBytes int
}

// Compare sets each call of rep against the last call of its role before
// it, as WriteText and WriteHTML show it: the i-th is rep.Calls[i]'s, nil
// when the call has no manifest or its role no earlier call with one. It
// reads only the manifest and system prompt the verifier resolved for each
// call (CallReport.Manifest and System), and compares each pair of their
// lines once (the same line twice shares everything): a run that
// alternates between two large prompts compares them once, not once a
// call.
func Compare(rep *transcript.Report) []*Since {
	return compare(rep, nil)
}

// compare is Compare with the calls whose request lines are in skip (the
// failed attempts a later call retried) set against nothing and nothing
// set against them: a retry is compared with the call before its first
// attempt.
func compare(rep *transcript.Report, skip map[int]bool) []*Since {
	if rep == nil {
		return nil
	}
	out := make([]*Since, len(rep.Calls))
	lastByRole := map[string]int{} // role -> index of its last call with a manifest
	changes := map[[2]int][]manifest.Change{}
	prefixes := map[[2]int]int{}
	for i := range rep.Calls {
		c := &rep.Calls[i]
		m := c.Manifest
		if m == nil || skip[c.Line] {
			continue
		}
		if p, ok := lastByRole[m.CallRole]; ok && len(rep.Calls[p].Manifest.Segments) > 0 {
			prev := &rep.Calls[p]
			s := &Since{Previous: prev.Call, CommonPrefixBytes: len(c.System)}
			if k := [2]int{prev.ManifestLine, c.ManifestLine}; k[0] != k[1] {
				ch, done := changes[k]
				if !done {
					ch = manifest.Differing(prev.Manifest.Rows(), m.Rows())
					changes[k] = ch
				}
				s.Changes = ch
			}
			if k := [2]int{prev.SystemLine, c.SystemLine}; k[0] != k[1] {
				n, done := prefixes[k]
				if !done {
					n = seq.CommonPrefix(prev.System, c.System)
					prefixes[k] = n
				}
				s.CommonPrefixBytes = n
			}
			s.ResendBytes = len(c.System) - s.CommonPrefixBytes
			out[i] = s
		}
		lastByRole[m.CallRole] = i
	}
	return out
}

// Options say what a report shows beyond the verifier's report. Nil is
// the default.
type Options struct {
	// Cache is the transcript's cache analysis (cache.Run over
	// cache.FromTranscript): each call that kept its request body then
	// shows the read and write the provider's rules predict beside those
	// it reported, and the blame for a miss, instead of the bytes of the
	// system prompt kept stable beside the provider's tokens.
	Cache *cache.Analysis
	// Requests are the transcript's calls with their request bodies
	// (cache.FromTranscript over the bytes verified): a call no manifest
	// accounts for (a proxied call) then shows its request, each tool,
	// system block and message in cache order with its text, as the
	// transcript keeps it (redacted), and its session names its lane.
	Requests []cache.Recorded
}

// requests indexes Options.Requests by the line of each call's request,
// and ties each call's attempts into one logical call (cache.Logical).
func (o *Options) requests() *requestShower {
	rs := &requestShower{byLine: map[int]*cache.Recorded{}, shown: map[string]string{},
		retried: map[int]bool{}, attempts: map[int][]*transcript.CallReport{}}
	if o != nil {
		for i := range o.Requests {
			if r := &o.Requests[i]; r.Report != nil {
				rs.byLine[r.Report.Line] = r
			}
		}
		for _, g := range cache.Logical(o.Requests) {
			last := o.Requests[g[len(g)-1]].Report.Line
			for _, i := range g[:len(g)-1] {
				a := o.Requests[i].Report
				rs.retried[a.Line] = true
				rs.attempts[last] = append(rs.attempts[last], a)
			}
		}
	}
	return rs
}

// attemptLine is the n-th (from 0) failed attempt a call's retry followed.
func attemptLine(n int, a *transcript.CallReport) string {
	return fmt.Sprintf("attempt %d (line %d): %s", n+1, a.Line, a.Outcome)
}

// requestShower makes each unattributed call's view of its request, in
// the order of the calls: a segment an earlier call showed (the same
// digest in the same session) is not shown again, so an agent's run,
// which sends its whole history every call, shows each message once.
type requestShower struct {
	byLine map[int]*cache.Recorded
	shown  map[string]string // session and digest -> the call that showed it
	// retried are the request lines of failed attempts a later call
	// retried, shown under it; attempts, by the line of the call that
	// stands for a logical call, its failed attempts before it, in order.
	retried  map[int]bool
	attempts map[int][]*transcript.CallReport
}

// requestView is a call's request as the report shows it.
type requestView struct {
	Provider, Model, Counter string
	Segments, Tokens         int
	Rows                     []segmentView
	// Err says why the body the transcript kept is not shown.
	Err string
}

// segmentView is one segment shown, with its text, or a run of segments
// one earlier call showed (Seen: that call; Count of them, through Last).
type segmentView struct {
	Path, Section, Who string
	// Tokens is the segment's count, ~ marking an estimate.
	Tokens     string
	Text       string
	Seen, Last string
	Count      int
}

// view is the request of an unattributed call, nil when the transcript
// kept none (or the report was given no Requests).
func (rs *requestShower) view(c *transcript.CallReport) *requestView {
	r := rs.byLine[c.Line]
	if r == nil || !c.Unattributed || r.Body == nil {
		return nil
	}
	if r.Err != nil || r.Request == nil {
		return &requestView{Err: fmt.Sprintf("its body, as the transcript kept it, does not read: %v", r.Err)}
	}
	m := r.Request
	v := &requestView{Provider: m.Provider, Model: m.Model, Counter: m.Counter, Segments: len(m.Segments), Tokens: m.Tokens}
	pr, err := payload.Read(r.Body, r.Provider)
	var parts []payload.Part
	if err == nil {
		parts, err = pr.Parts()
	}
	if err == nil && len(parts) != len(m.Segments) {
		err = fmt.Errorf("%d parts for %d segments", len(parts), len(m.Segments))
	}
	if err != nil {
		v.Err = fmt.Sprintf("its body, as the transcript kept it, does not read: %v", err)
		return v
	}
	for i, p := range parts {
		s := &m.Segments[i]
		key := r.Session + "\x00" + s.Digest.String()
		if by, ok := rs.shown[key]; ok {
			if n := len(v.Rows); n > 0 && v.Rows[n-1].Seen == by {
				v.Rows[n-1].Count++
				v.Rows[n-1].Last = p.Path
			} else {
				v.Rows = append(v.Rows, segmentView{Path: p.Path, Section: p.Section, Seen: by, Last: p.Path, Count: 1})
			}
			continue
		}
		rs.shown[key] = callName(c) + " (line " + strconv.Itoa(c.Line) + ")"
		who := p.Role
		if p.Name != "" {
			who = "tool " + p.Name
		}
		text, ok := p.Text()
		if !ok {
			text = string(p.Raw) // a tool, a tool call, an image: its JSON as kept
		}
		v.Rows = append(v.Rows, segmentView{Path: p.Path, Section: p.Section, Who: who, Tokens: v.tokens(s.Tokens), Text: text})
	}
	return v
}

// tokens writes a count, ~ marking an estimate.
func (v *requestView) tokens(n int) string {
	if v.Counter == "estimate" {
		return "~" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// Summary is the view's heading.
func (v *requestView) Summary() string {
	if v.Err != "" {
		return "request: " + v.Err
	}
	model := v.Provider
	if v.Model != "" {
		model += ", " + v.Model
	}
	return fmt.Sprintf("request (%s): %d segment(s) in cache order, %s tokens", model, v.Segments, v.tokens(v.Tokens))
}

// writeRequestText writes a call's request under its heading line: each
// segment's path, section, role or tool and tokens, its text indented
// under it (escaped, its lines kept: no line of it starts a row), and a
// run of segments shown before as one line.
func writeRequestText(b *bufio.Writer, v *requestView) {
	q := textsafe.Line
	fmt.Fprintf(b, "  %s\n", q(v.Summary()))
	for _, r := range v.Rows {
		if r.Seen != "" {
			fmt.Fprintf(b, "    %s: %d segment(s) as shown for %s\n", q(span(r.Path, r.Last)), r.Count, q(r.Seen))
			continue
		}
		head := r.Path + " " + r.Section
		if r.Who != "" {
			head += " " + r.Who
		}
		fmt.Fprintf(b, "    %s (%s tokens):\n", q(head), r.Tokens)
		for _, line := range strings.Split(textsafe.Block(r.Text), "\n") {
			fmt.Fprintf(b, "      %s\n", line)
		}
	}
}

// span names a run of segments by its first and last paths.
func span(first, last string) string {
	if first == last {
		return first
	}
	return first + " to " + last
}

func (o *Options) byLine() map[int]cache.Verdict {
	out := map[int]cache.Verdict{}
	if o != nil && o.Cache != nil {
		for _, v := range o.Cache.Verdicts {
			out[v.Line] = v
		}
	}
	return out
}

// cacheLine sets the prefix promptloom predicted stable against the
// role's previous call (since; nil: none) beside what the provider's
// cache served: the one in bytes of the system prompt, the other in the
// provider's tokens (of everything cached before the system prompt's end:
// tools too).
func cacheLine(c *transcript.CallReport, since *Since) string {
	predicted := "no earlier call of its role to keep a prefix stable against"
	if since != nil {
		predicted = fmt.Sprintf("promptloom predicted %d bytes of the prompt stable since %s", since.CommonPrefixBytes, since.Previous)
	}
	u := c.Usage
	served := fmt.Sprintf("the provider read %d tokens from its cache", u.CacheReadTokens)
	if u.CacheWriteTokens > 0 {
		served += fmt.Sprintf(" and wrote %d", u.CacheWriteTokens)
	}
	return fmt.Sprintf("%s; %s (its input_tokens: %d)", predicted, served, u.InputTokens)
}

// toolCallLine names a tool call: the tool, the provider's id for the
// call, and the digest of its arguments (the transcript keeps them in the
// body, redacted).
func toolCallLine(tc payload.ToolCall) string {
	line := tc.Name
	if tc.ID != "" {
		line += " (id " + tc.ID + ")"
	}
	return line + ", arguments " + tc.ArgumentsHash.String()
}

// role is a call's role: its manifest's call role.
// callName is the call's name, or "(unnamed)": a request without a
// manifest may carry none.
func callName(c *transcript.CallReport) string {
	if c.Call == "" {
		return "(unnamed)"
	}
	return c.Call
}

func role(c *transcript.CallReport) string {
	if c.Manifest == nil {
		return ""
	}
	return c.Manifest.CallRole
}

//go:embed page.html.tmpl
var pageTemplate string

var page = template.Must(template.New("run").Parse(pageTemplate))

// The page's view of the report.
type (
	lane struct {
		Name  string
		Calls []call
	}
	call struct {
		Call, Status, Problem, Outcome string
		ToolCalls, Attempts            []string
		Prompt                         string
		Line, SystemBytes              int
		Unattributed                   bool
		Fragments                      []fragment
		Since                          *Since
		Cache                          *cacheView
		Request                        *requestView
	}
	// cacheView is the call's cache verdict (Verdict.String), or the prefix
	// predicted stable beside the provider's cache tokens (cacheLine).
	cacheView struct {
		Text                                    string
		PredictedBytes, ReadTokens, WriteTokens int
	}
	fragment struct {
		ID, State, Reason string
		Bytes             int
		Sources           []string
	}
)

// WriteHTML renders the report as one self-contained HTML page, titled by
// source (the transcript's name): a lane of calls per role, in the order of
// their first call.
func WriteHTML(w io.Writer, source string, rep *transcript.Report, o *Options) error {
	verdicts := o.byLine()
	var lanes []*lane
	byRole := map[string]*lane{}
	reqs := o.requests()
	since := compare(rep, reqs.retried)
	for i := range rep.Calls {
		c := &rep.Calls[i]
		if reqs.retried[c.Line] {
			continue // listed as an attempt of the call that retried it
		}
		name := role(c)
		if r := reqs.byLine[c.Line]; name == "" && c.Unattributed && r != nil && r.Session != "" {
			// A proxied call has no role: its conversation is its lane.
			name = "session " + r.Session
		}
		l := byRole[name]
		if l == nil {
			l = &lane{Name: name}
			byRole[name] = l
			lanes = append(lanes, l)
		}
		v := call{Call: callName(c), Status: string(c.Status), Outcome: c.Outcome, Line: c.Line, SystemBytes: c.SystemBytes, Unattributed: c.Unattributed, Prompt: c.System}
		for _, tc := range c.ToolCalls {
			v.ToolCalls = append(v.ToolCalls, toolCallLine(tc))
		}
		for n, a := range reqs.attempts[c.Line] {
			v.Attempts = append(v.Attempts, attemptLine(n, a))
		}
		v.Since = since[i]
		v.Request = reqs.view(c)
		if c.Problem != nil {
			v.Problem = c.Problem.Detail
		}
		if vd, ok := verdicts[c.Line]; ok {
			text := vd.String()
			for _, bl := range vd.Blame {
				text += "; " + bl.Kind + ": " + bl.Reason
			}
			text += "; cost: " + costLine(vd)
			read, write := 0, 0
			if vd.Reported != nil {
				read, write = vd.Reported.Read, vd.Reported.Write
			}
			v.Cache = &cacheView{text, vd.Predicted.Read, read, write}
		} else if c.Usage != nil {
			predicted := 0
			if since[i] != nil {
				predicted = since[i].CommonPrefixBytes
			}
			v.Cache = &cacheView{cacheLine(c, since[i]), predicted, c.Usage.CacheReadTokens, c.Usage.CacheWriteTokens}
		}
		for _, s := range c.Manifest.Rows() {
			v.Fragments = append(v.Fragments, fragment{ID: s.ID, State: s.State(), Reason: s.Reason, Bytes: s.Bytes, Sources: s.Sources})
		}
		l.Calls = append(l.Calls, v)
	}
	// What says only that the run is not finished (a session open) is
	// not shown as a failure: the page and verify agree on what verifies.
	var problems, pending []string
	for _, p := range rep.Problems {
		if rep.Pending(p) {
			pending = append(pending, p.Detail)
		} else {
			problems = append(problems, p.Detail)
		}
	}
	v, i, f := rep.Counts()
	summary := fmt.Sprintf("%d call(s) verified, %d incomplete, %d failed (%s transcript, %d lines)", v, i, f, rep.Format, rep.Lines)
	if n := len(rep.Refused); n > 0 {
		summary = fmt.Sprintf("%d call(s) verified, %d incomplete, %d failed, %d refused (%s transcript, %d lines)", v, i, f, n, rep.Format, rep.Lines)
	}
	return page.Execute(w, map[string]any{
		"Title":    "promptloom run: " + source,
		"Summary":  summary,
		"Head":     rep.Head,
		"Signed":   signedLine(rep),
		"Open":     openLine(rep),
		"Problems": problems,
		"Pending":  pending,
		"Refused":  rep.Refused,
		"Roles":    lanes,
	})
}

// openLine says of a run still being written (it holds, and is not
// finished) which sessions are open, with their calls so far, and how far
// it verifies; "" otherwise.
func openLine(rep *transcript.Report) string {
	if rep.OK() || !rep.Holds() {
		return ""
	}
	var open []string
	for _, s := range rep.Open {
		open = append(open, fmt.Sprintf("session %s with %d call(s) so far", s.Session, s.Calls))
	}
	what := "every session closed, but the last line not whole yet"
	if len(open) > 0 {
		what = "open: " + strings.Join(open, ", ")
	}
	return fmt.Sprintf("%s; verified through line %d (still being written, or cut short)", what, rep.Lines)
}

// signedLine says whether the report's transcript was held to a key and
// how far the signature reaches: what verify --key says.
func signedLine(rep *transcript.Report) string {
	if rep.SignedBy == "" {
		return "not checked against a signer's key"
	}
	if rep.SignedThrough < rep.Lines {
		return fmt.Sprintf("signed by %s through the checkpoint at line %d, which covers every line before it; lines %d to %d are not signed yet", rep.SignedBy, rep.SignedThrough, rep.SignedThrough+1, rep.Lines)
	}
	return fmt.Sprintf("signed by %s: the checkpoint at line %d, the last, covers every line before it (a transcript cut back to an earlier checkpoint verifies too)", rep.SignedBy, rep.SignedThrough)
}
