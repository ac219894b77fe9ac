// Package dsn shows PostgreSQL connection strings in messages without their
// secrets. It reads a connection string as pgx (and libpq) read it, in both
// of the forms they accept: a postgres:// or postgresql:// URL, and
// keyword=value pairs. The secrets are every parameter pgx takes a secret
// from: the URL's user:password@, and password and sslpassword in either
// form.
package dsn

import (
	"errors"
	"strings"
)

// mask replaces a secret.
const mask = "xxxxx"

// unparsed is what Redacted shows of a connection string it cannot read
// for sure: nothing of it.
const unparsed = "(a connection string that does not parse)"

// secretKey reports whether the parameter named key (as pgx canonicalises
// it) carries a secret.
func secretKey(key string) bool {
	key = strings.ToLower(key)
	return key == "password" || key == "sslpassword"
}

// span is a secret's place in a connection string, and its value as pgx
// reads it.
type span struct {
	start, end int
	value      string
}

// Redacted is a connection string as a message may quote it: every secret
// replaced by xxxxx, everything else as written. A string whose secrets
// cannot be found for sure (it does not parse as pgx parses it) is not
// quoted at all.
func Redacted(s string) string {
	spans, ok := secrets(s)
	if !ok {
		return unparsed
	}
	var b strings.Builder
	at := 0
	for _, sp := range spans {
		b.WriteString(s[at:sp.start])
		b.WriteString(mask)
		at = sp.end
	}
	b.WriteString(s[at:])
	return b.String()
}

// Error is err as a message about opening s may show it: its text with
// every secret of s, as written and as read, replaced by xxxxx (a driver's
// error may quote the string, or a value from it). errors.Is and errors.As
// see err. When s does not parse, the text is only that it does not.
func Error(s string, err error) error {
	if err == nil {
		return nil
	}
	spans, ok := secrets(s)
	if !ok {
		return &scrubbed{err: err, msg: "the connection string does not parse"}
	}
	msg := err.Error()
	for _, sp := range spans {
		for _, v := range []string{s[sp.start:sp.end], sp.value} {
			if v != "" {
				msg = strings.ReplaceAll(msg, v, mask)
			}
		}
	}
	return &scrubbed{err: err, msg: msg}
}

type scrubbed struct {
	err error
	msg string
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// secrets finds the secrets of s, in order; ok is false when s does not
// parse as pgx parses it, or its structure leaves a doubt (an '@' past the
// user information: a password holding an unencoded '/' would put it there).
func secrets(s string) ([]span, bool) {
	if strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://") {
		return urlSecrets(s)
	}
	return keywordSecrets(s)
}

// urlSecrets reads a URL as libpq's conninfo_uri_parse_options does (pgx's
// parseURLSettings): the user information ends at the first '@' before any
// '/', its password after its first ':'; the query is '&'-separated pairs
// with exactly one '=', both halves percent-decoded.
func urlSecrets(s string) ([]span, bool) {
	if strings.IndexByte(s, 0) >= 0 {
		return nil, false
	}
	p := strings.TrimPrefix(strings.TrimPrefix(s, "postgresql://"), "postgres://")
	off := len(s) - len(p)
	var spans []span
	if i := strings.IndexAny(p, "@/"); i >= 0 && p[i] == '@' {
		if _, pw, ok := strings.Cut(p[:i], ":"); ok && pw != "" {
			v, err := decode(pw)
			if err != nil {
				return nil, false
			}
			start := off + strings.IndexByte(p[:i], ':') + 1
			spans = append(spans, span{start, off + i, v})
		}
		off += i + 1
		p = p[i+1:]
	}
	// A second '@' means the user information may not be where it seems
	// (a password holding '/', '?' or '@' unencoded): quote nothing.
	if strings.IndexByte(p, '@') >= 0 {
		return nil, false
	}
	netloc, rest := p, ""
	if i := strings.IndexAny(p, "/?"); i >= 0 {
		netloc, rest = p[:i], p[i:]
	}
	off += len(netloc)
	q := strings.IndexByte(rest, '?')
	if q < 0 {
		return spans, true
	}
	off += q + 1
	params := rest[q+1:]
	for params != "" {
		pair := params
		next := ""
		if i := strings.IndexByte(params, '&'); i >= 0 {
			pair, next = params[:i], params[i+1:]
		}
		rawKey, rawValue, found := strings.Cut(pair, "=")
		if !found || strings.IndexByte(rawValue, '=') >= 0 {
			return nil, false
		}
		key, err := decode(rawKey)
		if err != nil {
			return nil, false
		}
		if key == "dbname" {
			key = "database"
		}
		if secretKey(key) {
			v, err := decode(rawValue)
			if err != nil {
				return nil, false
			}
			start := off + len(rawKey) + 1
			spans = append(spans, span{start, start + len(rawValue), v})
		}
		off += len(pair) + 1
		params = next
	}
	return spans, true
}

// decode percent-decodes a URL component as libpq does: '%' and two hex
// digits, %00 refused, spaces around it skipped and none inside.
func decode(raw string) (string, error) {
	t := strings.Trim(raw, " ")
	if strings.IndexByte(t, ' ') >= 0 {
		return "", errors.New("a space inside a component")
	}
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		if t[i] != '%' {
			b.WriteByte(t[i])
			continue
		}
		if i+2 >= len(t) {
			return "", errors.New("a cut percent escape")
		}
		hi, ok1 := hex(t[i+1])
		lo, ok2 := hex(t[i+2])
		if !ok1 || !ok2 || hi<<4|lo == 0 {
			return "", errors.New("a bad percent escape")
		}
		b.WriteByte(hi<<4 | lo)
		i += 2
	}
	return b.String(), nil
}

func hex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// isSpace is libpq's (and pgx's) white space in keyword=value strings.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// keywordSecrets reads keyword=value pairs as pgx's
// parseKeywordValueSettings does: a keyword, '=' (spaces around it
// allowed), then a value up to white space (a backslash escapes the next
// byte) or in single quotes (the same escape).
func keywordSecrets(s string) ([]span, bool) {
	if strings.IndexByte(s, 0) >= 0 {
		return nil, false
	}
	var spans []span
	i := 0
	skip := func() {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
	}
	skip()
	for i < len(s) {
		eq := strings.IndexByte(s[i:], '=')
		if eq < 0 {
			return nil, false
		}
		key := strings.TrimRight(s[i:i+eq], " \t\n\r\v\f")
		if !keyword(key) {
			// pgx takes any key (a server setting), but one that is not a
			// word is most likely a URL it did not recognise
			// ("POSTGRES://u:secret@h/db?x=y"): quote nothing.
			return nil, false
		}
		i += eq + 1
		skip()
		start, quoted := i, i < len(s) && s[i] == '\''
		if quoted {
			i++
		}
		for i < len(s) {
			c := s[i]
			if quoted && c == '\'' || !quoted && isSpace(c) {
				break
			}
			if c == '\\' {
				i++
			}
			i++
		}
		end := min(i, len(s))
		if quoted {
			if i >= len(s) {
				return nil, false // unterminated
			}
			i++
			end = i
		}
		if secretKey(key) {
			raw := s[start:end]
			if quoted {
				raw = raw[1 : len(raw)-1]
			}
			spans = append(spans, span{start, end, unescape(raw)})
		}
		skip()
	}
	return spans, true
}

// keyword reports whether key is a word as keywords and server settings
// are: letters, digits, '_', '.' and '-'.
func keyword(key string) bool {
	if key == "" {
		return false
	}
	for _, c := range []byte(key) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// unescape applies the backslash rule of keyword=value values.
func unescape(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' {
			i++
			if i == len(v) {
				break
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}
