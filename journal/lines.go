package journal

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// MaxLineBytes is the longest transcript line Open and Verify read. A line
// past it is a *LineTooLongError: it is never held in memory whole.
var MaxLineBytes = 64 << 20

// LineTooLongError is a transcript line longer than MaxLineBytes.
type LineTooLongError struct {
	Line  int // from 1
	Limit int
}

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("journal: line %d is longer than %d bytes", e.Line, e.Limit)
}

// DuplicateKeyError is a JSON object in a transcript line with a key twice:
// readers disagree on which one counts (the first, or the last), so a line
// holding one proves nothing.
type DuplicateKeyError struct {
	Line int    // from 1; 0 when not known
	Path string // the repeated key, as a dotted path from the line's root
}

func (e *DuplicateKeyError) Error() string {
	return fmt.Sprintf("line %d: %s", e.Line, e.detail())
}

func (e *DuplicateKeyError) detail() string { return "duplicate JSON key " + e.Path }

// lineReader reads a transcript a line at a time, capping each line.
type lineReader struct {
	r    *bufio.Reader
	n    int // lines read
	buf  []byte
	torn bool // the last line read had no final newline
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next line without its newline; io.EOF after the last.
// The slice is valid until the next call.
func (lr *lineReader) next() ([]byte, error) {
	lr.buf = lr.buf[:0]
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if len(lr.buf)+len(chunk) > MaxLineBytes+1 {
			lr.n++
			return nil, &LineTooLongError{Line: lr.n, Limit: MaxLineBytes}
		}
		lr.buf = append(lr.buf, chunk...)
		switch {
		case err == nil:
			lr.n++
			lr.torn = false
			return lr.buf[:len(lr.buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(lr.buf) == 0 {
				return nil, io.EOF
			}
			lr.n++
			lr.torn = true
			return lr.buf, nil
		default:
			return nil, fmt.Errorf("journal: read: %w", err)
		}
	}
}

// duplicateKey returns the dotted path of the first key repeated within one
// object of line, which must be valid JSON. It walks the bytes with an
// explicit stack (no recursion, so nesting depth cannot overflow it) and
// compares keys after decoding their escapes ("a" and "\u0061" are one key).
func duplicateKey(line []byte) (string, bool) {
	type frame struct {
		object bool
		keys   map[string]struct{}
		key    string // the object key or array index leading here
		index  int
	}
	var stack []frame
	path := func(last string) string {
		var b strings.Builder
		for _, f := range stack[1:] {
			b.WriteString(f.key)
			b.WriteByte('.')
		}
		b.WriteString(last)
		return b.String()
	}
	expectKey := false
	pending := "" // the key (or index) of the next value
	for i := 0; i < len(line); i++ {
		switch c := line[i]; c {
		case '{', '[':
			stack = append(stack, frame{object: c == '{', key: pending})
			expectKey = c == '{'
			if c == '[' {
				pending = "0"
			}
		case '}', ']':
			stack = stack[:len(stack)-1]
			expectKey = false
		case ',':
			if top := &stack[len(stack)-1]; top.object {
				expectKey = true
			} else {
				top.index++
				pending = strconv.Itoa(top.index)
			}
		case '"':
			end := i + 1
			escaped := false
			for ; end < len(line); end++ {
				if line[end] == '\\' {
					escaped = true
					end++
					continue
				}
				if line[end] == '"' {
					break
				}
			}
			if expectKey {
				key := string(line[i+1 : end])
				if escaped {
					key = unescape(line[i+1 : end])
				}
				top := &stack[len(stack)-1]
				if top.keys == nil {
					top.keys = map[string]struct{}{}
				}
				if _, dup := top.keys[key]; dup {
					return path(key), true
				}
				top.keys[key] = struct{}{}
				pending = key
				expectKey = false
			}
			i = end
		}
	}
	return "", false
}

// unescape decodes a JSON string body known to be valid.
func unescape(s []byte) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r := rune(hex4(s[i+1 : i+5]))
			i += 4
			if utf16.IsSurrogate(r) && i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
				if r2 := rune(hex4(s[i+3 : i+7])); utf16.DecodeRune(r, r2) != utf8.RuneError {
					r = utf16.DecodeRune(r, r2)
					i += 6
				}
			}
			b.WriteRune(r)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func hex4(s []byte) int {
	n, _ := strconv.ParseUint(string(s), 16, 32)
	return int(n)
}

// trimSpace reports whether a line is blank.
func blank(line []byte) bool { return len(bytes.TrimSpace(line)) == 0 }

// loneSurrogate reports whether a line, which must be valid JSON, holds a
// \u escape of a UTF-16 surrogate that is not half of a pair: readers
// decode one differently (U+FFFD, a lone surrogate, or an error), so a line
// holding one can say two things, as a duplicate key can.
func loneSurrogate(line []byte) bool {
	inString := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '"':
			inString = !inString
		case !inString || c != '\\':
		case line[i+1] != 'u':
			i++ // a one-letter escape: skip its letter (it may be a quote or a backslash)
		default:
			r := rune(hex4(line[i+2 : i+6]))
			i += 5
			switch {
			case r >= 0xdc00 && r <= 0xdfff:
				return true // a low half first
			case r >= 0xd800 && r <= 0xdbff:
				if i+6 >= len(line) || line[i+1] != '\\' || line[i+2] != 'u' {
					return true
				}
				if r2 := rune(hex4(line[i+3 : i+7])); r2 < 0xdc00 || r2 > 0xdfff {
					return true
				}
				i += 6
			}
		}
	}
	return false
}

// intField reads a field that must be a JSON integer written as writers
// write one: digits only, no sign, fraction or exponent ("4", never "4.0",
// "4e0" or "\"4\""), fitting in an int64. Readers disagree on what 4.9 or
// 1e30 mean as a count, so the verifier accepts one spelling.
func intField(r gjson.Result) (int64, bool) {
	if r.Type != gjson.Number || r.Raw == "" || len(r.Raw) > 18 {
		return 0, false
	}
	if r.Raw[0] == '0' && len(r.Raw) > 1 {
		return 0, false
	}
	for i := 0; i < len(r.Raw); i++ {
		if r.Raw[i] < '0' || r.Raw[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(r.Raw, 10, 64)
	return n, err == nil
}
