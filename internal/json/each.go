package json

import "strings"

// Each calls fn for every member of the object, or every item of the
// array, that raw holds, in order, until fn returns false, as Iter.Next
// gives them.
func Each(raw string, fn func(key string, keyAt int, val string, valAt int) bool) {
	it := NewIter(raw)
	for {
		key, keyAt, val, valAt, ok := it.Next()
		if !ok || !fn(key, keyAt, val, valAt) {
			return
		}
	}
}

// Iter walks the members of an object, or the items of an array, that a
// value holds. It reads the container's text once, finding the end of each
// string with a vectorised search, so walking a document level by level
// costs about one pass per level.
type Iter struct {
	raw      string
	i        int
	obj, end bool
	ends     []int32 // where the container items end, from Scan
	base     int     // the offset of raw in the document ends are in
}

// NewIter returns an Iter over raw, a value that Check (with any Options)
// accepted. For anything but an array or an object it gives nothing.
func NewIter(raw string) Iter {
	i := skipSpace(raw, 0)
	if i >= len(raw) || (raw[i] != '{' && raw[i] != '[') {
		return Iter{end: true}
	}
	return Iter{raw: raw, i: i + 1, obj: raw[i] == '{'}
}

// Next returns the next member or item: key is the member's key token as
// written (quotes and escapes included; Unquote decodes it), "" for an
// array item; val is the value as written; keyAt and valAt are where they
// start in raw (keyAt is -1 for an item). ok is false past the last.
func (it *Iter) Next() (key string, keyAt int, val string, valAt int, ok bool) {
	if it.end {
		return "", -1, "", -1, false
	}
	raw := it.raw
	i := skipSpace(raw, it.i)
	if raw[i] == ',' {
		i = skipSpace(raw, i+1)
	}
	if raw[i] == '}' || raw[i] == ']' {
		it.end = true
		return "", -1, "", -1, false
	}
	keyAt = -1
	if it.obj {
		end := stringEnd(raw, i)
		key, keyAt = raw[i:end], i
		i = skipSpace(raw, end)
		i = skipSpace(raw, i+1) // the colon
	}
	var end int
	if c := raw[i]; (c == '{' || c == '[') && len(it.ends) > 0 {
		end, it.ends = int(it.ends[0])-it.base, it.ends[1:]
	} else {
		end = valueEnd(raw, i)
	}
	it.i = end
	return key, keyAt, raw[i:end], i, true
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

// Without is the object raw holds without its members named key (the
// name decoded), the others as written, joined with no space: a block's
// JSON without its cache mark, for the digest both the request manifest
// and the proxy's session finding take of it.
func Without(raw, key string) []byte {
	out := make([]byte, 1, len(raw))
	out[0] = '{'
	for it := NewIter(raw); ; {
		k, _, v, _, ok := it.Next()
		if !ok {
			break
		}
		if Unquote(k) == key {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(append(out, k...), ':'), v...)
	}
	return append(out, '}')
}
