// Package digest names prompt content by BLAKE3, written "blake3:<hex>".
//
// Of hashes text after redaction, so a digest never confirms a guessed
// secret; Bytes hashes bytes as they are, for content hashes of encodings
// that were redacted already. Both return a Digest, a comparable array that
// is formatted only when it is printed.
package digest

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/promptloom/promptloom/harn/redact"

	"github.com/zeebo/blake3"
)

// prefix starts every digest's text form.
const prefix = "blake3:"

// Digest is a BLAKE3-256 sum.
type Digest [32]byte

// ErrMalformed is returned by Parse for text that is not blake3:<64 hex>.
var ErrMalformed = errors.New("malformed digest")

// Of returns the digest of s after redaction: BLAKE3 of redact.String(s),
// which is Harn's stable_redacted_string_hash (crates/harn-vm/src/llm/
// content_hash.rs) for the default redaction policy. Segment digests and the
// whole-prompt digest are both Of their text.
func Of(s string) Digest {
	return String(redact.String(s))
}

// String returns the digest of s as it is, without redaction. Use it only on
// text that was redacted already.
//
// The hash is zeebo/blake3's: its assembly is fast on the sizes a prompt
// is made of (a fragment, a transcript line) and hashes on the calling
// goroutine, where lukechampine.com/blake3, the tests' reference, takes a
// generic path below 8 KiB and spawns goroutines above it.
func String(s string) Digest {
	return blake3.Sum256(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// Bytes returns the digest of b as it is, without redaction.
func Bytes(b []byte) Digest {
	return blake3.Sum256(b)
}

// textLen is the length of a digest's text form.
const textLen = len(prefix) + 64

// String formats d as blake3:<lowercase hex>.
func (d Digest) String() string {
	var buf [textLen]byte
	return string(d.appendText(buf[:0]))
}

// appendText appends d's text form to b.
func (d Digest) appendText(b []byte) []byte {
	b = append(b, prefix...)
	n := len(b)
	b = append(b, make([]byte, 64)...)
	hex.Encode(b[n:], d[:])
	return b
}

// MarshalText implements encoding.TextMarshaler.
func (d Digest) MarshalText() ([]byte, error) {
	return d.appendText(make([]byte, 0, textLen)), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Digest) UnmarshalText(text []byte) error {
	p, err := Parse(string(text))
	if err != nil {
		return err
	}
	*d = p
	return nil
}

// Parse reads blake3:<64 lowercase hex digits>.
func Parse(s string) (Digest, error) {
	var d Digest
	h, ok := strings.CutPrefix(s, prefix)
	if !ok || len(h) != 64 {
		return d, fmt.Errorf("%w: %q", ErrMalformed, s)
	}
	var bad byte
	for i := range d {
		hi, lo := nibbles[h[2*i]], nibbles[h[2*i+1]]
		bad |= hi | lo
		d[i] = hi<<4 | lo&0xf
	}
	if bad > 0xf {
		return Digest{}, fmt.Errorf("%w: %q", ErrMalformed, s)
	}
	return d, nil
}

// nibbles holds the value of each lowercase hex digit, and 0xff for any
// other byte: the text form has one spelling, so an uppercase digest is not
// the same name. A verifier reads several digests for every call it
// checks, so this is a table, not a branch.
var nibbles = func() (t [256]byte) {
	for c := range t {
		switch {
		case '0' <= c && c <= '9':
			t[c] = byte(c - '0')
		case 'a' <= c && c <= 'f':
			t[c] = byte(c - 'a' + 10)
		default:
			t[c] = 0xff
		}
	}
	return t
}()
