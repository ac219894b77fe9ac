package explain

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"

	"github.com/promptloom/promptloom"
)

// Templated fragments: their spans in the explanation, in the prompt's
// offsets.

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
	end := lead + len(row.Body)
	out := make([]promptloom.Span, 0, len(f.Template.Spans))
	for _, s := range f.Template.Spans {
		a, b := max(s.Start, lead), min(s.End, end)
		if a >= b {
			continue
		}
		s.Start, s.End = row.Offset+a-lead, row.Offset+b-lead
		out = append(out, s)
	}
	return out
}

// appendIndented appends name and v as encoding/json writes v indented
// as a member of a row (depth 3), unescaped: what writeJSON writes.
func appendIndented(b []byte, name string, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("      ", "  ")
	if err := enc.Encode(v); err != nil {
		panic(err) // plain data: cannot fail
	}
	return append(append(b, name...), bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}
