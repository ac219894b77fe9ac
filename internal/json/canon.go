// Package canon writes JSON in Harn's canonical form, the one Harn hashes
// and signs (its canonical_json owner, which delegates to serde_json): object
// keys sorted by the bytes of their UTF-8 encoding, at every depth; arrays in
// their own order; no insignificant white space; strings with serde_json's
// minimal escaping (the quote, the backslash and control characters, \b \t
// \n \f \r in their short forms and the rest as \u00xx in lower-case hex;
// "/", DEL, U+2028 and all other non-ASCII text raw); numbers as serde_json
// writes them: an integer that fits in 64 bits (u64, or i64 when negative)
// digit for digit, never through a double, and every other number as a
// double in ryu's shortest round-trip form (1.0, -0.0, 0.1, 1e20, 1.5e-7).
//
// Input is read as serde_json reads it, with one difference: an object with
// a repeated key is an error (serde_json keeps the last copy, other readers
// the first; a content hash must not depend on which). Errors are *Error,
// matching ErrInvalid and naming the JSON path and byte offset.
//
// The cost is linear in the input (plus sorting each object's keys) at any
// accepted depth: the input is parsed once into a tree and the tree written
// once.
package canon

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of arrays and objects accepted, the limit
// of encoding/json and of promptloom's options reader.
const MaxDepth = 10000

// ErrInvalid is matched by every error of this package: input that is not
// one valid JSON value, or has an object with a repeated key.
var ErrInvalid = errors.New("canon: invalid JSON")

// ErrDuplicateKey is matched (besides ErrInvalid) by an object with a key
// given twice.
var ErrDuplicateKey = errors.New("duplicate key")

// ErrLoneSurrogate is matched (besides ErrInvalid) by a \u escape of half
// a UTF-16 surrogate pair: readers decode one differently (U+FFFD, the lone
// half, or an error), and canonical JSON has no spelling for it.
var ErrLoneSurrogate = errors.New("lone surrogate")

// Error is input that cannot be written canonically.
type Error struct {
	// Path is the JSON path of the offending value ("" for the top level),
	// e.g. `actor_chain[0].role`.
	Path string
	// Offset is the byte offset in the input where the problem was found.
	Offset int
	// Detail says what is wrong.
	Detail string
	kind   error // ErrDuplicateKey, ErrLoneSurrogate or nil
}

func (e *Error) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("%s: %s (byte %d)", ErrInvalid, e.Detail, e.Offset)
	}
	return fmt.Sprintf("%s at %s: %s (byte %d)", ErrInvalid, e.Path, e.Detail, e.Offset)
}

// Is makes an Error match ErrInvalid, and ErrDuplicateKey or
// ErrLoneSurrogate when that is what is wrong.
func (e *Error) Is(t error) bool { return t == ErrInvalid || e.kind != nil && t == e.kind }

// Check reports whether raw can be written canonically, without writing
// it: one JSON value, UTF-8, no key twice in an object, no lone surrogate,
// numbers within range, nested at most MaxDepth deep. The error is an
// *Error naming the path and offset.
func Check(raw []byte) error {
	_, err := parse(raw)
	return err
}

// Encode returns the canonical encoding of raw, a JSON document.
func Encode(raw []byte) ([]byte, error) {
	return EncodeRedacted(raw, nil, nil)
}

// EncodeRedacted is Harn's redact_json followed by its canonical encoding
// (stable_redacted_json_hash hashes these bytes): the value of every object
// member whose key sensitive reports (whatever its type) becomes the string
// Placeholder, and every other string value passes through f. Object keys
// are never changed. A nil f or sensitive does nothing.
func EncodeRedacted(raw []byte, f func(string) string, sensitive func(key string) bool) ([]byte, error) {
	v, err := parse(raw)
	if err != nil {
		return nil, err
	}
	w := writer{f: f, sensitive: sensitive, buf: make([]byte, 0, len(raw))}
	w.value(&v)
	return w.buf, nil
}

// Marshal encodes v with encoding/json and returns its canonical form.
// encoding/json writes a float64 that is a whole number without a fraction
// (1.0 as 1), which then reads as an integer: values whose floats must keep
// Harn's form should be given as json.RawMessage.
func Marshal(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return Encode(raw)
}

// InvalidUTF8 returns the offset of the first byte of b that is not part of
// a UTF-8 sequence, or -1: readers of JSON written by others check it first,
// to name the offset (JSON parsers replace bad bytes silently).
func InvalidUTF8(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// AppendString appends s to dst as serde_json writes a string: only the
// quote, the backslash and control characters are escaped (\b \t \n \f \r
// in their short forms, the rest as \u00xx with lower-case hex).
func AppendString(dst []byte, s string) []byte { return appendString(dst, s) }

// MarshalRaw is encoding/json's Marshal without HTML escaping and without
// the encoder's trailing newline: the bytes a MarshalJSON method returns
// when the caller's encoder, not the method, should decide whether <, >
// and & are escaped. It is not canonical: fields keep their struct order.
func MarshalRaw(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
