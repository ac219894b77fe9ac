// Package json is promptloom's one JSON reader and writer.
//
// Reading: Check and Scan validate a document in one pass, without
// recursion, at any depth up to MaxDepth: UTF-8, RFC 8259's grammar, no key
// given twice in any object (readers disagree on which copy wins), no
// number past float range (serde_json refuses one), no \u escape of half a
// surrogate pair (readers decode one differently). Options relax the last
// three for callers that read as encoding/json reads. A document that
// fails is an *Error naming the byte offset and the JSON path of its first
// fault. Iter (and Each) then walks the members of an object or the items
// of an array that passed, faster than a general parser: string ends are
// found with a vectorised search, and what Scan recorded is not found
// again.
//
// Writing: Encode and EncodeRedacted write Harn's canonical JSON (its
// canonical_json owner, which delegates to serde_json), the form Harn
// hashes and signs: object keys sorted by the bytes of their UTF-8
// encoding, at every depth; arrays in their own order; no insignificant
// white space; strings with serde_json's minimal escaping (the quote, the
// backslash and control characters, \b \t \n \f \r in their short forms and
// the rest as \u00xx in lower-case hex; "/", DEL, U+2028 and all other
// non-ASCII text raw); numbers as serde_json writes them: an integer that
// fits in 64 bits (u64, or i64 when negative) digit for digit, never
// through a double, and every other number as a double in ryu's shortest
// round-trip form (1.0, -0.0, 0.1, 1e20, 1.5e-7). EncodeRedacted is Harn's
// redact_json before it, with the caller's redaction hooks. Writer streams
// a document as encoding/json's Encoder writes it indented, one member or
// item at a time.
//
// It is imported as pjson, so that it reads apart from encoding/json where
// a file needs both.
package json

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// MaxDepth is the deepest nesting of arrays and objects accepted: the limit
// of encoding/json, so that every document this package reads, encoding/json
// reads too.
const MaxDepth = 10000

// Options say what Check, Scan and Each's callers accept beyond the
// strictest reading. The zero value (or nil) accepts none of it: the
// reading the canonical encoding needs, and the one for JSON whose every
// reader must agree (manifests, transcript lines).
type Options struct {
	// LoneSurrogates accepts a \u escape of half a UTF-16 surrogate pair,
	// as encoding/json does: a key holding one compares as encoding/json
	// decodes it (U+FFFD in its place).
	LoneSurrogates bool
	// DuplicateKeys accepts an object that gives a key twice, for a caller
	// that checks the keys it reads itself.
	DuplicateKeys bool
	// LargeNumbers accepts a number past the range of a double (1e999).
	LargeNumbers bool
}

// The kinds of fault. Every *Error matches ErrInvalid and one more kind.
var (
	ErrInvalid = errors.New("invalid JSON")
	// ErrInvalidUTF8: bytes that are not UTF-8, anywhere in the input.
	ErrInvalidUTF8 = errors.New("invalid UTF-8")
	// ErrSyntax: not JSON by RFC 8259's grammar, or nested deeper than
	// MaxDepth. Its Detail is encoding/json's wording for the same fault
	// ("invalid character '}' looking for beginning of value", "unexpected
	// end of JSON input"), so messages read as they did when encoding/json
	// judged the syntax.
	ErrSyntax = errors.New("syntax error")
	// ErrTrailing is matched, besides ErrSyntax, by data after the
	// top-level value (encoding/json's "after top-level value").
	ErrTrailing = errors.New("data after the top-level value")
	// ErrDuplicateKey: an object gives a key twice.
	ErrDuplicateKey = errors.New("duplicate key")
	// ErrRange: a number past the range of a double.
	ErrRange = errors.New("number out of range")
	// ErrLoneSurrogate: a \u escape of half a surrogate pair. Readers
	// decode one differently (U+FFFD, the lone half, or an error), and
	// canonical JSON has no spelling for it.
	ErrLoneSurrogate = errors.New("lone surrogate")
)

// Error is input that is not accepted: the first fault found. Bytes that
// are not UTF-8 are reported before anything else, wherever they are; then
// a syntax error, wherever it is; then the first of the other faults in the
// order of the document.
type Error struct {
	// Path is the JSON path of the offending value ("" for the top
	// level), e.g. actor_chain[0].role; a path more than 24 steps deep
	// keeps its first and last 12, with "…" between.
	Path string
	// Steps is the same path whole, a step per level.
	Steps []Step
	// Offset is where the fault is: the offending byte (for a repeated
	// key, its opening quote; for a number out of range, its first byte),
	// or the input's length for input that ends too soon.
	Offset int
	// Detail says what is wrong.
	Detail string
	// Value is the offending token as written: the repeated key (quotes
	// included) or the number out of range.
	Value string
	kind  error
}

// Step is one level of a JSON path: an object's member (Key) or an array's
// item (Index; -1 for a member).
type Step struct {
	Key   string
	Index int
}

func (e *Error) Error() string {
	if e.Path == "" {
		return ErrInvalid.Error() + ": " + e.Detail + " (byte " + strconv.Itoa(e.Offset) + ")"
	}
	return ErrInvalid.Error() + " at " + e.Path + ": " + e.Detail + " (byte " + strconv.Itoa(e.Offset) + ")"
}

// Is makes an Error match ErrInvalid and its kind (and ErrSyntax for
// ErrTrailing).
func (e *Error) Is(t error) bool {
	return t == ErrInvalid || t == e.kind || (t == ErrSyntax && e.kind == ErrTrailing)
}

// Scanned, when a test sets it, is called with every document Check and
// Scan read: the test counts how often one body is read. Nil otherwise.
var Scanned func(doc string)

// Check reports whether data is one JSON value that o accepts (nil: the
// strictest reading), as an *Error naming the first fault. data must not
// change during the call.
func Check(data []byte, o *Options) error { return checkInto(data, o, nil) }

// checkInto is Check, finding the root object's members into m when m is set.
func checkInto(data []byte, o *Options, m *Members) error {
	// Scanned here, not through scanDocument, whose Doc would move the
	// scanner to the heap: a stream's summary checks each of its events.
	s := unsafe.String(unsafe.SliceData(data), len(data))
	if Scanned != nil {
		Scanned(s)
	}
	p := scanner{s: s, members: m}
	if o != nil {
		p.opts = *o
	}
	defer p.giveBack(p.lend())
	if p.run(); p.err != nil {
		return p.resolve()
	}
	return nil
}

// Doc is what Scan learns of a document on the way through it.
type Doc struct {
	// Members are the root object's members in the order given (nil when
	// the root is not an object): a caller reads the top level from here
	// without walking the document again to find where each value ends.
	Members []Member
	// Escaped are the offsets of the strings, keys and values, that hold
	// an escape, in order: a string at any other offset reads as it
	// stands between its quotes.
	Escaped []int
}

// Member is one member of a document's root object.
type Member struct {
	// Key is the member's key, decoded (a slice of the document when it
	// has no escape).
	Key string
	// Start and End are where the member's value lies in the document.
	Start, End int
	// Items is the number of items of a value that is an array.
	Items int
	// Ends are, for a value that is an array, where each of its items that
	// is an array or an object ends, in order (offsets in the document):
	// Iter walks the array without finding them again. (Four bytes an
	// item, and only for such items, so a list of a million bare zeros
	// costs nothing; documents over 2 GiB record none.)
	Ends []int32
}

// Iter returns an Iter over the member's value, s[m.Start:m.End], that
// takes the ends of its container items from m.Ends.
func (m *Member) Iter(s string) Iter {
	it := NewIter(s[m.Start:m.End])
	it.ends, it.base = m.Ends, m.Start
	return it
}

// Scan checks s as Check does, and returns what it learned on the way.
func Scan(s string, o *Options) (*Doc, error) {
	return scanDocument(s, o, true)
}

// HasEscape reports whether the string at offset at holds an escape.
func (d *Doc) HasEscape(at int) bool {
	_, found := slices.BinarySearch(d.Escaped, at)
	return found
}

// InvalidUTF8 returns the offset of the first byte of b that is not part of
// a UTF-8 sequence, or -1.
func InvalidUTF8(b []byte) int {
	return invalidUTF8(unsafe.String(unsafe.SliceData(b), len(b)))
}

func invalidUTF8(s string) int {
	if utf8.ValidString(s) {
		return -1
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// pathString writes steps as Error.Path shows them.
func pathString(steps []Step) string {
	var b strings.Builder
	for i, s := range steps {
		// a path thousands of levels deep is cut to its ends
		if n := len(steps); n > 24 && i >= 12 && i < n-12 {
			if i == 12 {
				b.WriteString("…")
			}
			continue
		}
		if s.Index >= 0 {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.Index))
			b.WriteByte(']')
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.Key)
	}
	return b.String()
}

// quoteChar is encoding/json's spelling of a byte in a syntax error.
func quoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}
