package explain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/internal/spans"
	"github.com/promptloom/promptloom/manifest"
)

// Templated fragments: their spans in the explanation, in the prompt's
// offsets; what changed behind one in a diff; whether one is stable for
// the prompt cache from call to call.

// promptSpans returns the spans of an included row's templated fragment,
// moved from the fragment's body to the prompt (the reducer trimmed the
// body, and it starts at the row's offset) and cut to the bytes the
// prompt holds; nil for a fragment given as text.
func promptSpans(row *promptloom.Row) []promptloom.Span {
	f := row.Fragment
	if f.Template == nil || len(f.Template.Spans) == 0 {
		return nil
	}
	var lead int
	if !f.Verbatim {
		lead = len(f.Body) - len(strings.TrimLeftFunc(f.Body, unicode.IsSpace))
	}
	return spans.Cut(f.Template.Spans, f.Body, lead, lead+len(row.Body), row.Offset-lead)
}

// appendIndented appends name and v as encoding/json writes v indented
// as a member of a row (depth 3), unescaped: what writeJSON writes.
func appendIndented(b []byte, name string, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("      ", "  ")
	if err := enc.Encode(v); err != nil {
		return append(append(b, name...), "null"...) // plain data: cannot fail
	}
	return append(append(b, name...), bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// inputsChanged says, for a templated fragment whose body differs between
// a and b, what behind it changed: the binding paths whose values differ
// (and, when the template is the same, those one side read and the other
// did not), sorted, and whether the template or a file it included
// differs. Nothing for a fragment that is
// not templated on both sides.
func inputsChanged(a, b *manifest.Segment) (bindings []string, tmpl bool) {
	ta, tb := a.Template, b.Template
	if ta == nil || tb == nil {
		return nil, ta != tb
	}
	tmpl = ta.Digest != tb.Digest || ta.File != tb.File || len(changedKeys(ta.Includes, tb.Includes)) > 0
	for _, k := range changedKeys(ta.Bindings, tb.Bindings) {
		_, inA := ta.Bindings[k]
		_, inB := tb.Bindings[k]
		// A path only one side read follows from a change of template, or
		// of another binding (an if, a loop): named only in the latter case.
		if inA && inB || !tmpl {
			bindings = append(bindings, k)
		}
	}
	return bindings, tmpl
}

// changedKeys returns the keys whose digests differ between a and b, or
// that only one has, sorted.
func changedKeys(a, b map[string]digest.Digest) []string {
	var out []string
	for k, d := range a {
		if e, ok := b[k]; !ok || e != d {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// explainInputs fills in, for each changed templated fragment of a delta,
// what behind it changed.
func explainInputs(ds []FragmentDelta) {
	for i := range ds {
		d := &ds[i]
		if d.Kind != manifest.Changed || d.A == nil || d.B == nil {
			continue
		}
		d.Bindings, d.TemplateChanged = inputsChanged(d.A.segment(), d.B.segment())
	}
}

// changeCell is a delta's change as the text table shows it: with the
// bindings or template behind a changed templated fragment.
func changeCell(d *FragmentDelta) string {
	var why []string
	if len(d.Bindings) > 0 {
		why = append(why, "binding "+strings.Join(d.Bindings, ", "))
	}
	if d.TemplateChanged {
		why = append(why, "template")
	}
	if len(why) == 0 {
		return d.Kind
	}
	return d.Kind + ": " + strings.Join(why, "; ")
}

// Lint returns what is likely a mistake in what e explains, in order:
//
//  1. the options' warnings (Path set): input Harn accepts, so it is not
//     refused, but that is likely a mistake (a key Harn ignores, an item it
//     skips, a number used as text);
//  2. gated fragments (tool- or capability-dependent) that stand before an
//     unconditional fragment in the prompt, in either bucket: every "after"
//     fragment follows every "before" one, so a gated "before" fragment
//     shifts the offset of the "after" fragments too. Every on/off state of
//     a gate is a different prompt prefix, so such a fragment splits the
//     provider's prefix cache for everything behind it; placed after the
//     unconditional fragments, it would cost only its own bytes. These
//     warnings have the fragment's ID, and say how to act on them;
//  3. given since, the previous call's manifest: each included templated
//     fragment that reads a binding whose value differs from the previous
//     call's (the fragment matched by id). Its bytes change from call to
//     call, so a provider's prefix cache misses from its offset on.
//
// A nil since is the first two alone.
func Lint(e *Explanation, since *manifest.Manifest) []promptloom.Warning {
	out := lint(e)
	if since == nil {
		return out
	}
	prev := map[string]*manifest.Segment{}
	for i := range since.Segments {
		s := &since.Segments[i]
		if _, ok := prev[s.ID]; !ok && s.Template != nil {
			prev[s.ID] = s
		}
	}
	total := e.header().SystemPromptBytes
	for i := range e.Fragments {
		r := &e.Fragments[i]
		if !r.Included || r.Template == nil {
			continue
		}
		p, ok := prev[r.ID]
		if !ok {
			continue
		}
		// Only the bindings both calls read: a path read on one side only
		// follows from a change elsewhere, which names itself.
		var moving []string
		for path, d := range r.Template.Bindings {
			if pd, ok := p.Template.Bindings[path]; ok && pd != d {
				moving = append(moving, path)
			}
		}
		if len(moving) == 0 {
			continue
		}
		slices.Sort(moving)
		names := make([]string, len(moving))
		for j, m := range moving {
			names[j] = "`" + m + "`"
		}
		out = append(out, promptloom.Warning{ID: r.ID, Message: fmt.Sprintf(
			"%s is unstable for the prompt cache: it reads binding %s, which differs since the previous call, so the prompt cache can miss from its start, byte %d, on (%d of %d bytes); bind a stable value, or move the fragment after the stable ones",
			r.ID, strings.Join(names, ", "), *r.Offset, total-*r.Offset, total)})
	}
	return out
}

// originPiece is a piece of a templated row's bytes, at [start, end) of
// the prompt.
type originPiece struct {
	piece
	start, end int
}

// originPieces cuts a templated row's bytes along its spans, each piece
// with its origin; bytes in no span (a heading) are the fragment's own.
func originPieces(r *Row, base piece) []originPiece {
	var out []originPiece
	at, end := *r.Offset, *r.Offset+r.Bytes
	file := ""
	if r.Template != nil {
		file = r.Template.File
	}
	emit := func(pc piece, a, b int) {
		pc.Cont = len(out) > 0
		out = append(out, originPiece{pc, a, b})
	}
	for _, s := range r.Spans {
		if s.Start > at {
			emit(base, at, s.Start)
		}
		pc := base
		pc.Origin, pc.Kind = spanOrigin(file, s), s.Kind
		pc.Title = base.Title + "\n" + pc.Origin
		emit(pc, s.Start, s.End)
		at = s.End
	}
	if at < end {
		emit(base, at, end)
	}
	return out
}

func hasOrigins(p pane) bool {
	for _, pc := range p.Pieces {
		if pc.Origin != "" {
			return true
		}
	}
	return false
}

// spanOrigin says in words where a span's bytes came from, for a page's
// hover and a reader: "binding user.name | upper at sys.prompt 3:7",
// "template text at sys.prompt 1:1", "… (included)" for a span from an
// included file. file is the fragment's template file ("" inline).
func spanOrigin(file string, s promptloom.Span) string {
	var what string
	switch s.Kind {
	case "binding":
		what = "binding " + s.Path
		for _, f := range s.Filters {
			what += " | " + f
		}
	case "text":
		what = "template text"
	case "value":
		what = "computed value"
	case "section":
		what = "section wrapping"
	default:
		what = s.Kind
	}
	where := s.File
	if where == "" {
		where = "inline template"
	}
	out := fmt.Sprintf("%s at %s %d:%d", what, where, s.Line, s.Col)
	if s.IncludeLine > 0 {
		top := file
		if top == "" {
			top = "inline template"
		}
		out += fmt.Sprintf(" (included at %s %d:%d)", top, s.IncludeLine, s.IncludeCol)
	}
	return out
}
