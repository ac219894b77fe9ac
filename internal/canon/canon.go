// Package canon writes JSON in one canonical form, so that a content hash
// over it can be recomputed in any language: object keys sorted by UTF-16
// code units and never repeated, no insignificant white space, strings with
// only the escapes JSON requires, numbers in their shortest form (the rules of
// RFC 8785, JSON Canonicalization Scheme).
package canon

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// ErrInvalid is returned for input that is not one valid JSON value, or has
// an object with a repeated key.
var ErrInvalid = errors.New("canon: invalid JSON")

// Encode returns the canonical encoding of raw, a JSON document.
func Encode(raw []byte) ([]byte, error) {
	return EncodeStrings(raw, nil)
}

// InvalidUTF8 returns the offset of the first byte of b that is not part of
// a UTF-8 sequence, or -1: readers of JSON written by others check it first,
// to name the offset (JSON parsers replace bad bytes silently).
func InvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// Marshal encodes v with encoding/json and returns its canonical form.
func Marshal(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return Encode(raw)
}

func writeWith(b *strings.Builder, v gjson.Result, f func(string) string) error {
	switch {
	case v.IsObject():
		return writeObject(b, v, f)
	case v.IsArray():
		b.WriteByte('[')
		var err error
		first := true
		v.ForEach(func(_, item gjson.Result) bool {
			if !first {
				b.WriteByte(',')
			}
			first = false
			err = writeWith(b, item, f)
			return err == nil
		})
		b.WriteByte(']')
		return err
	}
	switch v.Type {
	case gjson.String:
		s := v.String()
		if f != nil {
			s = f(s)
		}
		WriteString(b, s)
	case gjson.Number:
		return writeNumber(b, v.Raw)
	case gjson.True:
		b.WriteString("true")
	case gjson.False:
		b.WriteString("false")
	case gjson.Null:
		b.WriteString("null")
	default:
		return ErrInvalid
	}
	return nil
}

func writeObject(b *strings.Builder, v gjson.Result, f func(string) string) error {
	type member struct {
		key string
		val gjson.Result
	}
	var ms []member
	v.ForEach(func(k, val gjson.Result) bool {
		ms = append(ms, member{k.String(), val})
		return true
	})
	slices.SortFunc(ms, func(x, y member) int { return compareUTF16(x.key, y.key) })
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			if ms[i-1].key == m.key {
				return fmt.Errorf("%w: key %q given twice", ErrInvalid, m.key)
			}
			b.WriteByte(',')
		}
		WriteString(b, m.key)
		b.WriteByte(':')
		if err := writeWith(b, m.val, f); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

func compareUTF16(a, b string) int {
	if isASCII(a) && isASCII(b) {
		return strings.Compare(a, b)
	}
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// WriteString writes s as a JSON string with only the escapes JSON requires:
// the quote, the backslash, and control characters (short forms where JSON
// has them, else \u00xx).
func WriteString(b *strings.Builder, s string) {
	const hexd = "0123456789abcdef"
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b.WriteString(s[start:i])
		switch c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteString(`\u00`)
			b.WriteByte(hexd[c>>4])
			b.WriteByte(hexd[c&15])
		}
		start = i + 1
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}

// writeNumber writes a number the way ECMAScript prints it, as RFC 8785 asks.
func writeNumber(b *strings.Builder, raw string) error {
	f, err := strconv.ParseFloat(raw, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return fmt.Errorf("%w: number %s", ErrInvalid, raw)
	}
	abs := math.Abs(f)
	switch {
	case f == 0:
		b.WriteString("0")
	case abs >= 1e-6 && abs < 1e21:
		b.WriteString(strconv.FormatFloat(f, 'f', -1, 64))
	default:
		s := strconv.FormatFloat(f, 'e', -1, 64) // 1e+21, 1e-07
		mant, exp, _ := strings.Cut(s, "e")
		sign := exp[:1]
		exp = strings.TrimLeft(exp[1:], "0")
		b.WriteString(mant + "e" + sign + exp)
	}
	return nil
}

// EncodeStrings returns the canonical encoding of raw with every string
// value (not object keys) passed through f first (nil: unchanged): a content
// hash of JSON taken after redaction.
func EncodeStrings(raw []byte, f func(string) string) ([]byte, error) {
	if !json.Valid(raw) {
		return nil, ErrInvalid
	}
	var b strings.Builder
	b.Grow(len(raw))
	if err := writeWith(&b, gjson.ParseBytes(raw), f); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}
