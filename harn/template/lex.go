package template

import (
	"strings"
	"unicode/utf8"
)

// tokKind is what the lexer found: literal text, a directive, or the
// verbatim content of a raw block.
type tokKind uint8

const (
	tokText tokKind = iota
	tokDirective
	tokRaw
)

// token is one piece of a template's source.
type token struct {
	kind tokKind
	// s is the text (tokText, tokRaw) or the directive's body with its
	// trim markers removed and its white space trimmed (tokDirective).
	s string
	// at is the source offset of s (tokText, tokRaw) or of the directive's
	// "{{"; line and col are its 1-based position, col counted in
	// characters as Harn counts them.
	at, line, col int
	// trimLeft: the directive before this text ended in "-}}"; trimRight:
	// the directive after it starts with "{{-" (tokText only).
	trimLeft, trimRight bool
}

// cursor turns source offsets, asked for in increasing order, into Harn's
// line and column without rescanning from the start (Harn rescans; the
// answer is the same).
type cursor struct {
	src            string
	off, line, col int
}

func (c *cursor) pos(off int) (int, int) {
	if off < c.off { // never happens in order; rescan to stay correct
		c.off, c.line, c.col = 0, 1, 1
	}
	for c.off < off && c.off < len(c.src) {
		r, n := utf8.DecodeRuneInString(c.src[c.off:])
		if r == '\n' {
			c.line++
			c.col = 1
		} else {
			c.col++
		}
		c.off += n
	}
	return c.line, c.col
}

// tokenize splits src as Harn's lexer does: text up to each "{{"; "{{#"
// comments dropped up to "#}}"; a raw block kept verbatim up to its
// endraw; any other directive scanned to the first "}}" outside a quoted
// string.
func tokenize(src string) ([]token, *Error) {
	var toks []token
	c := &cursor{src: src, line: 1, col: 1}
	at := 0
	pendingTrimLeft := false
	n := len(src)
	for at < n {
		open := indexFrom(src, at, "{{")
		textEnd := n
		if open >= 0 {
			textEnd = open
		}
		trimLeft := pendingTrimLeft
		pendingTrimLeft = false
		trimRight := open >= 0 && open+2 < n && src[open+2] == '-'
		if textEnd > at || trimLeft || trimRight {
			line, col := c.pos(at)
			toks = append(toks, token{kind: tokText, s: src[at:textEnd], at: at, line: line, col: col,
				trimLeft: trimLeft, trimRight: trimRight})
		}
		if open < 0 {
			break
		}
		bodyStart := open + 2
		if trimRight {
			bodyStart++
		}
		if bodyStart < n && src[bodyStart] == '#' {
			end := indexFrom(src, bodyStart+1, "#}}")
			if end < 0 {
				return nil, c.errAt(open, "unterminated comment")
			}
			at = end + 3
			continue
		}
		if isRawOpen(src, bodyStart) {
			kwEnd := skipBlanks(src, bodyStart) + 3
			dirClose := indexFrom(src, kwEnd, "}}")
			if dirClose < 0 {
				return nil, c.errAt(open, "unterminated directive")
			}
			rawStart := dirClose + 2
			endOpen, endClose, ok := findEndraw(src, rawStart)
			if !ok {
				return nil, c.errAt(open, "unterminated `{{ raw }}` block")
			}
			line, col := c.pos(rawStart)
			toks = append(toks, token{kind: tokRaw, s: src[rawStart:endOpen], at: rawStart, line: line, col: col})
			at = endClose
			continue
		}
		closeAt, trimAfter, ok := findDirectiveClose(src, bodyStart)
		if !ok {
			return nil, c.errAt(open, "unterminated directive")
		}
		bodyEnd := closeAt
		if trimAfter {
			bodyEnd--
		}
		line, col := c.pos(open)
		toks = append(toks, token{kind: tokDirective, s: strings.TrimSpace(src[bodyStart:bodyEnd]), at: open, line: line, col: col})
		at = closeAt + 2
		pendingTrimLeft = trimAfter
	}
	return toks, nil
}

func (c *cursor) errAt(off int, msg string) *Error {
	line, col := c.pos(off)
	return &Error{Line: line, Col: col, msg: msg, kind: errSyntax}
}

func indexFrom(s string, from int, pat string) int {
	if i := strings.Index(s[from:], pat); i >= 0 {
		return i + from
	}
	return -1
}

// skipBlanks skips spaces and tabs (only those, as Harn's lexer does).
func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// isRawOpen reports whether the directive body starting at i is the raw
// keyword: "raw" after spaces or tabs, then white space, "}}", "-}}" or the
// end of the source.
func isRawOpen(src string, i int) bool {
	k := skipBlanks(src, i)
	if !strings.HasPrefix(src[k:], "raw") {
		return false
	}
	a := k + 3
	if a >= len(src) {
		return true
	}
	switch src[a] {
	case ' ', '\t', '\n', '\r':
		return true
	}
	return strings.HasPrefix(src[a:], "}}") || strings.HasPrefix(src[a:], "-}}")
}

// findDirectiveClose finds the first "}}" at or after start that is not in
// a quoted string, and whether a '-' trim marker stands right before it.
func findDirectiveClose(s string, start int) (int, bool, bool) {
	at := -1
	scanFrom(s, start, false, func(i, _ int) int {
		if i+1 >= len(s) {
			return 0
		}
		if s[i] == '}' && s[i+1] == '}' {
			at = i
			return 0
		}
		return 1
	})
	if at < 0 {
		return 0, false, false
	}
	return at, at > start && s[at-1] == '-', true
}

// findEndraw finds the "{{ endraw }}" directive (trim markers and blanks
// allowed) from offset from: the offsets of its "{{" and past its "}}".
func findEndraw(s string, from int) (int, int, bool) {
	at := from
	for {
		open := indexFrom(s, at, "{{")
		if open < 0 {
			return 0, 0, false
		}
		bodyStart := open + 2
		if bodyStart < len(s) && s[bodyStart] == '-' {
			bodyStart++
		}
		trimStart := skipBlanks(s, bodyStart)
		closeAt, trim, ok := findDirectiveClose(s, bodyStart)
		if !ok {
			return 0, 0, false
		}
		bodyEnd := closeAt
		if trim {
			bodyEnd--
		}
		if trimStart <= bodyEnd && strings.TrimSpace(s[trimStart:bodyEnd]) == "endraw" {
			return open, closeAt + 2, true
		}
		at = closeAt + 2
	}
}
