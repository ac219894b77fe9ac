// Package url is the part of the Rust url crate (WHATWG URL parsing and
// serialisation) that Harn's redact_url relies on: http and https URLs
// parsed and written back as the crate writes them, and its
// application/x-www-form-urlencoded query parser and serialiser. It is a
// port, byte for byte, of what the crate does for such URLs; hosts the
// crate sends through IDNA are refused instead (see Parse).
package url

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// URL is an http or https URL as the Rust url crate (WHATWG URL parsing)
// holds it, enough to write it back as the crate does. Userinfo is only
// noted: Harn's redact_url always removes it.
type URL struct {
	Scheme string
	// Userinfo is set for a non-empty username or password.
	Userinfo bool
	Host     string
	// Port is "" for none or the scheme's default.
	Port string
	// Path is the path's segments, percent-encoded, dot segments resolved.
	Path []string
	// Query is the query, percent-encoded; HasQuery is set when there is
	// a '?', even with nothing after it.
	Query    string
	HasQuery bool
	// Fragment is the fragment, percent-encoded; HasFragment is set when
	// there is a '#'.
	Fragment    string
	HasFragment bool
}

// String writes u back as the url crate serialises it (without userinfo).
func (u *URL) String() string {
	var b strings.Builder
	b.WriteString(u.Scheme)
	b.WriteString("://")
	b.WriteString(u.Host)
	if u.Port != "" {
		b.WriteByte(':')
		b.WriteString(u.Port)
	}
	for _, seg := range u.Path {
		b.WriteByte('/')
		b.WriteString(seg)
	}
	if u.HasQuery {
		b.WriteByte('?')
		b.WriteString(u.Query)
	}
	if u.HasFragment {
		b.WriteByte('#')
		b.WriteString(u.Fragment)
	}
	return b.String()
}

// Percent-encode sets of the url crate (C0 controls and DEL are in all).
const (
	fragmentSet = " \"<>`"
	pathSet     = fragmentSet + "#?{}"
	queryBytes  = " \"#<>'" // the special-scheme query set
)

func encodeInto(b *strings.Builder, s, set string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || strings.IndexByte(set, c) >= 0 {
			writeEscape(b, c)
		} else {
			b.WriteByte(c)
		}
	}
}

func encode(s, set string) string {
	var b strings.Builder
	encodeInto(&b, s, set)
	return b.String()
}

// Parse parses s, which starts with http:// or https:// and holds no white
// space, as the url crate does; false when the crate would fail, or for a
// host this package does not reproduce: one that holds a non-ASCII
// character (after percent-decoding) or a label starting "xn--", which the
// crate passes through IDNA processing.
func Parse(s string) (*URL, bool) {
	// Leading and trailing C0 controls and spaces are trimmed.
	s = strings.TrimRight(s, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"+
		"\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ")
	u := &URL{}
	colon := strings.IndexByte(s, ':')
	u.Scheme = s[:colon]
	rest := strings.TrimLeft(s[colon+1:], `/\`)

	// The authority runs to the first '/', '\', '?' or '#'; the userinfo is
	// what stands before its last '@'.
	authEnd := strings.IndexAny(rest, `/\?#`)
	if authEnd < 0 {
		authEnd = len(rest)
	}
	auth := rest[:authEnd]
	rest = rest[authEnd:]
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		user, pass, _ := strings.Cut(auth[:at], ":")
		u.Userinfo = user != "" || pass != ""
		auth = auth[at+1:]
	}
	hostText, portText, ok := splitHostPort(auth)
	if !ok || hostText == "" {
		return nil, false
	}
	if u.Host, ok = parseHost(hostText); !ok {
		return nil, false
	}
	if u.Port, ok = parsePort(portText, u.Scheme); !ok {
		return nil, false
	}

	pathText := rest
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		pathText, rest = rest[:i], rest[i:]
	} else {
		rest = ""
	}
	u.Path = parsePath(pathText)
	if strings.HasPrefix(rest, "?") {
		q := rest[1:]
		rest = ""
		if i := strings.IndexByte(q, '#'); i >= 0 {
			q, rest = q[:i], q[i:]
		}
		u.Query, u.HasQuery = encode(q, queryBytes), true
	}
	if strings.HasPrefix(rest, "#") {
		u.Fragment, u.HasFragment = encode(rest[1:], fragmentSet), true
	}
	return u, true
}

// splitHostPort cuts the host at the first ':' outside square brackets.
func splitHostPort(auth string) (host, port string, ok bool) {
	inBrackets := false
	for i := 0; i < len(auth); i++ {
		switch auth[i] {
		case '[':
			inBrackets = true
		case ']':
			inBrackets = false
		case ':':
			if !inBrackets {
				return auth[:i], auth[i+1:], true
			}
		}
	}
	return auth, "", true
}

// parsePort reads the port: digits only, at most 65535; the scheme's
// default port is dropped.
func parsePort(p, scheme string) (string, bool) {
	if p == "" {
		return "", true
	}
	n := 0
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return "", false
		}
		n = n*10 + int(p[i]-'0')
		if n > 65535 {
			return "", false
		}
	}
	if scheme == "http" && n == 80 || scheme == "https" && n == 443 {
		return "", true
	}
	return strconv.Itoa(n), true
}

// parsePath splits the path on '/' and '\', percent-encodes each segment,
// and resolves "." and ".." segments (also spelt with %2e); an empty path
// is "/".
func parsePath(p string) []string {
	if p != "" {
		p = p[1:] // the leading slash
	}
	var path []string
	start := 0
	for i := 0; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' && p[i] != '\\' {
			continue
		}
		buf := encode(p[start:i], pathSet)
		last := i == len(p)
		switch {
		case isDoubleDot(buf):
			if len(path) > 0 {
				path = path[:len(path)-1]
			}
			if last {
				path = append(path, "")
			}
		case isSingleDot(buf):
			if last {
				path = append(path, "")
			}
		default:
			path = append(path, buf)
		}
		start = i + 1
	}
	return path
}

func isSingleDot(s string) bool { return s == "." || strings.EqualFold(s, "%2e") }

func isDoubleDot(s string) bool {
	switch strings.ToLower(s) {
	case "..", ".%2e", "%2e.", "%2e%2e":
		return true
	}
	return false
}

// parseHost is the url crate's host parser for special schemes: an IPv6
// address in brackets, or a domain: percent-decoded, lowercased, checked
// for forbidden characters, and read as an IPv4 address when its last label
// is a number.
func parseHost(h string) (string, bool) {
	if strings.HasPrefix(h, "[") {
		if !strings.HasSuffix(h, "]") {
			return "", false
		}
		a, ok := parseIPv6(h[1 : len(h)-1])
		if !ok {
			return "", false
		}
		return "[" + formatIPv6(a) + "]", true
	}
	var b []byte
	for i := 0; i < len(h); i++ {
		if h[i] == '%' && i+2 < len(h) && isHex(h[i+1]) && isHex(h[i+2]) {
			b = append(b, unhex(h[i+1])<<4|unhex(h[i+2]))
			i += 2
			continue
		}
		b = append(b, h[i])
	}
	for i, c := range b {
		switch {
		case c >= utf8.RuneSelf:
			return "", false // IDNA: not reproduced
		case c <= 0x20 || c == 0x7f || strings.IndexByte("#%/:<>?@[\\]^|", c) >= 0:
			return "", false
		case 'A' <= c && c <= 'Z':
			b[i] = c + 'a' - 'A'
		}
	}
	host := string(b)
	for _, label := range strings.Split(host, ".") {
		if strings.HasPrefix(label, "xn--") {
			return "", false // IDNA: not reproduced
		}
	}
	if endsInNumber(host) {
		return parseIPv4(host)
	}
	return host, true
}

// endsInNumber is WHATWG's "ends in a number" check.
func endsInNumber(host string) bool {
	parts := strings.Split(host, ".")
	if parts[len(parts)-1] == "" {
		if len(parts) == 1 {
			return false
		}
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, ok := ipv4Number(last)
	return ok
}

// ipv4Number reads one part of an IPv4 address: 0x hex, 0-led octal, or
// decimal.
func ipv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	if s == "" {
		return 0, true
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		var d uint64
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			d = uint64(c - '0')
		case base == 16 && isHex(c):
			d = uint64(unhex(c))
		default:
			return 0, false
		}
		if int(d) >= base {
			return 0, false
		}
		n = n*uint64(base) + d
		if n > 1<<32 {
			n = 1<<32 + 1 // too large either way; keep it from overflowing
		}
	}
	return n, true
}

func parseIPv4(host string) (string, bool) {
	parts := strings.Split(host, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return "", false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := ipv4Number(p)
		if !ok {
			return "", false
		}
		nums[i] = n
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return "", false
		}
	}
	lastN := nums[len(nums)-1]
	if lastN >= 1<<(8*(5-len(nums))) {
		return "", false
	}
	addr := lastN
	for i, n := range nums[:len(nums)-1] {
		addr += n << (8 * (3 - i))
	}
	return strconv.Itoa(int(addr>>24)) + "." + strconv.Itoa(int(addr>>16&255)) + "." +
		strconv.Itoa(int(addr>>8&255)) + "." + strconv.Itoa(int(addr&255)), true
}
