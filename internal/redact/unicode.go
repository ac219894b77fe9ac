package redact

import (
	"unicode"
	"unicode/utf8"
)

// Harn's patterns are Rust regexes, whose \b, \w and \s are Unicode-aware
// (Go's regexp makes them ASCII). These helpers give the Rust meaning.
// Harn's text is always valid UTF-8; a byte that is not part of a valid rune
// is treated here as one non-word, non-space character.

// isWordRune is Rust regex's Unicode \w: Alphabetic, marks, decimal digits,
// connector punctuation and the join controls.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return isWordByte(byte(r))
	}
	return unicode.IsLetter(r) || unicode.In(r, unicode.Nl, unicode.Other_Alphabetic,
		unicode.M, unicode.Nd, unicode.Pc, unicode.Join_Control)
}

func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// isSpaceRune is Rust regex's Unicode \s (the White_Space property, which
// includes \v, U+0085 and U+00A0 besides the ASCII white space).
func isSpaceRune(r rune) bool {
	return unicode.IsSpace(r)
}

// wordBefore reports whether the character that ends at pos is a word
// character.
func wordBefore(s string, pos int) bool {
	if pos <= 0 {
		return false
	}
	if c := s[pos-1]; c < utf8.RuneSelf {
		return isWordByte(c)
	}
	r, _ := utf8.DecodeLastRuneInString(s[:pos])
	return r != utf8.RuneError && isWordRune(r)
}

// wordAt reports whether the character that starts at pos is a word
// character.
func wordAt(s string, pos int) bool {
	if pos >= len(s) {
		return false
	}
	if c := s[pos]; c < utf8.RuneSelf {
		return isWordByte(c)
	}
	r, _ := utf8.DecodeRuneInString(s[pos:])
	return r != utf8.RuneError && isWordRune(r)
}

// atBoundary is Rust's Unicode \b at pos: a word character on exactly one
// side.
func atBoundary(s string, pos int) bool {
	return wordBefore(s, pos) != wordAt(s, pos)
}

// spaceAt returns the length of the white-space character at pos, or 0.
func spaceAt(s string, pos int) int {
	if pos >= len(s) {
		return 0
	}
	if c := s[pos]; c < utf8.RuneSelf {
		if c == ' ' || '\t' <= c && c <= '\r' {
			return 1
		}
		return 0
	}
	r, n := utf8.DecodeRuneInString(s[pos:])
	if r != utf8.RuneError && isSpaceRune(r) {
		return n
	}
	return 0
}

// skipSpace returns the end of the run of white space that starts at pos.
func skipSpace(s string, pos int) int {
	for {
		n := spaceAt(s, pos)
		if n == 0 {
			return pos
		}
		pos += n
	}
}

// skipSpaceBack returns the start of the run of white space that ends at pos.
func skipSpaceBack(s string, pos int) int {
	for pos > 0 {
		if c := s[pos-1]; c < utf8.RuneSelf {
			if c == ' ' || '\t' <= c && c <= '\r' {
				pos--
				continue
			}
			return pos
		}
		r, n := utf8.DecodeLastRuneInString(s[:pos])
		if r == utf8.RuneError || !isSpaceRune(r) {
			return pos
		}
		pos -= n
	}
	return pos
}

// Under (?i) Rust folds a class's letters with Unicode simple case folding:
// besides the other ASCII case, k also matches the Kelvin sign and s the
// long s. No other character folds to an ASCII letter.
const (
	kelvin = '\u212a'
	longS  = '\u017f'
)

// foldRuneAt matches the ASCII lowercase letter or symbol c at pos in either
// case (with the two non-ASCII folds) and returns the matched length, or 0.
func foldRuneAt(s string, pos int, c byte) int {
	if pos >= len(s) {
		return 0
	}
	b := s[pos]
	if b < utf8.RuneSelf {
		if b == c || 'a' <= c && c <= 'z' && b == c-'a'+'A' {
			return 1
		}
		return 0
	}
	r, n := utf8.DecodeRuneInString(s[pos:])
	if c == 'k' && r == kelvin || c == 's' && r == longS {
		return n
	}
	return 0
}

// foldPrefix matches the lowercase ASCII word at pos under (?i) and returns
// its end, or -1.
func foldPrefix(s string, pos int, word string) int {
	for i := 0; i < len(word); i++ {
		n := foldRuneAt(s, pos, word[i])
		if n == 0 {
			return -1
		}
		pos += n
	}
	return pos
}
