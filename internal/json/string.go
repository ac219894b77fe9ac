package json

import (
	"encoding/binary"
	"math/bits"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// str reads a string token, the cursor on its opening quote, and reports
// whether it holds an escape. Strings are nearly all of most documents, so
// they are read a run at a time: a short run eight bytes at a time
// (nextSpecial), a long one with a vectorised search for the closing quote
// and for a backslash, then control characters eight bytes at a time; UTF-8
// is checked by utf8.ValidString, only for a run that is not all ASCII.
func (p *scanner) str() (escaped, ok bool) {
	s := p.s
	p.i++ // the opening quote
	for {
		var q, bs int
		run := s[p.i:]
		if j, high, found := nextSpecial(s, p.i); found {
			// A short run: it ends at j.
			run = s[p.i:j]
			if high && !p.checkRun(run) {
				return escaped, false
			}
			q, bs = -1, -1
			switch s[j] {
			case '"':
				q = j - p.i
			case '\\':
				bs = j - p.i
			default:
				p.i = j
				p.syntax(s[j], "in string literal")
				return escaped, false
			}
		} else {
			q = strings.IndexByte(run, '"')
			if q >= 0 {
				run = run[:q]
			}
			bs = strings.IndexByte(run, '\\')
			if bs >= 0 {
				run = run[:bs]
			}
			if !plainRun(run) && !p.checkRun(run) {
				return escaped, false
			}
		}
		switch {
		case bs >= 0:
			escaped = true
			p.i += bs
			if !p.escape() {
				return escaped, false
			}
		case q < 0:
			p.i = len(s)
			p.endOfInput()
			return escaped, false
		default:
			p.i += q + 1
			return escaped, true
		}
	}
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// nextSpecial looks at the 32 bytes from s[i] for a quote, a backslash or a
// control character, eight at a time: it returns the first one's offset
// and whether a byte before it is not ASCII, or found false for a run that
// goes on past them (or to the end). In x, a byte below 0x20 sets its high
// bit in x-0x20..20 &^ x, and a byte equal to c in (x^c..c)-0x01..01 &^
// (x^c..c); the lowest bit set is the first such byte (a borrow only ever
// reaches the bytes above it).
func nextSpecial(s string, i int) (j int, high, found bool) {
	var seen uint64
	for end := i + 32; i+8 <= len(s) && i < end; i += 8 {
		x := binary.LittleEndian.Uint64([]byte(s[i : i+8]))
		q := x ^ 0x2222222222222222 // '"'
		b := x ^ 0x5C5C5C5C5C5C5C5C // '\\'
		if m := ((x-0x20*ones)&^x | (q-ones)&^q | (b-ones)&^b) & highs; m != 0 {
			k := bits.TrailingZeros64(m) / 8
			seen |= x & (1<<(8*k) - 1)
			return i + k, seen&highs != 0, true
		}
		seen |= x
	}
	return i, false, false
}

// plainRun reports whether a run of string bytes (no quote, no backslash)
// holds no control character and is UTF-8.
func plainRun(run string) bool {
	i := 0
	var high uint64 // the high bits seen: none means ASCII, UTF-8 already
	for ; i+8 <= len(run); i += 8 {
		// A byte below 0x20 has its high bit set in x-0x20..20 and clear
		// in x; bytes of 0x80 and up are cleared by ^x.
		x := binary.LittleEndian.Uint64([]byte(run[i : i+8]))
		if (x-0x2020202020202020)&^x&0x8080808080808080 != 0 {
			return false
		}
		high |= x
	}
	for ; i < len(run); i++ {
		if run[i] < 0x20 {
			return false
		}
		high |= uint64(run[i])
	}
	return high&0x8080808080808080 == 0 || utf8.ValidString(run)
}

// checkRun finds what plainRun refused in run, which starts at the
// cursor: bytes that are not UTF-8 (which resolve locates) or a control
// character (a syntax error, at its byte). It reports whether the run is
// acceptable after all: bytes that are not UTF-8 are, to the grammar alone.
func (p *scanner) checkRun(run string) bool {
	if !p.syntaxOnly && !utf8.ValidString(run) {
		p.fault(ErrInvalidUTF8, p.i, "invalid UTF-8")
		return false
	}
	for j := 0; j < len(run); j++ {
		if run[j] < 0x20 {
			p.i += j
			p.syntax(run[j], "in string literal")
			return false
		}
	}
	return true
}

// escape reads one escape, the cursor on its backslash.
func (p *scanner) escape() bool {
	p.i++
	if p.i >= len(p.s) {
		p.syntax(' ', "in string escape code")
		return false
	}
	switch c := p.s[p.i]; c {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		p.i++
		return true
	case 'u':
		p.i++
	default:
		p.syntax(c, "in string escape code")
		return false
	}
	r, ok := p.hex4()
	if !ok {
		return false
	}
	if p.syntaxOnly || p.opts.LoneSurrogates {
		return true
	}
	// A surrogate must be the first half of a pair, the second half its
	// own \u escape next.
	switch {
	case r >= 0xDC00 && r <= 0xDFFF:
		p.fault(ErrLoneSurrogate, p.i, "lone trailing surrogate in a \\u escape")
		return false
	case r < 0xD800 || r > 0xDBFF:
		return true
	}
	if !strings.HasPrefix(p.s[p.i:], `\u`) {
		p.fault(ErrLoneSurrogate, p.i, "lone leading surrogate in a \\u escape")
		return false
	}
	p.i += 2
	lo, ok := p.hex4()
	if !ok {
		return false
	}
	if lo < 0xDC00 || lo > 0xDFFF {
		p.fault(ErrLoneSurrogate, p.i, "lone leading surrogate in a \\u escape")
		return false
	}
	return true
}

// hex4 reads the four hex digits of a \u escape.
func (p *scanner) hex4() (rune, bool) {
	var r rune
	for range 4 {
		if p.i >= len(p.s) {
			p.syntax(' ', "in \\u hexadecimal character escape")
			return 0, false
		}
		d, ok := unhex(p.s[p.i])
		if !ok {
			p.syntax(p.s[p.i], "in \\u hexadecimal character escape")
			return 0, false
		}
		r = r<<4 | d
		p.i++
	}
	return r, true
}

func unhex(c byte) (rune, bool) {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0'), true
	case c >= 'a' && c <= 'f':
		return rune(c - 'a' + 10), true
	case c >= 'A' && c <= 'F':
		return rune(c - 'A' + 10), true
	}
	return 0, false
}

// Unquote returns the text of tok, a string token that Check accepted
// (quotes included), its escapes decoded as encoding/json decodes them (half
// a surrogate pair becomes U+FFFD).
func Unquote(tok string) string {
	if strings.IndexByte(tok, '\\') < 0 {
		return tok[1 : len(tok)-1]
	}
	return unquote(tok)
}

// unquote decodes a well-formed string token that has an escape. Half a
// surrogate pair (where LoneSurrogates let one through) becomes U+FFFD, as
// encoding/json has it; a half followed by an escape that does not
// complete it leaves that escape to be read on its own.
func unquote(tok string) string {
	s := tok[1 : len(tok)-1]
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			j := i + 1
			for j < len(s) && s[j] != '\\' {
				j++
			}
			b = append(b, s[i:j]...)
			i = j
			continue
		}
		e := s[i+1]
		i += 2
		switch e {
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r := hexAt(s, i)
			i += 4
			if utf16.IsSurrogate(r) {
				if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					if d := utf16.DecodeRune(r, hexAt(s, i+2)); d != utf8.RuneError {
						r = d
						i += 6
						b = utf8.AppendRune(b, r)
						break
					}
				}
				r = utf8.RuneError
			}
			b = utf8.AppendRune(b, r)
		default: // '"', '\\', '/'
			b = append(b, e)
		}
	}
	return string(b)
}

// hexAt reads four hex digits known to be there.
func hexAt(s string, i int) rune {
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		d, _ := unhex(c)
		r = r<<4 | d
	}
	return r
}

// AppendString appends s to dst as serde_json writes a string (the
// canonical form): only the quote, the backslash and control characters are
// escaped (\b \t \n \f \r in their short forms, the rest as \u00xx with
// lower-case hex); everything else, invalid UTF-8 included, is copied.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := plainRun8(s, 0); i < len(s); i = plainRun8(s, i+1) {
		dst = appendEscape(append(dst, s[start:i]...), s[i])
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// plainRun8 returns the offset of the first quote, backslash or control
// character at or after s[i], eight bytes at a time (len(s) when there is
// none).
func plainRun8(s string, i int) int {
	for ; i+8 <= len(s); i += 8 {
		x := binary.LittleEndian.Uint64([]byte(s[i : i+8]))
		q := x ^ 0x2222222222222222  // '"'
		bs := x ^ 0x5C5C5C5C5C5C5C5C // '\\'
		if m := ((x-0x20*ones)&^x | (q-ones)&^q | (bs-ones)&^bs) & highs; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			return i
		}
	}
	return i
}

// AppendStdString appends s to dst as encoding/json writes a string with
// HTML escaping off: as AppendString, and besides U+2028 and U+2029
// escaped and each byte that is not part of UTF-8 written as \ufffd.
func AppendStdString(dst []byte, s string) []byte {
	return append(appendStdEscaped(append(dst, '"'), s), '"')
}

// appendStdEscaped is AppendStdString without the quotes. Runs of plain
// ASCII, most of any prompt, are passed over eight bytes at a time.
func appendStdEscaped(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		i = plainASCII(s, i)
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			b = appendEscape(append(b, s[start:i]...), c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', byte('0'+r&0xF))
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(b, s[start:]...)
}

// plainASCII returns the offset of the first byte at or after s[i] that
// encoding/json does not copy as it is: a quote, a backslash, a control
// character or a byte that is not ASCII (len(s) when there is none).
func plainASCII(s string, i int) int {
	for ; i+8 <= len(s); i += 8 {
		x := binary.LittleEndian.Uint64([]byte(s[i : i+8]))
		q := x ^ 0x2222222222222222  // '"'
		bs := x ^ 0x5C5C5C5C5C5C5C5C // '\\'
		if m := ((x-0x20*ones)&^x | (q-ones)&^q | (bs-ones)&^bs | x) & highs; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return i
		}
	}
	return i
}

// appendEscape appends the JSON escape of c, a byte that cannot stand in a
// string as itself: a quote, a backslash or a control byte. serde_json and
// encoding/json write these alike: a backslash before a quote or a
// backslash, \b \f \n \r \t by name, \u00XX (lower-case hex) for the rest.
func appendEscape(dst []byte, c byte) []byte {
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
