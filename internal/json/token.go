package canon

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// str reads a string token and returns its text. Like serde_json it refuses
// raw control characters, unknown escapes and lone surrogates.
func (p *parser) str() (string, error) {
	p.pos++ // the opening quote
	start := p.pos
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '"':
			s := p.src[start:p.pos]
			p.pos++
			return s, nil
		case c == '\\':
			return p.escaped(start)
		case c < 0x20:
			return "", p.fail("control character in a string")
		}
		p.pos++
	}
	return "", p.fail("unterminated string")
}

// escaped finishes a string that has an escape, from start (just past the
// opening quote); the cursor is on the first backslash.
func (p *parser) escaped(start int) (string, error) {
	b := make([]byte, 0, p.pos-start+16)
	b = append(b, p.src[start:p.pos]...)
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(b), nil
		case c < 0x20:
			return "", p.fail("control character in a string")
		case c != '\\':
			b = append(b, c)
			p.pos++
			continue
		}
		if p.pos+1 >= len(p.src) {
			break
		}
		e := p.src[p.pos+1]
		p.pos += 2
		switch e {
		case '"', '\\', '/':
			b = append(b, e)
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
			r, err := p.unicode()
			if err != nil {
				return "", err
			}
			b = utf8.AppendRune(b, r)
		default:
			p.pos -= 2
			return "", p.fail("invalid escape")
		}
	}
	return "", p.fail("unterminated string")
}

// unicode reads the four hex digits after \u (and a second \uXXXX for a
// surrogate pair).
func (p *parser) unicode() (rune, error) {
	hi, ok := p.hex4()
	if !ok {
		return 0, p.fail("invalid \\u escape")
	}
	switch {
	case hi >= 0xDC00 && hi <= 0xDFFF:
		return 0, p.surrogate("lone trailing surrogate in a \\u escape")
	case hi < 0xD800 || hi > 0xDBFF:
		return hi, nil
	}
	if !strings.HasPrefix(p.src[p.pos:], `\u`) {
		return 0, p.surrogate("lone leading surrogate in a \\u escape")
	}
	p.pos += 2
	lo, ok := p.hex4()
	if !ok {
		return 0, p.fail("invalid \\u escape")
	}
	if lo < 0xDC00 || lo > 0xDFFF {
		return 0, p.surrogate("lone leading surrogate in a \\u escape")
	}
	return utf16.DecodeRune(hi, lo), nil
}

func (p *parser) hex4() (rune, bool) {
	if p.pos+4 > len(p.src) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(p.src[p.pos : p.pos+4]) {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	p.pos += 4
	return r, true
}

// number reads a number token by JSON's grammar and checks that it has a
// canonical form (a double out of range has none, as in serde_json).
func (p *parser) number() (string, error) {
	start := p.pos
	s := p.src
	i := p.pos
	if s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
		if i < len(s) && s[i] >= '0' && s[i] <= '9' {
			p.pos = i
			return "", p.fail("invalid number: leading zero")
		}
	case digits() == 0:
		p.pos = i
		return "", p.fail("invalid number")
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			p.pos = i
			return "", p.fail("invalid number: no digit after '.'")
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			p.pos = i
			return "", p.fail("invalid number: no digit in the exponent")
		}
	}
	p.pos = i
	tok := s[start:i]
	var ok bool
	if p.scratch, ok = appendNumber(p.scratch[:0], tok); !ok {
		p.pos = start
		return "", p.fail("number out of range")
	}
	return tok, nil
}

// surrogate is fail for a lone surrogate (ErrLoneSurrogate).
func (p *parser) surrogate(detail string) *Error {
	e := p.fail(detail)
	e.kind = ErrLoneSurrogate
	return e
}
