// Package spans cuts a templated fragment's spans (promptloom.Span) to a
// byte range of the text they index: the one operation that options (a
// render trimmed into a body), explain (a body placed in the prompt) and
// why (an occurrence in a body) all need.
package spans

import (
	"slices"

	"github.com/promptloom/promptloom"
)

// Cut returns the spans of src that overlap [from, to), each clipped to
// it and its offsets moved by delta (into the text src's bytes are placed
// in); nil when none overlaps. A text
// span clipped at its start has its template position moved past the
// bytes cut (columns count characters), so it still names where its first
// byte came from. The spans are in order and do not overlap, so the first
// is found by a binary search.
func Cut(spans []promptloom.Span, src string, from, to, delta int) []promptloom.Span {
	i, _ := slices.BinarySearchFunc(spans, from, func(s promptloom.Span, at int) int {
		if s.End <= at {
			return -1
		}
		return 1
	})
	var out []promptloom.Span
	for ; i < len(spans) && spans[i].Start < to; i++ {
		s := spans[i]
		if s.Kind == "text" && s.Start < from && from <= len(src) {
			s.Line, s.Col = Advance(s.Line, s.Col, src[s.Start:from])
		}
		s.Start, s.End = max(s.Start, from)+delta, min(s.End, to)+delta
		if s.Start < s.End {
			out = append(out, s)
		}
	}
	return out
}

// Advance is the position after text, from line and col (columns count
// characters): the one rule by which the template parser numbers its
// positions and Cut moves them.
func Advance(line, col int, text string) (int, int) {
	for _, c := range text {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}
