package cache

import (
	"cmp"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/promptloom/promptloom/internal/textsafe"
	"github.com/promptloom/promptloom/request"
)

// Explanation is a whole request explained: its manifest, where it asks
// to be cached and what each breakpoint caches, the rules it breaks, and,
// when it is one call of a run, its verdict and where it left the call
// before it.
type Explanation struct {
	Manifest    *request.Manifest `json:"manifest"`
	Breakpoints []Breakpoint      `json:"breakpoints"`
	Lint        []Finding         `json:"lint,omitempty"`
	// Verdict and Previous are set for a recorded call: its prediction,
	// and where it leaves the call before it in its session (its name in
	// PreviousCall).
	Verdict      *Verdict            `json:"verdict,omitempty"`
	Previous     *request.Divergence `json:"previous,omitempty"`
	PreviousCall string              `json:"previous_call,omitempty"`
}

// Explain explains m; with lint it holds m to its provider's rules, since
// being the request before it (or nil).
func Explain(m, since *request.Manifest, o *Options, lint bool) *Explanation {
	x := &Explanation{Manifest: m, Breakpoints: Breakpoints(m, o)}
	if lint {
		x.Lint = Lint(m, since, o)
	}
	return x
}

// WriteJSON writes the explanation as indented JSON.
func (x *Explanation) WriteJSON(w io.Writer) error { return writeJSON(w, x) }

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// WriteText writes the explanation for a terminal: the totals, a line a
// segment in cache order, and the breakpoints. Every text from the body
// is escaped (textsafe).
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
	for _, t := range m.Sections {
		fmt.Fprintf(ew, "%-9s %9d %10s %9s\n", t.Section, t.Segments, thousands(t.Bytes), thousands(t.Tokens))
	}
	fmt.Fprintf(ew, "\n%4s  %-8s  %-28s %9s %8s  %-5s %s\n", "#", "section", "path", "bytes", "tokens", "cache", "what")
	marks := x.marks()
	for i, s := range m.Segments {
		fmt.Fprintf(ew, "%4d  %-8s  %-28s %9s %8s  %-5s %s\n", i+1, s.Section, textsafe.Line(s.Path), thousands(s.Bytes), thousands(s.Tokens), marks[s.Path], textsafe.Line(what(s)))
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
		if v.Reported != nil {
			fmt.Fprintf(ew, "; reported read %s, write %s", thousands(v.Reported.Read), thousands(v.Reported.Write))
		}
		fmt.Fprintln(ew)
		for _, b := range v.Blame {
			fmt.Fprintf(ew, "  %s: %s\n", b.Kind, textsafe.Line(b.Reason))
		}
	}
	if d := x.Previous; d != nil {
		fmt.Fprintf(ew, "against call %s: %s\n", textsafe.Line(x.PreviousCall), textsafe.Line(describeDivergence(d)))
	}
	for _, f := range x.Lint {
		fmt.Fprintf(ew, "lint: %s\n", textsafe.Line(f.String()))
	}
	return ew.err
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

//go:embed explain.html.tmpl
var page string

var pageTmpl = template.Must(template.New("request").Funcs(template.FuncMap{
	"what": what, "n": thousands, "inc": func(i int) int { return i + 1 },
	"divergence": describeDivergence,
}).Parse(page))

// WriteHTML writes the explanation as one HTML page: the sections
// shaded, each segment's path, origin and digest on hover.
func (x *Explanation) WriteHTML(w io.Writer, name string) error {
	return pageTmpl.Execute(w, struct {
		Name  string
		Marks map[string]string
		*Explanation
	}{name, x.marks(), x})
}
