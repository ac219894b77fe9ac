package canon

import (
	"math"
	"strconv"
)

// Placeholder replaces the value of a sensitive member in EncodeRedacted:
// Harn's REDACTED_PLACEHOLDER.
const Placeholder = "[redacted]"

type writer struct {
	f         func(string) string
	sensitive func(string) bool
	buf       []byte
}

func (w *writer) value(v *value) {
	switch v.kind {
	case kNull:
		w.buf = append(w.buf, "null"...)
	case kTrue:
		w.buf = append(w.buf, "true"...)
	case kFalse:
		w.buf = append(w.buf, "false"...)
	case kNumber:
		w.buf, _ = appendNumber(w.buf, v.s)
	case kString:
		s := v.s
		if w.f != nil {
			s = w.f(s)
		}
		w.buf = appendString(w.buf, s)
	case kArray:
		w.buf = append(w.buf, '[')
		for i := range v.kids {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.value(&v.kids[i])
		}
		w.buf = append(w.buf, ']')
	case kObject:
		w.buf = append(w.buf, '{')
		for i := range v.kids {
			m := &v.kids[i]
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.buf = appendString(w.buf, m.key)
			w.buf = append(w.buf, ':')
			if w.sensitive != nil && w.sensitive(m.key) {
				w.buf = appendString(w.buf, Placeholder)
				continue
			}
			w.value(m)
		}
		w.buf = append(w.buf, '}')
	}
}

func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			dst = AppendEscape(append(dst, s[start:i]...), c)
			start = i + 1
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendEscape appends the JSON escape of c, a byte that cannot stand in a
// string as itself: a quote, a backslash or a control byte. serde_json and
// encoding/json write these alike: a backslash before a quote or a
// backslash, \b \f \n \r \t by name, \u00XX (lower-case hex) for the rest.
func AppendEscape(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	const hex = "0123456789abcdef"
	return append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
}

// appendNumber appends the canonical form of tok, a number token by JSON's
// grammar, as serde_json reads then writes it: an integer literal that fits
// in u64 (or i64, when negative) stays as it is; anything else (a fraction,
// an exponent, -0, an integer past 64 bits) is a double, written as ryu
// writes it. It reports false for a double out of range.
func appendNumber(dst []byte, tok string) ([]byte, bool) {
	integer := true
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; c == '.' || c == 'e' || c == 'E' {
			integer = false
			break
		}
	}
	if integer && tok != "-0" {
		var err error
		if tok[0] == '-' {
			_, err = strconv.ParseInt(tok, 10, 64)
		} else {
			_, err = strconv.ParseUint(tok, 10, 64)
		}
		if err == nil {
			return append(dst, tok...), true
		}
	}
	f, err := strconv.ParseFloat(tok, 64)
	if err != nil && (math.IsInf(f, 0) || math.IsNaN(f)) {
		return dst, false
	}
	return AppendFloat(dst, f), true
}

// AppendFloat appends f (finite) as serde_json writes a double, by ryu's
// rules: the shortest digits that read back as f, as a plain decimal with at
// least one fractional digit when the decimal exponent allows (1.0, 0.001,
// 1e15 as 1000000000000000.0), else in scientific form with no '+' and no
// leading zero in the exponent (1e16, 1.5e-7).
func AppendFloat(dst []byte, f float64) []byte {
	if math.Signbit(f) {
		dst = append(dst, '-')
		f = -f
	}
	if f == 0 {
		return append(dst, "0.0"...)
	}
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64) // d.ddde±xx
	mark := len(e) - 1
	for e[mark] != 'e' {
		mark--
	}
	exp, _ := strconv.Atoi(string(e[mark+1:]))
	var dbuf [24]byte
	digits := append(dbuf[:0], e[0])
	if mark > 1 {
		digits = append(digits, e[2:mark]...)
	}
	n := len(digits)
	kk := exp + 1 // 10^(kk-1) <= f < 10^kk
	k := kk - n   // f = digits × 10^k
	switch {
	case k >= 0 && kk <= 16:
		dst = append(dst, digits...)
		for range k {
			dst = append(dst, '0')
		}
		return append(dst, '.', '0')
	case kk > 0 && kk <= 16:
		dst = append(dst, digits[:kk]...)
		dst = append(dst, '.')
		return append(dst, digits[kk:]...)
	case kk > -5 && kk <= 0:
		dst = append(dst, '0', '.')
		for range -kk {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	dst = append(dst, digits[0])
	if n > 1 {
		dst = append(dst, '.')
		dst = append(dst, digits[1:]...)
	}
	dst = append(dst, 'e')
	return strconv.AppendInt(dst, int64(kk-1), 10)
}
