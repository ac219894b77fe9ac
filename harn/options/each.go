package options

import (
	"strings"

	"github.com/tidwall/gjson"
)

// each calls fn for every member of an object or item of a list, as
// gjson.Result.ForEach does and with the same Results (Type, Raw, Str, Num
// and the absolute Index), but faster on the documents Parse reads: it
// finds the end of a string with a vectorised strings.IndexByte where gjson
// looks at every byte, and it reads a container's text once where gjson
// reads it twice (once to find its end, then again to iterate it).
//
// It relies on what Parse has already checked: v.Raw is well-formed JSON
// (scan or checkDocument said so). Anything that is not a plain
// string or a container (numbers, literals) and any string with an escape
// is read by gjson itself, so the values are gjson's to the byte; the
// agreement is held by TestEachAgrees and FuzzEach.
func each(v gjson.Result, fn func(key, val gjson.Result) bool) {
	if !v.Exists() {
		return
	}
	if v.Type != gjson.JSON {
		fn(gjson.Result{}, v)
		return
	}
	s := v.Raw
	i := skipSpace(s, 0)
	if i >= len(s) || (s[i] != '{' && s[i] != '[') {
		return
	}
	obj := s[i] == '{'
	key := gjson.Result{Type: gjson.Number, Num: -1}
	if obj {
		key = gjson.Result{Type: gjson.String}
	}
	for i++; ; {
		i = skipSpace(s, i)
		if s[i] == '}' || s[i] == ']' {
			return
		}
		if obj {
			end := stringEnd(s, i)
			key = readString(s[i:end], i+v.Index)
			i = skipSpace(s, end)
			i = skipSpace(s, i+1) // the colon
		} else {
			key.Num++
		}
		end := valueEnd(s, i)
		if !fn(key, readValue(s[i:end], i+v.Index)) {
			return
		}
		i = skipSpace(s, end)
		if s[i] == ',' {
			i++
		}
	}
}

// readValue is the Result gjson gives for one whole value, raw, found at
// offset at of the document.
func readValue(raw string, at int) gjson.Result {
	switch raw[0] {
	case '"':
		return readString(raw, at)
	case '{', '[':
		return gjson.Result{Type: gjson.JSON, Raw: raw, Index: at}
	}
	r := gjson.Parse(raw)
	r.Index = at
	return r
}

// readString is a string's Result: a slice of the document when it has no
// escape, gjson's own unescaping when it has one.
func readString(raw string, at int) gjson.Result {
	if strings.IndexByte(raw, '\\') < 0 {
		return gjson.Result{Type: gjson.String, Raw: raw, Str: raw[1 : len(raw)-1], Index: at}
	}
	r := gjson.Parse(raw)
	r.Index = at
	return r
}

// skipSpace returns the offset of the first byte at or after i that is not
// JSON whitespace.
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
