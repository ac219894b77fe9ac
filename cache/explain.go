package cache

import (
	"cmp"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/promptloom/promptloom/harn/redact"
	"github.com/promptloom/promptloom/internal/textsafe"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/request"
)

// Explanation is a whole request explained: its manifest, where it asks
// to be cached and what each breakpoint caches, the rules it breaks, its
// verdict, and, when it is one call of a run, where it left the call
// before it.
type Explanation struct {
	Manifest    *request.Manifest `json:"manifest"`
	Breakpoints []Breakpoint      `json:"breakpoints"`
	Lint        []Finding         `json:"lint,omitempty"`
	// Verdict is the request's prediction and cost. Explain predicts it
	// for the request alone (after since, when given); a caller that
	// knows the calls before it (a recorded call of a run) sets the one
	// Run gave it.
	Verdict *Verdict `json:"verdict,omitempty"`
	// Body, when set, is the body Manifest was built from: each segment's
	// content is shown from it, redacted by harn/redact whatever it holds
	// (a transcript's body is already; a body file's is not), so that no
	// secret reaches the output.
	Body []byte `json:"-"`

	opts *Options
	// own is the verdict Explain predicted, to say so while it is the
	// one shown; since is whether it followed a request given before it.
	own   *Verdict
	since bool
	// previous is where the request leaves the call before it in its
	// session, named previousCall (After).
	previous     *request.Divergence
	previousCall string
}

// After shows the explanation as one call of a session: where its request
// leaves prev, the call before it (named name), by the provider's rules of
// what is in the prefix. It returns that divergence.
func (x *Explanation) After(name string, prev *request.Manifest) request.Divergence {
	d := diverge(prev, x.Manifest)
	x.previous, x.previousCall = &d, name
	return d
}

// Explain explains m; with lint it holds m to its provider's rules, since
// being the request before it (or nil). Its verdict is m's prediction
// from an empty cache, or from what since wrote.
func Explain(m, since *request.Manifest, o *Options, withLint bool) *Explanation {
	x := &Explanation{Manifest: m, Breakpoints: Breakpoints(m, o), opts: o, since: since != nil}
	if withLint {
		x.Lint = lint(m, since, o)
	}
	// The session lint is Run's with Options.Lint: a single request has
	// its own lint above.
	ro := *orDefault(o)
	ro.Lint = false
	calls := []Call{{Request: m}}
	if since != nil {
		calls = []Call{{Name: "(the request before it)", Request: since}, {Request: m}}
	}
	a := Run(calls, &ro)
	v := a.Verdicts[len(a.Verdicts)-1]
	x.Verdict, x.own = &v, &v
	return x
}

// WriteJSON writes the explanation as indented JSON, with each segment's
// content and cache state and the request's cost.
func (x *Explanation) WriteJSON(w io.Writer) error {
	return writeJSON(w, struct {
		*Explanation
		Segments []segmentView `json:"segments"`
		Cost     *costView     `json:"cost,omitempty"`
	}{x, x.segments(), x.cost()})
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// segmentView is one segment as explain shows it: where it is, its
// tokens, its cache state as predicted (read, written, uncached; "" for a
// request the provider refuses), the lifetime of the breakpoint on it,
// and its content, redacted: a text block's text, anything else its
// canonical JSON (ContentType "text" or "json"); Note says why a segment
// has no content, or where it is.
type segmentView struct {
	Index       int     `json:"index"`
	Section     string  `json:"section"`
	Path        string  `json:"path"`
	Fragment    string  `json:"fragment,omitempty"`
	Tokens      int     `json:"tokens"`
	Cache       string  `json:"cache,omitempty"`
	Breakpoint  string  `json:"breakpoint,omitempty"`
	Content     *string `json:"content,omitempty"`
	ContentType string  `json:"content_type,omitempty"`
	Note        string  `json:"content_note,omitempty"`
	What        string  `json:"-"`
}

// segments is each segment's view, in cache order.
func (x *Explanation) segments() []segmentView {
	m := x.Manifest
	out := make([]segmentView, len(m.Segments))
	states := x.states()
	marks := x.marks()
	var cs []content
	if x.Body != nil {
		cs = contents(m, x.Body)
	}
	for i, s := range m.Segments {
		v := segmentView{Index: i + 1, Section: s.Section, Path: s.Path, Fragment: s.Fragment, Tokens: s.Tokens, Cache: states[i], What: what(s)}
		// A block's breakpoint is on its last segment (of its fragments).
		if i+1 == len(m.Segments) || m.Segments[i+1].Path != s.Path {
			v.Breakpoint = marks[s.Path]
		}
		if cs != nil {
			c := cs[i]
			if c.ok {
				text := c.text
				v.Content, v.ContentType = &text, "text"
				if c.json {
					v.ContentType = "json"
				}
			}
			v.Note = c.note
		}
		out[i] = v
	}
	return out
}

// states is each segment's cache state as the verdict predicts it: read
// through the segment the read covers, written from there through the
// last breakpoint that writes, uncached past it (and everywhere in an
// implicit cache, which bills no write). A request the provider refuses
// has none.
func (x *Explanation) states() []string {
	segs := x.Manifest.Segments
	out := make([]string, len(segs))
	v := x.Verdict
	if v == nil || len(v.Problems) > 0 {
		return out
	}
	readEnd := -1
	if v.ReadThrough != "" {
		for i, s := range segs {
			if s.Path == v.ReadThrough {
				readEnd = i
				for readEnd+1 < len(segs) && segs[readEnd+1].Path == s.Path {
					readEnd++
				}
				break
			}
		}
	}
	writeEnd := -1
	if v.Predicted.Write > 0 {
		for _, b := range x.Breakpoints {
			if b.Path != "" && b.Cached {
				writeEnd = max(writeEnd, min(b.Segments, len(segs))-1)
			}
		}
	}
	for i := range out {
		switch {
		case i <= readEnd:
			out[i] = "read"
		case i <= writeEnd:
			out[i] = "written"
		default:
			out[i] = "uncached"
		}
	}
	return out
}

// content is one segment's content, redacted, or why it has none.
type content struct {
	text string
	json bool
	ok   bool
	note string
}

// contents reads each segment of m from body, the body m was built from:
// a part by its path, an attributed system prompt's fragments by their
// bytes in the prompt. Everything is redacted here, so a body file shows
// as a transcript would keep it; a recorded body, already redacted, is
// left as it is.
func contents(m *request.Manifest, body []byte) []content {
	out := make([]content, len(m.Segments))
	fail := func(note string) []content {
		for i := range out {
			out[i].note = note
		}
		return out
	}
	r, err := payload.Read(body, payload.Provider(m.Provider))
	if err != nil {
		return fail("not shown: the body given does not read: " + err.Error())
	}
	parts, err := r.Parts()
	if err != nil {
		return fail("not shown: the body given does not read: " + err.Error())
	}
	byPath := make(map[string]payload.Part, len(parts))
	for _, p := range parts {
		byPath[p.Path] = p
	}
	var frags []int
	for i, s := range m.Segments {
		if s.Fragment != "" {
			frags = append(frags, i)
			continue
		}
		p, ok := byPath[s.Path]
		if !ok || len(p.Raw) != s.Bytes {
			out[i].note = "not shown: the body given is not the one this request was read from"
			continue
		}
		out[i] = partContent(p)
	}
	if len(frags) > 0 {
		fragments(m, parts, byPath, frags, out)
	}
	return out
}

// partContent is a part's content: a text block's or a string's text,
// redacted as harn/redact redacts a string; anything else its canonical
// JSON, redacted as a transcript's body is (a credential-like member
// replaced whole).
func partContent(p payload.Part) content {
	if t, ok := p.Text(); ok {
		return content{text: redact.String(t), ok: true}
	}
	red, err := redact.JSON(p.Raw)
	if err != nil {
		return content{note: "not shown: " + err.Error()}
	}
	return content{text: string(red), json: true, ok: true}
}

// joinSeparator is what a context manifest's fragments are joined by in
// the system prompt.
const joinSeparator = "\n\n"

// fragments fills the contents of an attributed system prompt's
// fragments (the segments frags names): each its bytes of the prompt the
// system blocks' texts make, laid out as the context manifest lays them
// (the separator between each two). The prompt is the blocks' texts as
// they follow one another, or joined by the separator (a prompt placed
// in several blocks). Each fragment is redacted on its own only where
// that gives what the whole prompt redacted gives (no secret runs across
// a separator); otherwise, or where the fragments do not lie in the
// blocks as the manifest says, each block is shown whole on its first
// fragment.
func fragments(m *request.Manifest, parts []payload.Part, byPath map[string]payload.Part, frags []int, out []content) {
	var texts []string
	for _, p := range parts {
		if p.Section != "system" {
			continue
		}
		t, ok := p.Text()
		if !ok {
			texts = nil
			break
		}
		texts = append(texts, t)
	}
	for _, prompt := range []string{strings.Join(texts, ""), strings.Join(texts, joinSeparator)} {
		if texts == nil {
			break
		}
		pieces, ok := cut(m, frags, prompt)
		if !ok {
			continue
		}
		red := make([]string, len(pieces))
		for j, p := range pieces {
			red[j] = redact.String(p)
		}
		if strings.Join(red, joinSeparator) != redact.String(prompt) {
			break
		}
		for j, i := range frags {
			out[i] = content{text: red[j], ok: true}
		}
		return
	}
	first := map[string]int{}
	for _, i := range frags {
		s := m.Segments[i]
		if at, seen := first[s.Path]; seen {
			out[i].note = fmt.Sprintf("in segment %d's content: its block is shown whole", at+1)
			continue
		}
		first[s.Path] = i
		p, ok := byPath[s.Path]
		if !ok {
			out[i].note = "not shown: the body given is not the one this request was read from"
			continue
		}
		out[i] = partContent(p)
		out[i].note = "its block whole: the block's fragments are not shown apart (a redaction runs across them, or they do not lie where the manifest says)"
	}
}

// cut lays the fragments' bytes out in prompt, the separator between
// each two, and reports whether they fill it exactly.
func cut(m *request.Manifest, frags []int, prompt string) ([]string, bool) {
	pieces := make([]string, 0, len(frags))
	at := 0
	for j, i := range frags {
		if j > 0 {
			if !strings.HasPrefix(prompt[at:], joinSeparator) {
				return nil, false
			}
			at += len(joinSeparator)
		}
		n := m.Segments[i].Bytes
		if n < 0 || n > len(prompt)-at {
			return nil, false
		}
		pieces = append(pieces, prompt[at:at+n])
		at += n
	}
	return pieces, at == len(prompt)
}

// costView is the request's cost at the price table's list prices, from
// its verdict: the whole (Cost), what its cache write costs (the written
// tokens at the write prices), and what its misses cost over reading the
// same tokens. A model the table does not price has Unpriced, naming it,
// and only tokens.
type costView struct {
	Model       string `json:"model"`
	Priced      bool   `json:"priced"`
	Unpriced    string `json:"unpriced,omitempty"`
	Basis       string `json:"basis,omitempty"`
	PricesTaken string `json:"prices_taken,omitempty"`
	Cost        int64  `json:"cost_micro_usd"`
	WriteTokens int    `json:"write_tokens"`
	WriteCost   int64  `json:"write_cost_micro_usd"`
	MissTokens  int    `json:"miss_tokens"`
	MissCost    int64  `json:"miss_cost_micro_usd"`
}

// cost is the request's cost, nil with no verdict or for a request
// nothing is predicted for (one the provider refuses is not billed).
func (x *Explanation) cost() *costView {
	v := x.Verdict
	if v == nil || len(v.Problems) > 0 {
		return nil
	}
	c := &costView{Model: x.Manifest.Model, Priced: v.Priced, Unpriced: v.Unpriced, Basis: v.CostBasis}
	for _, b := range v.Blame {
		c.MissTokens += b.Tokens
	}
	if !v.Priced {
		return c
	}
	p := x.opts.prices()
	c.PricesTaken, c.Cost, c.MissCost = p.Taken, v.Cost, v.MissCost
	c.WriteTokens, c.WriteCost = writeCost(p, x.Manifest, v)
	return c
}

// writeCost is what v's cache write costs at p's prices: the tokens
// written by lifetime, as priceCall bills them (a reported write shared
// among the lifetimes the prediction wrote), at the tier of the whole
// prompt. The tier is read from the prompt as counted, which a provider's
// report can exceed by its own framing: only a prompt within those few
// tokens of a tier's edge could be priced at the other tier here.
func writeCost(p *Prices, m *request.Manifest, v *Verdict) (int, int64) {
	row, ok := p.lookup(m.Provider, m.Model)
	if !ok {
		return 0, 0
	}
	writes := v.writes
	if v.CostBasis == "reported" && v.Reported != nil {
		writes = splitWrite(v.Reported.Write, v.writes, defaultLifetime(m.Provider, &Call{Request: m}))
	}
	t := row.tier(v.InputTokens)
	var c money
	for _, w := range writes {
		c.add(w.tokens, t.write[w.ttl])
	}
	return sum(writes), c.micros()
}

// WriteText writes the explanation for a terminal: the totals, a line a
// segment in cache order, each segment's content (long ones shortened),
// the breakpoints, the verdict and the cost. Every text from the body is
// escaped (textsafe).
func (x *Explanation) WriteText(w io.Writer, name string) error {
	ew := &errWriter{w: w}
	m := x.Manifest
	est := ""
	if m.Counter == "estimate" {
		est = " (estimated: the provider's tokenizer is not public)"
	}
	fmt.Fprintf(ew, "request %s: %s, model %s, %s bytes, %s tokens%s\n", textsafe.Line(name), m.Provider, textsafe.Line(orDash(m.Model)), thousands(m.Bytes), thousands(m.Tokens), est)
	fmt.Fprintf(ew, "content hash %s\n\n", m.ContentHash)
	fmt.Fprintf(ew, "%-9s %9s %10s %9s\n", "section", "segments", "bytes", "tokens")
	for _, t := range sections(m) {
		fmt.Fprintf(ew, "%-9s %9d %10s %9s\n", t.Section, t.Segments, thousands(t.Bytes), thousands(t.Tokens))
	}
	segs := x.segments()
	fmt.Fprintf(ew, "\n%4s  %-8s  %-28s %9s %8s  %-8s %-5s %s\n", "#", "section", "path", "bytes", "tokens", "state", "cache", "what")
	marks := x.marks()
	for i, s := range m.Segments {
		fmt.Fprintf(ew, "%4d  %-8s  %-28s %9s %8s  %-8s %-5s %s\n", i+1, s.Section, textsafe.Line(s.Path), thousands(s.Bytes), thousands(s.Tokens), orDash(segs[i].Cache), marks[s.Path], textsafe.Line(what(s)))
	}
	if x.Body != nil {
		fmt.Fprintln(ew, "\ncontents, in cache order (redacted; long ones shortened: --format json or html gives them whole):")
		for _, s := range segs {
			writeContent(ew, s)
		}
	}
	fmt.Fprintln(ew)
	if len(x.Breakpoints) == 0 {
		fmt.Fprintln(ew, "breakpoints: none")
	}
	for _, b := range x.Breakpoints {
		if b.Path == "" {
			fmt.Fprintf(ew, "implicit cache: %s\n", textsafe.Line(b.Caches))
			continue
		}
		fmt.Fprintf(ew, "breakpoint %s: %s\n", textsafe.Line(b.Path), textsafe.Line(b.Caches))
	}
	if v := x.Verdict; v != nil {
		fmt.Fprintf(ew, "\ncache: predicted read %s, write %s", thousands(v.Predicted.Read), thousands(v.Predicted.Write))
		if v.Estimate {
			fmt.Fprint(ew, " (estimated)")
		}
		if v.Reported != nil {
			fmt.Fprintf(ew, "; reported read %s, write %s", thousands(v.Reported.Read), thousands(v.Reported.Write))
		}
		if n := x.ownNote(); n != "" {
			fmt.Fprintf(ew, " (%s)", n)
		}
		fmt.Fprintln(ew)
		for _, b := range v.Blame {
			fmt.Fprintf(ew, "  %s: %s\n", b.Kind, textsafe.Line(b.Reason))
		}
		for _, p := range v.Problems {
			fmt.Fprintf(ew, "  refused: %s\n", textsafe.Line(p.String()))
		}
		fmt.Fprintf(ew, "cost: %s\n", textsafe.Line(x.costLine()))
	}
	if d := x.previous; d != nil {
		fmt.Fprintf(ew, "against call %s: %s\n", textsafe.Line(x.previousCall), textsafe.Line(describeDivergence(d)))
	}
	for _, f := range x.Lint {
		fmt.Fprintf(ew, "lint: %s\n", textsafe.Line(f.String()))
	}
	return ew.err
}

// ownNote says what the verdict was predicted from when Explain made it.
func (x *Explanation) ownNote() string {
	switch {
	case x.own == nil || x.Verdict != x.own:
		return ""
	case x.since:
		return "after the request before it, from what it cached"
	}
	return "this request alone: nothing cached before it"
}

// costLine says the cost in words: the whole, its write and its misses,
// or why there is no figure.
func (x *Explanation) costLine() string {
	c := x.cost()
	switch {
	case c == nil && x.Verdict != nil && len(x.Verdict.Problems) > 0:
		return "none: nothing is predicted for this request (" + x.Verdict.Problems[0].Message + ")"
	case c == nil:
		return "none: no verdict"
	case !c.Priced:
		return c.Unpriced + "; tokens only"
	}
	basis := "as reported"
	if c.Basis == "predicted" {
		basis = "as predicted, output not known"
	}
	line := fmt.Sprintf("%s (%s, list prices taken %s)", dollars(c.Cost), basis, orDash(c.PricesTaken))
	if c.WriteTokens > 0 {
		line += fmt.Sprintf("; its cache write %s (%s tokens)", dollars(c.WriteCost), thousands(c.WriteTokens))
	} else {
		line += "; no cache write"
	}
	if c.MissTokens > 0 {
		line += fmt.Sprintf("; its misses %s over reading their %s tokens", dollars(c.MissCost), thousands(c.MissTokens))
	} else {
		line += "; no miss"
	}
	return line
}

// Contents longer than this are shortened in text: a terminal shows a
// screen at a time, and JSON and HTML give them whole.
const (
	textContentBytes = 600
	textContentLines = 8
	// textContentWordBack is how far back from the cut a space is looked
	// for, to cut between words.
	textContentWordBack = 80
)

// writeContent writes one segment's heading and content, indented,
// shortened past textContentBytes or textContentLines with the bytes
// left out counted.
func writeContent(w io.Writer, s segmentView) {
	head := fmt.Sprintf("#%d %s: %s", s.Index, s.Path, s.Section)
	if s.What != "" {
		head += ", " + s.What
	}
	head += fmt.Sprintf(", %s tokens", thousands(s.Tokens))
	if s.Cache != "" {
		head += ", " + s.Cache
	}
	if s.Breakpoint != "" {
		head += ", breakpoint " + s.Breakpoint
	}
	fmt.Fprintln(w, textsafe.Line(head))
	if s.Note != "" {
		fmt.Fprintf(w, "      (%s)\n", textsafe.Line(s.Note))
	}
	if s.Content == nil {
		return
	}
	text := *s.Content
	if text == "" {
		fmt.Fprintln(w, "      (empty)")
		return
	}
	kept := shorten(text)
	for _, line := range strings.Split(strings.TrimSuffix(textsafe.Block(kept), "\n"), "\n") {
		fmt.Fprintf(w, "      %s\n", line)
	}
	if left := len(text) - len(kept); left > 0 {
		fmt.Fprintf(w, "      [… %s more %s left out]\n", thousands(left), pluralWord(left, "byte"))
	}
}

// shorten is the start of s a terminal is shown: at most
// textContentLines lines and textContentBytes bytes, cut between
// characters.
func shorten(s string) string {
	end := len(s)
	lines := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			lines++
			if lines == textContentLines {
				end = i + 1
				break
			}
		}
	}
	if end > textContentBytes {
		end = textContentBytes
		for end > 0 && !utf8.RuneStart(s[end]) {
			end--
		}
		// At the end of a word where one ends near the cut.
		if sp := strings.LastIndexAny(s[:end], " \n"); sp >= 0 && sp >= end-textContentWordBack {
			end = sp + 1
		}
	}
	return s[:end]
}

func pluralWord(n int, one string) string {
	if n == 1 {
		return one
	}
	return one + "s"
}

func describeDivergence(d *request.Divergence) string {
	if d.Reason == "" {
		return fmt.Sprintf("keeps its whole prefix (%s tokens shared)", thousands(d.SharedTokens))
	}
	return fmt.Sprintf("leaves its prefix at segment %d, %s: %s", d.Index+1, orDash(d.Path), d.Reason)
}

// what names a segment in words: its fragment and reason, its tool, its
// role and type.
func what(s request.Segment) string {
	var parts []string
	if s.Fragment != "" {
		parts = append(parts, "fragment "+s.Fragment)
		if s.Reason != "" {
			parts = append(parts, "("+s.Reason+")")
		}
	}
	if s.Name != "" {
		parts = append(parts, "tool "+s.Name)
	}
	if s.Role != "" {
		parts = append(parts, s.Role)
	}
	if s.Type != "" {
		parts = append(parts, s.Type)
	}
	return strings.Join(parts, " ")
}

// marks is the cache column: the lifetime of each breakpoint, as the
// provider's model reads it (a marker without a ttl is 5 minutes on
// Anthropic and GPT-5.6's 30 on OpenAI), on the segment it is on; an
// implicit write position shows too.
func (x *Explanation) marks() map[string]string {
	out := map[string]string{}
	for _, s := range x.Manifest.Segments {
		if s.Cache != nil {
			out[s.Path] = cmp.Or(s.Cache.TTL, "mark")
		}
	}
	for _, b := range x.Breakpoints {
		if b.Path != "" && b.TTL != "" {
			out[b.Path] = b.TTL
		}
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

type errWriter struct {
	w   io.Writer
	err error
}

func (w *errWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n, err := w.w.Write(p)
	w.err = err
	return n, err
}

// section is one section's share of a request, as the request manifest's
// JSON gives it.
type section struct {
	Section                 string
	Segments, Bytes, Tokens int
}

// sections are the shares of m's tools, system and messages, in that order.
func sections(m *request.Manifest) []section {
	out := []section{{Section: "tools"}, {Section: "system"}, {Section: "messages"}}
	for _, s := range m.Segments {
		for i := range out {
			if out[i].Section == s.Section {
				out[i].Segments++
				out[i].Bytes += s.Bytes
				out[i].Tokens += s.Tokens
			}
		}
	}
	return out
}

//go:embed explain.html.tmpl
var page string

var pageTmpl = template.Must(template.New("request").Funcs(template.FuncMap{
	"what": what, "n": thousands, "inc": func(i int) int { return i + 1 },
	"divergence": describeDivergence, "dollars": dollars, "sections": sections,
	// On the page as in a terminal, a control character or a
	// bidirectional control in a content is shown as its escape: it
	// could otherwise reorder or hide what a reader sees.
	"safe": textsafe.Block,
}).Parse(page))

// WriteHTML writes the explanation as one HTML page: the sections
// shaded, each segment's path, origin and digest on hover, and each
// segment's content whole, folded under its heading.
func (x *Explanation) WriteHTML(w io.Writer, name string) error {
	return pageTmpl.Execute(w, struct {
		Name         string
		Marks        map[string]string
		Segments     []segmentView
		CostLine     string
		Own          string
		Previous     *request.Divergence
		PreviousCall string
		*Explanation
	}{name, x.marks(), x.segments(), x.costLine(), x.ownNote(), x.previous, x.previousCall, x})
}
