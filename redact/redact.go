// Package redact removes secrets from text before it is hashed, so that a
// digest never lets anyone confirm a guessed secret and a manifest can be
// shared.
//
// The catalog (docs/rules.md, "Redaction") is applied in order, each pattern to the
// output of the one before; every match becomes <redacted:NAME:BYTE_LEN>.
// Before the catalog, a text that is one bare URL loses its userinfo and the
// values of its sensitive query parameters.
//
// Most prompt text holds no secret, and hashing is the floor the reducer is
// measured against, so String first scans for the literal each pattern starts
// with and runs a pattern only where its literal stands. The result is the
// same as running every regexp over the whole text.
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
	// is joined to others (an open private key block, a trailing Bearer or
	// "token:"), or when the URL rule applied (it applies to a whole text,
	// never to a piece of a larger one). tail and head are half of such a
	// match: a trailing keyword ("password"), and a leading ':' or '=',
	// which cross only when they meet.
	edge, tail, head bool
}

// Changed reports whether redaction changed the text.
func (t Text) Changed() bool { return t.Redacted != t.Raw }

// Edge reports whether a secret could reach across the text's ends once it
// is joined to others, alone or with its neighbour (Joined knows which).
func (t Text) Edge() bool { return t.edge || t.tail || t.head }

// Piece redacts s and records what Joined needs to know about its edges.
//
// The catalog runs until nothing changes. One pass is what Harn does, and for
// almost every text one pass is all there is; but a placeholder can put a word
// boundary where there was none ("xBearer abc..." after the x was redacted),
// and then a single pass would leave a catalog match in its output and
// redacting twice would change it again. Running to the fixed point keeps the
// two promises of docs/rules.md: idempotent, and no catalog secret left.
func Piece(s string) Text {
	t := Text{Raw: s, Redacted: s}
	for pass := 0; ; pass++ {
		cur := t.Redacted
		if u, ok := redactURL(cur); ok {
			cur, t.edge = u, true
		}
		c := scan(cur, 0)
		if pass == 0 {
			t.edge = t.edge || len(c.of(pPrivateKey)) > 0 || endsOpen(s)
			t.tail = endsWithKeyword(s, len(s))
			t.head = s != "" && (s[0] == ':' || s[0] == '=')
		}
		if c.n > 0 {
			cur = applyCatalog(cur, c)
		}
		if cur == t.Redacted {
			return t
		}
		t.Redacted = cur
	}
}

// endsOpen reports whether s ends with the start of a match that white space
// cannot stop: the word Bearer, or an assignment ("token:") whose value
// would be the next piece's start. (An unclosed private key block is caught
// by its candidate; every other pattern stops at white space.)
func endsOpen(s string) bool {
	if s == "" {
		return false
	}
	if last := s[len(s)-1]; last == ':' || last == '=' {
		j := len(s) - 1
		for j > 0 && isRESpace(s[j-1]) {
			j--
		}
		return endsWithKeyword(s, j)
	}
	return len(s) >= 6 && strings.EqualFold(s[len(s)-6:], "bearer")
}

// Joined returns the redaction of the pieces' raw texts joined by sep, which
// must be white space only (the reducer's "\n\n"). When no piece has a match
// that could cross an edge, that is the join of the pieces' redactions; when
// none of them changed, it is whole, the raw join the caller already holds,
// and nothing is allocated. Otherwise the whole is redacted directly.
func Joined(pieces []Text, sep, whole string) string {
	if len(pieces) == 1 {
		return pieces[0].Redacted
	}
	changed := false
	for i, p := range pieces {
		if p.edge || p.tail && i+1 < len(pieces) && pieces[i+1].head {
			return String(whole)
		}
		changed = changed || p.Changed()
	}
	if !changed {
		return whole
	}
	var b strings.Builder
	for i, p := range pieces {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(p.Redacted)
	}
	return b.String()
}

// applyCatalog runs the catalog over s, given the candidates of a scan of s.
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

// maxAnchored is how many candidates of an unbounded pattern are tried one
// by one; past it, the pattern runs once over the whole text instead.
const maxAnchored = 1

// replaceAt replaces the leftmost-first, non-overlapping matches of pattern p
// that start at the candidate positions, exactly as ReplaceAllStringFunc of
// the unanchored pattern would: a match can only start at a candidate. A
// failed attempt of an unbounded pattern (a BEGIN with no END) can read to
// the end of the text, so for many candidates of one the unanchored pattern
// runs instead, in one linear pass.
func replaceAt(s string, p int, starts []int) (string, bool) {
	e := &catalog[p]
	if e.unbounded && len(starts) > maxAnchored {
		out := e.full.ReplaceAllStringFunc(s, func(m string) string {
			return "<redacted:" + e.name + ":" + strconv.Itoa(len(m)) + ">"
		})
		return out, out != s
	}
	if !slices.IsSorted(starts) {
		slices.Sort(starts)
	}
	var b strings.Builder
	last := 0 // end of the previous match; also how much of s is copied
	for _, pos := range starts {
		if pos < last {
			continue
		}
		m := e.anchored.FindStringIndex(s[pos:])
		if m == nil {
			continue
		}
		end := pos + m[1]
		if b.Cap() == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:pos])
		b.WriteString("<redacted:")
		b.WriteString(e.name)
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(end - pos))
		b.WriteByte('>')
		last = end
	}
	if last == 0 {
		return s, false
	}
	b.WriteString(s[last:])
	return b.String(), true
}
