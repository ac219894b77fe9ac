package explain

import (
	"iter"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/internal/spans"
)

// Place is one place a text occurs, as Why finds it: in the system prompt
// (Offset at least 0) or in the body of a fragment the prompt left out
// (Offset -1: excluded by a gate, an empty body, or shed by a budget; the
// row's State and Reason say which and why). Its JSON is what `promptloom
// why --format json` prints for each place.
type Place struct {
	// Offset is the byte of the system prompt the occurrence starts at;
	// -1 when it is in a fragment the prompt left out.
	Offset int `json:"offset"`
	// Row is the fragment's row, the explanation's own (its id, source,
	// state, reason, bytes and digest). It is nil for an occurrence that
	// lies wholly in a join separator, which is no fragment's.
	Row *Row `json:"fragment"`
	// Start and End are the bytes of the fragment's body (trimmed, as the
	// prompt holds it) the occurrence covers; for an occurrence in a join
	// separator alone, the bytes of the separator.
	Start int `json:"start"`
	End   int `json:"end"`
	// Joiner marks an occurrence that reaches into a join separator: one
	// that crosses from one fragment into the next is a place for each
	// fragment it covers part of, all with the same Offset, each with the
	// part in that fragment; the separator's own bytes are no fragment's.
	Joiner bool `json:"joiner,omitempty"`
	// RequiresTools and RequiresCaps are the fragment's gates, in declared
	// order; nil when it has none, or when the explanation does not hold
	// its fragments (one read back from JSON or a transcript: the
	// manifest's reason is then all that says what gated it).
	RequiresTools []string `json:"requires_tools,omitempty"`
	RequiresCaps  []string `json:"requires_caps,omitempty"`
	// Spans, for a fragment rendered from a template, say which parts of
	// the template produced the bytes the occurrence covers: template text
	// at a file, line and column, or a binding's path with its filters
	// (promptloom.Span). Each is cut to those bytes, with Start and End in
	// the terms of the place's own (the fragment's body as the prompt
	// holds it). Bytes the options added around the render (a system
	// item's heading) are in no span. Nil for a fragment given as text, and
	// for a left-out fragment of an explanation that does not hold its
	// fragments (a manifest records a template's digest and bindings, no
	// spans).
	Spans []promptloom.Span `json:"spans,omitempty"`
	// WholeBody marks a fragment left out whose body the explanation does
	// not hold (a recorded one keeps only its digest), but whose digest is
	// the text's: the text, trimmed, is its whole body. A text that is
	// only part of such a body cannot be found.
	WholeBody bool `json:"whole_body,omitempty"`
}

// Why answers "why is this text in the prompt?": it yields every place
// text occurs, first in the system prompt, in order of offset (overlapping
// occurrences too: "aa" is twice in "aaa"), then in the bodies of the
// fragments the prompt left out, in row order. A text in the prompt is
// there because of the fragments its places name, each with its reason and
// gates; a text found only in left-out fragments is absent because of
// theirs; no place at all means it is nowhere the explanation can see.
//
// An explanation built from options (Explain, FromOptions) holds
// every fragment's body, so nothing is missed. One without its reduction
// (read back from JSON, or made from a recorded prompt and manifest) holds
// the prompt but of a left-out fragment only its digest: such a fragment
// is a place only when text is its whole body (WholeBody), and a text in
// part of one is not found. The empty text, a nil explanation and one
// without a prompt have no place in the prompt.
//
// The places are yielded as they are found, so a caller may stop early; a
// text that occurs a million times is not held a million times over.
func (e *Explanation) Why(text string) iter.Seq[Place] {
	return func(yield func(Place) bool) {
		if e == nil || text == "" {
			return
		}
		if !e.inPrompt(text, yield) {
			return
		}
		e.leftOut(text, yield)
	}
}

// laid is an included row's bytes in the prompt.
type laid struct {
	row        int
	start, end int
}

// layout lays the included rows out in the prompt: each after the one
// before and a separator, as a manifest that holds for its prompt places
// them (bounded by the prompt, so a hand-built explanation cannot send a
// search out of it).
func (e *Explanation) layout(n int) []laid {
	var out []laid
	at := 0
	for i := range e.Fragments {
		r := &e.Fragments[i]
		if !r.segment().Included {
			continue
		}
		if len(out) > 0 {
			at += len(promptloom.Separator)
		}
		start := min(at, n)
		at += r.segment().Bytes
		out = append(out, laid{row: i, start: start, end: min(at, n)})
	}
	return out
}

// inPrompt yields the places of text in the system prompt; false when the
// caller stopped.
func (e *Explanation) inPrompt(text string, yield func(Place) bool) bool {
	sys := e.System
	laid := e.layout(len(sys))
	step := 1
	if _, n := utf8.DecodeRuneInString(text); n > 0 {
		step = n
	}
	k := 0 // the first span that may hold the next occurrence
	for from := 0; from+len(text) <= len(sys); {
		i := strings.Index(sys[from:], text)
		if i < 0 {
			break
		}
		off := from + i
		end := off + len(text)
		for k < len(laid) && laid[k].end <= off {
			k++
		}
		touched := 0
		for j := k; j < len(laid) && laid[j].start < end; j++ {
			touched++
		}
		if touched == 0 {
			// Wholly in a separator: no fragment's bytes.
			sepStart := 0
			if k > 0 {
				sepStart = laid[k-1].end
			}
			if !yield(Place{Offset: off, Start: off - sepStart, End: end - sepStart, Joiner: true}) {
				return false
			}
		}
		joiner := touched > 1 || touched == 1 && (off < laid[k].start || end > laid[k].end)
		for j := k; j < k+touched; j++ {
			s := laid[j]
			p := Place{Offset: off, Row: &e.Fragments[s.row], Start: max(off, s.start) - s.start,
				End: min(end, s.end) - s.start, Joiner: joiner}
			p.RequiresTools, p.RequiresCaps = e.gatesOf(s.row)
			p.Spans = spans.Cut(p.Row.Spans, sys, s.start+p.Start, s.start+p.End, -s.start)
			if !yield(p) {
				return false
			}
		}
		from = off + step
	}
	return true
}

// leftOut yields the places of text in the fragments the prompt left out.
func (e *Explanation) leftOut(text string, yield func(Place) bool) {
	held := e.Reduction != nil && len(e.Reduction.Rows) == len(e.Fragments)
	// A held body is searched; of one not held, only its digest can be
	// compared (a body's digest is of its trimmed, redacted bytes).
	t := strings.TrimSpace(text)
	var whole digest.Digest
	if !held && t != "" {
		whole = digest.Of(t)
	}
	step := 1
	if _, n := utf8.DecodeRuneInString(text); n > 0 {
		step = n
	}
	for i := range e.Fragments {
		r := &e.Fragments[i]
		s := r.segment()
		if s.Included {
			continue
		}
		if !held {
			if t != "" && s.Digest == whole {
				if !yield(Place{Offset: -1, Row: r, End: len(t), WholeBody: true}) {
					return
				}
			}
			continue
		}
		row := &e.Reduction.Rows[i]
		body := row.Body
		tools, caps := e.gatesOf(i)
		var tspans []promptloom.Span
		var src string // the fragment's body, which the spans index
		lead := 0      // where body starts in it
		if f := row.Fragment; f != nil && f.Template != nil {
			tspans, src = f.Template.Spans, f.Body
			if !f.Verbatim {
				lead = len(f.Body) - len(strings.TrimLeftFunc(f.Body, unicode.IsSpace))
			}
		}
		for from := 0; from+len(text) <= len(body); {
			j := strings.Index(body[from:], text)
			if j < 0 {
				break
			}
			at := from + j
			p := Place{Offset: -1, Row: r, Start: at, End: at + len(text), RequiresTools: tools, RequiresCaps: caps,
				Spans: spans.Cut(tspans, src, lead+at, lead+at+len(text), -lead)}
			if !yield(p) {
				return
			}
			from = at + step
		}
	}
}

// gatesOf returns row i's gates, when the explanation holds its fragment.
func (e *Explanation) gatesOf(i int) (tools, caps []string) {
	if e.Reduction == nil || i >= len(e.Reduction.Rows) || len(e.Reduction.Rows) != len(e.Fragments) {
		return nil, nil
	}
	if f := e.Reduction.Rows[i].Fragment; f != nil {
		return f.RequiresTools, f.RequiresCaps
	}
	return nil, nil
}
