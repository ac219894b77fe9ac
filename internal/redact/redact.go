// Package redact is the engine behind harn/redact: Harn's redact_string
// and redact_json, byte for byte, and what the library's own readers add
// to them. The reducer redacts each fragment once (Piece) and derives the
// whole prompt's redaction from the pieces (Joined), so no prompt is
// scanned twice; error messages quote input redacted and cut (Quote).
// harn/redact documents the contract; this package says how it is kept.
//
// Most prompt text holds no secret, and hashing is the floor the reducer is
// measured against, so the catalog is not run as regular expressions: a
// scanner finds the literal each pattern starts with, and the pattern is
// matched by hand only there (match.go), in time linear in the text. A
// text over 256 KiB is scanned in overlapping windows (window.go); a bare
// URL goes through Harn's redact_url (url.go).
package redact

import (
	"slices"
	"strconv"
	"strings"
)

// String returns s with every secret of the catalog replaced by its
// placeholder. When s holds nothing to redact, String returns s itself and
// allocates nothing.
func String(s string) string {
	return Piece(s).Redacted
}

// Text is the redaction of one piece of a larger text, kept so that the
// redaction of the pieces joined together can be derived without scanning
// the whole again (see Joined).
type Text struct {
	Raw      string
	Redacted string
	// edge is set when a match could reach across the piece's end once it
	// is joined to others (a private key's BEGIN line, a trailing Bearer or
	// "token:"), or when the URL rule applied (it applies to a whole text,
	// never to a piece of a larger one). tail and head are half of such a
	// match: a trailing keyword ("password"), and a leading ':' or '=',
	// which cross only when they meet.
	edge, tail, head bool
}

// Edge reports whether a secret could reach across the text's ends once it
// is joined to others, alone or with its neighbour (Joined knows which).
func (t Text) Edge() bool { return t.edge || t.tail || t.head }

// maxScanInput is Harn's MAX_SCAN_INPUT_BYTES: longer texts are scanned in
// windows.
const maxScanInput = 256 * 1024

// Piece redacts s and records what Joined needs to know about its edges.
func Piece(s string) Text {
	t := Text{Raw: s, Redacted: s}
	cur := s
	if u, ok := redactURL(s); ok {
		cur, t.edge = u, true
	}
	var first candidates
	t.Redacted, first = scanPatterns(cur)
	if cur == s {
		t.edge = t.edge || len(first.of(pPrivateKey)) > 0
	}
	t.edge = t.edge || len(s) > maxScanInput || endsOpen(s)
	end := skipSpaceBack(s, len(s))
	t.tail = endsWithKeyword(s, end)
	if start := skipSpace(s, 0); start < len(s) {
		t.head = s[start] == ':' || s[start] == '='
	}
	return t
}

// scanPatterns runs the catalog over s: once, in order, or by windows past
// maxScanInput. It also returns the candidates of its first scan of s.
func scanPatterns(s string) (string, candidates) {
	if s == "" {
		return s, candidates{}
	}
	if len(s) > maxScanInput {
		return windowed(s), candidates{}
	}
	c := scan(s, 0)
	if c.n == 0 {
		return s, c
	}
	return applyCatalog(s, c), c
}

// endsOpen reports whether s ends (before any trailing white space) with the
// start of a match that white space cannot stop: the word Bearer, or an
// assignment ("token:") whose value would be the next piece's start.
func endsOpen(s string) bool {
	j := skipSpaceBack(s, len(s))
	if j == 0 {
		return false
	}
	if last := s[j-1]; last == ':' || last == '=' {
		return endsWithKeyword(s, skipSpaceBack(s, j-1))
	}
	return j >= 6 && strings.EqualFold(s[j-6:j], "bearer") && atBoundary(s, j-6)
}

// Joined returns the redaction of the pieces' raw texts joined by sep, which
// must be white space only (the reducer's "\n\n"), exactly as String would
// give it for whole, the raw join the caller already holds.
//
// It is the join of the pieces' redactions when that is provably the same:
// the whole is at most 256 KiB (so it is not scanned by windows), no piece
// was a bare URL (the URL rule never applies to a join, which holds white
// space), and no match can cross a join. Every catalog pattern but three
// stops at white space, and a word boundary next to the separator is one
// at a text's end, so those matches are the same in a piece and in the
// whole; the three that can cross (a private key block, Bearer and its
// token, an assignment) are caught by the pieces' edge flags. Placeholders
// start with '<' and end with '>', so a pattern's replacements in one piece
// never open a crossing that its raw text did not show. When no piece
// changed, the whole is returned as it is and nothing is allocated.
// Otherwise the whole is redacted directly.
func Joined(pieces []Text, sep, whole string) string {
	if len(pieces) == 1 {
		return pieces[0].Redacted
	}
	if len(whole) > maxScanInput {
		return String(whole)
	}
	changed := false
	for i, p := range pieces {
		if p.edge || p.tail && i+1 < len(pieces) && pieces[i+1].head {
			return String(whole)
		}
		changed = changed || p.Redacted != p.Raw
	}
	if !changed {
		return whole
	}
	var b strings.Builder
	b.Grow(len(whole))
	for i, p := range pieces {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(p.Redacted)
	}
	return b.String()
}

// applyCatalog runs the catalog over s once, given the candidates of a scan
// of s.
func applyCatalog(s string, c candidates) string {
	for p := range numPatterns {
		starts := c.of(p)
		if len(starts) == 0 {
			continue
		}
		out, changed := replaceAt(s, p, starts)
		if !changed {
			continue
		}
		// Positions moved: scan the new text for the patterns still to run.
		s = out
		if p+1 < numPatterns {
			c = scan(s, p+1)
		}
	}
	return s
}

// placeholder appends <redacted:NAME:LEN> to b.
func placeholder(b *strings.Builder, p, n int) {
	b.WriteString("<redacted:")
	b.WriteString(catalog[p].Name)
	b.WriteByte(':')
	b.WriteString(strconv.Itoa(n))
	b.WriteByte('>')
}

// replaceAt replaces the leftmost-first, non-overlapping matches of pattern
// p, as a regex's find-all does: the match at the first candidate that
// matches, then the first candidate at or after its end, and so on. A match
// can only start at a candidate.
func replaceAt(s string, p int, starts []int) (string, bool) {
	if !slices.IsSorted(starts) {
		slices.Sort(starts)
	}
	m := newMatcher(s)
	var b strings.Builder
	last := 0 // end of the previous match; also how much of s is copied
	for _, pos := range starts {
		if pos < last {
			continue
		}
		end := m.match(p, pos)
		if end < 0 {
			continue
		}
		if b.Cap() == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:pos])
		placeholder(&b, p, end-pos)
		last = end
	}
	if last == 0 {
		return s, false
	}
	b.WriteString(s[last:])
	return b.String(), true
}
