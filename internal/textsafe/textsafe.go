// Package textsafe escapes what must not reach a terminal raw: control
// characters (C0, DEL, C1), the bidirectional controls that reorder what a
// reader sees, and bytes that are not UTF-8. They are written as Go string
// escapes (\n, \x1b, \u202e, \xff), so an id or reason holding a newline
// cannot forge a row of a table, nor an ESC sequence reach the terminal;
// everything else, backslashes included, prints unchanged, and text with
// nothing to escape is returned as it is, without allocating.
package textsafe

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Line escapes s for one line (or one cell) of text output: every control
// character, newlines included.
func Line(s string) string { return escape(s, false) }

// Block escapes s for text output of several lines: as Line, but a newline
// is kept.
func Block(s string) string { return escape(s, true) }

// Safe reports whether r prints as itself: not a control character nor a
// bidirectional control.
func Safe(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return false
	case r == 0x061c, r == 0x200e, r == 0x200f,
		r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return false
	}
	return r != utf8.RuneError
}

func escape(s string, keepNewline bool) string {
	i := firstUnsafe(s, keepNewline)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\n' && keepNewline:
			b.WriteByte('\n')
		case r == utf8.RuneError && size <= 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])>>4, 16))
			b.WriteString(strconv.FormatUint(uint64(s[i])&0xf, 16))
		case !Safe(r):
			q := strconv.QuoteRune(r) // '\n', '\x1b', '\u202e', ...
			if r == utf8.RuneError {
				q = `'\ufffd'`
			}
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// firstUnsafe is the offset of the first byte to escape, or -1.
func firstUnsafe(s string, keepNewline bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && !(c == '\n' && keepNewline)) || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !Safe(r) {
			return i
		}
		i += size
	}
	return -1
}
