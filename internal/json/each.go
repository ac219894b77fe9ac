package json

import "strings"

// Each calls fn for every member of the object, or every item of the
// array, that raw holds, in order, until fn returns false: key is the
// member's key token as written (quotes and escapes included; Unquote
// decodes it), "" for an array item; val is the value as written; keyAt and
// valAt are where they start in raw (keyAt is -1 for an item). raw must be
// a value that Check (with any Options) accepted; for anything but an array
// or an object, fn is not called.
//
// It reads a container's text once, finding the end of each string with a
// vectorised search, so walking a document level by level costs about one
// pass per level.
func Each(raw string, fn func(key string, keyAt int, val string, valAt int) bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || (raw[i] != '{' && raw[i] != '[') {
		return
	}
	obj := raw[i] == '{'
	for i++; ; {
		i = skipSpace(raw, i)
		if raw[i] == '}' || raw[i] == ']' {
			return
		}
		key, keyAt := "", -1
		if obj {
			end := stringEnd(raw, i)
			key, keyAt = raw[i:end], i
			i = skipSpace(raw, end)
			i = skipSpace(raw, i+1) // the colon
		}
		end := valueEnd(raw, i)
		if !fn(key, keyAt, raw[i:end], i) {
			return
		}
		i = skipSpace(raw, end)
		if raw[i] == ',' {
			i++
		}
	}
}

// skipSpace returns the offset of the first byte at or after i that is not
// JSON white space.
func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t') {
		i++
	}
	return i
}

// stringEnd returns the offset just past the string that opens at i: the
// first quote not escaped, that is, not after an odd run of backslashes.
func stringEnd(s string, i int) int {
	for j := i + 1; ; {
		q := j + strings.IndexByte(s[j:], '"')
		n := 0
		for p := q - 1; s[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}

// valueEnd returns the offset just past the value that starts at i.
func valueEnd(s string, i int) int {
	switch s[i] {
	case '"':
		return stringEnd(s, i)
	case '{', '[':
		depth := 0
		for {
			switch s[i] {
			case '"':
				i = stringEnd(s, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
	}
	for i < len(s) && !strings.ContainsRune(" \t\r\n,]}", rune(s[i])) {
		i++
	}
	return i
}

// ScalarEnd reads the string, number or literal that starts at s[i] by
// JSON's grammar alone, as encoding/json would, and returns where it ends
// and whether it is one, complete: a string closed with every escape well
// formed, a number with its digits, true, false or null spelt out. What
// follows the token is not looked at (the token of 01 is 0).
func ScalarEnd(s string, i int) (int, bool) {
	p := scanner{s: s, i: i, syntaxOnly: true}
	switch c := s[i]; {
	case c == '"':
		p.str()
	case c == 't' || c == 'f' || c == 'n':
		p.literal()
	case c == '-' || c >= '0' && c <= '9':
		p.number()
	default:
		return i, false
	}
	return p.i, p.err == nil
}
