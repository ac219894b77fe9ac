package url

import "strings"

// ParseForm is the url crate's form_urlencoded::parse: pairs split on '&'
// (empty ones skipped), name and value split at the first '=', '+' read as
// a space, percent escapes decoded, and invalid UTF-8 replaced as Rust's
// from_utf8_lossy does.
func ParseForm(q string) [][2]string {
	var pairs [][2]string
	for _, part := range strings.Split(q, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		pairs = append(pairs, [2]string{formDecode(k), formDecode(v)})
	}
	return pairs
}

func formDecode(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '+':
			b = append(b, ' ')
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		default:
			b = append(b, c)
		}
	}
	return lossyUTF8(b)
}

// SerializeForm is the url crate's form_urlencoded serialiser: bytes of
// [A-Za-z0-9*-._] as they are, space as '+', every other byte %XX in upper
// case; pairs as name=value joined by '&'.
func SerializeForm(pairs [][2]string) string {
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte('&')
		}
		formEncode(&b, p[0])
		b.WriteByte('=')
		formEncode(&b, p[1])
	}
	return b.String()
}

func formEncode(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '*' || c == '-' || c == '.' || c == '_':
			b.WriteByte(c)
		case c == ' ':
			b.WriteByte('+')
		default:
			writeEscape(b, c)
		}
	}
}

const upperHex = "0123456789ABCDEF"

func writeEscape(b *strings.Builder, c byte) {
	b.WriteByte('%')
	b.WriteByte(upperHex[c>>4])
	b.WriteByte(upperHex[c&15])
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// lossyUTF8 is Rust's String::from_utf8_lossy: each maximal ill-formed
// subsequence (Unicode's "maximal subpart") becomes one U+FFFD.
func lossyUTF8(b []byte) string {
	var out strings.Builder
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x80 {
			out.WriteByte(c)
			i++
			continue
		}
		n, lo, hi := 0, byte(0x80), byte(0xBF)
		switch {
		case 0xC2 <= c && c <= 0xDF:
			n = 2
		case c == 0xE0:
			n, lo = 3, 0xA0
		case 0xE1 <= c && c <= 0xEC || c == 0xEE || c == 0xEF:
			n = 3
		case c == 0xED:
			n, hi = 3, 0x9F
		case c == 0xF0:
			n, lo = 4, 0x90
		case 0xF1 <= c && c <= 0xF3:
			n = 4
		case c == 0xF4:
			n, hi = 4, 0x8F
		}
		if n == 0 {
			out.WriteString("\uFFFD")
			i++
			continue
		}
		j := i + 1
		for k := 1; k < n && j < len(b); k++ {
			if k == 1 && (b[j] < lo || b[j] > hi) || k > 1 && (b[j] < 0x80 || b[j] > 0xBF) {
				break
			}
			j++
		}
		if j-i == n {
			out.Write(b[i:j])
		} else {
			out.WriteString("\uFFFD")
		}
		i = j
	}
	return out.String()
}
