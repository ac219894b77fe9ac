package json

import (
	"bytes"
	stdjson "encoding/json"
	"math"
	"strconv"
	"unsafe"
)

// Placeholder replaces the value of a sensitive member in EncodeRedacted:
// Harn's REDACTED_PLACEHOLDER.
const Placeholder = "[redacted]"

type kind uint8

const (
	kNull kind = iota
	kFalse
	kTrue
	kNumber
	kString
	kArray
	kObject
)

// value is one node of a document's tree: a string's decoded text, a
// number's token, or a container's items or members. An object's members
// carry their keys and are kept sorted by them.
type value struct {
	kind kind
	s    string
	key  string
	kids []value
}

// Encode returns the canonical encoding of raw, a JSON document read as
// Check reads it with no Options.
func Encode(raw []byte) ([]byte, error) {
	return EncodeRedacted(raw, nil, nil)
}

// EncodeRedacted is Harn's redact_json followed by its canonical encoding
// (stable_redacted_json_hash hashes these bytes): the value of every object
// member whose key sensitive reports (whatever its type) becomes the string
// Placeholder, and every other string value passes through f. Object keys
// are never changed. A nil f or sensitive does nothing.
//
// The input is read once into a tree and the tree written once, both
// without recursion, so the cost is linear at any depth.
func EncodeRedacted(raw []byte, f func(string) string, sensitive func(key string) bool) ([]byte, error) {
	p := scanner{s: unsafe.String(unsafe.SliceData(raw), len(raw)), build: true}
	if p.run(); p.err != nil {
		return nil, p.resolve()
	}
	w := writer{f: f, sensitive: sensitive, buf: make([]byte, 0, len(raw))}
	w.write(&p.vals[0])
	return w.buf, nil
}

// Marshal encodes v with encoding/json and returns its canonical form.
// encoding/json writes a float64 that is a whole number without a fraction
// (1.0 as 1), which then reads as an integer: values whose floats must keep
// Harn's form should be given as json.RawMessage.
func Marshal(v any) ([]byte, error) {
	raw, err := stdjson.Marshal(v)
	if err != nil {
		return nil, err
	}
	return Encode(raw)
}

// MarshalRaw is encoding/json's Marshal without HTML escaping and without
// the encoder's trailing newline: the bytes a MarshalJSON method returns
// when the caller's encoder, not the method, should decide whether <, >
// and & are escaped. It is not canonical: fields keep their struct order.
func MarshalRaw(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := stdjson.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// writer writes a tree in canonical form.
type writer struct {
	f         func(string) string
	sensitive func(string) bool
	buf       []byte
}

// write writes root, depth first with a stack of its own.
func (w *writer) write(root *value) {
	type open struct {
		v    *value
		next int // the next item or member to write
	}
	var stack []open
	v := root
	for {
		if v != nil {
			if v.kind < kArray {
				w.scalar(v)
			} else {
				w.buf = append(w.buf, "[{"[v.kind-kArray])
				stack = append(stack, open{v: v})
			}
		}
		if len(stack) == 0 {
			return
		}
		top := &stack[len(stack)-1]
		if top.next == len(top.v.kids) {
			w.buf = append(w.buf, "]}"[top.v.kind-kArray])
			stack = stack[:len(stack)-1]
			v = nil
			continue
		}
		if top.next > 0 {
			w.buf = append(w.buf, ',')
		}
		v = &top.v.kids[top.next]
		top.next++
		if top.v.kind == kObject {
			w.buf = append(AppendString(w.buf, v.key), ':')
			if w.sensitive != nil && w.sensitive(v.key) {
				w.buf = AppendString(w.buf, Placeholder)
				v = nil
			}
		}
	}
}

func (w *writer) scalar(v *value) {
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
		w.buf = AppendString(w.buf, s)
	}
}

// appendNumber appends the canonical form of tok, a number token by JSON's
// grammar, as serde_json reads then writes it: an integer literal that fits
// in u64 (or i64, when negative) stays as it is; anything else (a fraction,
// an exponent, -0, an integer past 64 bits) is a double, written as ryu
// writes it. It reports false for a double out of range.
func appendNumber(dst []byte, tok string) ([]byte, bool) {
	if exactInteger(tok) {
		return append(dst, tok...), true
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
