package redact

import (
	"strings"
	"unicode/utf8"
)

// The catalog's patterns, matched by hand at a candidate position with the
// meaning a Rust regex gives them (leftmost-first alternation, greedy
// repetition with backtracking, Unicode \b and \s, (?i) simple case
// folding). Each of these patterns has exactly one way to match at a given
// start, which makes a hand matcher short; the reasoning is given per
// pattern. A matcher returns the end of the match that starts at pos, or -1.
//
// A matcher keeps a little memory of the text (the last run it measured,
// the last END line it found) so that many failed attempts over one long
// run cost one pass over it, not one each: redaction stays linear.

// matcher matches the catalog's patterns in one text.
type matcher struct {
	s string

	// jwt: the first run of the last attempt [jwtFrom, jwtRun), and the
	// outcome of the attempt past it.
	jwtFrom, jwtRun, jwtEnd int
	// private_key_block: the earliest END line at or after endFrom
	// (endAt, -1 for none).
	endFrom, endAt, endEnd int
	// the last run of the (?i) value class measured: [valFrom, valTo),
	// valTo being the end of the maximal run.
	valFrom, valTo int
}

func newMatcher(s string) *matcher {
	return &matcher{s: s, jwtRun: -1, endFrom: -1, valFrom: -1}
}

// Byte classes of the token patterns.
const (
	clsAlnum      = iota // [A-Za-z0-9]
	clsAlnumUnder        // [A-Za-z0-9_]
	clsAlnumDash         // [A-Za-z0-9-]
	clsToken             // [A-Za-z0-9_-]
	clsUpperDigit        // [A-Z0-9]
	numClasses
)

var classTable = func() (t [numClasses][256]bool) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		alnum := 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
		t[clsAlnum][c] = alnum
		t[clsAlnumUnder][c] = alnum || b == '_'
		t[clsAlnumDash][c] = alnum || b == '-'
		t[clsToken][c] = alnum || b == '_' || b == '-'
		t[clsUpperDigit][c] = 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
	}
	return t
}()

// token is a pattern of the shape \b PREFIX CLASS{min,max} \b, PREFIX being
// one of a few literals (none a prefix of another).
type token struct {
	prefixes []string
	class    int
	min, max int
}

var tokens = [numPatterns]*token{
	pGitHubToken: {prefixes: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, class: clsAlnum, min: 36, max: 255},
	pGitHubPAT:   {prefixes: []string{"github_pat_"}, class: clsAlnumUnder, min: 20, max: 255},
	pSlack:       {prefixes: []string{"xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-"}, class: clsAlnumDash, min: 10, max: 255},
	pAWS:         {prefixes: []string{"AKIA", "ASIA", "AGPA", "AIDA", "ANPA", "AROA", "AIPA"}, class: clsUpperDigit, min: 16, max: 16},
	pGitLab:      {prefixes: []string{"glpat-"}, class: clsToken, min: 20, max: 255},
	pHuggingFace: {prefixes: []string{"hf_"}, class: clsAlnum, min: 20, max: 255},
	pCerebras:    {prefixes: []string{"csk-"}, class: clsAlnum, min: 20, max: 255},
	pTogether:    {prefixes: []string{"tgp_v1_"}, class: clsToken, min: 20, max: 255},
	pGoogle:      {prefixes: []string{"AIza"}, class: clsToken, min: 35, max: 35},
	pNPM:         {prefixes: []string{"npm_"}, class: clsAlnum, min: 36, max: 36},
	pOpenAI:      {prefixes: []string{"sk-"}, class: clsToken, min: 20, max: 255},
	pStripe:      {prefixes: []string{"rk_live_", "rk_test_", "sk_live_", "sk_test_"}, class: clsAlnum, min: 16, max: 255},
}

// match returns the end of pattern p's match at pos, or -1.
func (m *matcher) match(p, pos int) int {
	switch p {
	case pJWT:
		return m.jwt(pos)
	case pPrivateKey:
		return m.privateKey(pos)
	case pBearer:
		return m.bearer(pos)
	case pSensitive:
		return m.assignment(pos)
	}
	return m.token(tokens[p], pos)
}

// token: greedy CLASS{min,max} then \b. The regex tries the longest run
// first and gives back one character at a time until \b holds, so the match
// ends at the longest k in [min, max] (k at most the run's length) with a
// boundary after it. The loop is bounded by max.
func (m *matcher) token(t *token, pos int) int {
	s := m.s
	if !atBoundary(s, pos) {
		return -1
	}
	q := -1
	for _, pre := range t.prefixes {
		if strings.HasPrefix(s[pos:], pre) {
			q = pos + len(pre)
			break
		}
	}
	if q < 0 {
		return -1
	}
	cls := &classTable[t.class]
	n := 0
	for n < t.max && q+n < len(s) && cls[s[q+n]] {
		n++
	}
	for ; n >= t.min; n-- {
		if atBoundary(s, q+n) {
			return q + n
		}
	}
	return -1
}

// run returns the end of the maximal run of class cls that starts at pos.
func run(s string, pos int, cls *[256]bool) int {
	for pos < len(s) && cls[s[pos]] {
		pos++
	}
	return pos
}

// jwt: \beyJ R{4,}\. R{4,}\. R{4,}\b with R = [A-Za-z0-9_-]. R holds no
// '.', so the first two runs must be maximal and followed by '.'; the third
// ends at the last boundary of its run (at least four in). Every attempt
// whose first run ends at the same place has the same outcome past it, which
// is remembered, so a text of "eyJ-eyJ-eyJ-..." is read once.
func (m *matcher) jwt(pos int) int {
	s := m.s
	if !strings.HasPrefix(s[pos:], "eyJ") || !atBoundary(s, pos) {
		return -1
	}
	cls := &classTable[clsToken]
	q := pos + 3
	if m.jwtRun >= 0 && m.jwtFrom <= q && q < m.jwtRun {
		// Inside the run measured last: same end, same outcome past it.
		if m.jwtRun-q < 4 {
			return -1
		}
		return m.jwtEnd
	}
	r1 := run(s, q, cls)
	if r1-q < 4 {
		return -1
	}
	m.jwtFrom, m.jwtRun, m.jwtEnd = q, r1, m.jwtRest(r1)
	return m.jwtEnd
}

func (m *matcher) jwtRest(r1 int) int {
	s := m.s
	cls := &classTable[clsToken]
	if r1 >= len(s) || s[r1] != '.' {
		return -1
	}
	q2 := r1 + 1
	r2 := run(s, q2, cls)
	if r2-q2 < 4 || r2 >= len(s) || s[r2] != '.' {
		return -1
	}
	q3 := r2 + 1
	for e := run(s, q3, cls); e-q3 >= 4; e-- {
		if atBoundary(s, e) {
			return e
		}
	}
	return -1
}

// privateKey: (?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?-----END [A-Z0-9 ]*PRIVATE KEY-----
// The class holds no '-', so "[A-Z0-9 ]*PRIVATE KEY-----" matches only
// with the class run maximal, ending in "PRIVATE KEY" and followed by
// "-----". The lazy .*? takes the earliest END line after the BEGIN line;
// the earliest END line at or after a position only moves forward as the
// position does, so it is remembered.
func (m *matcher) privateKey(pos int) int {
	s := m.s
	h := keyLine(s, pos, "-----BEGIN ")
	if h < 0 {
		return -1
	}
	if m.endFrom >= 0 && m.endFrom <= h && (m.endAt < 0 || m.endAt >= h) {
		return m.endEnd
	}
	m.endFrom, m.endAt, m.endEnd = h, -1, -1
	for from := h; ; {
		i := strings.Index(s[from:], "-----END ")
		if i < 0 {
			return -1
		}
		at := from + i
		if e := keyLine(s, at, "-----END "); e >= 0 {
			m.endAt, m.endEnd = at, e
			return e
		}
		from = at + 1
	}
}

// keyLine matches lead [A-Z0-9 ]*PRIVATE KEY----- at pos and returns its
// end, or -1.
func keyLine(s string, pos int, lead string) int {
	if !strings.HasPrefix(s[pos:], lead) {
		return -1
	}
	q := pos + len(lead)
	x := q
	for x < len(s) && (s[x] == ' ' || 'A' <= s[x] && s[x] <= 'Z' || '0' <= s[x] && s[x] <= '9') {
		x++
	}
	const tail = "PRIVATE KEY"
	if x-q < len(tail) || s[x-len(tail):x] != tail || !strings.HasPrefix(s[x:], "-----") {
		return -1
	}
	return x + 5
}

// valueByte is [A-Za-z0-9._\-+/=] for ASCII bytes.
var valueByte = func() (t [256]bool) {
	for c := 0; c < 128; c++ {
		b := byte(c)
		t[c] = 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' ||
			strings.IndexByte("._-+/=", b) >= 0
	}
	return t
}()

// valueRun measures the maximal run of (?i)[A-Za-z0-9._\-+/=] (which also
// holds the Kelvin sign and the long s) from pos: its end, its length in
// characters, and whether it holds a byte of [0-9._\-+/=].
func (m *matcher) valueRun(pos int) (end, chars int, nonLetter bool) {
	s := m.s
	for end = pos; end < len(s); {
		c := s[end]
		if c < utf8.RuneSelf {
			if !valueByte[c] {
				break
			}
			nonLetter = nonLetter || !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z')
			end++
		} else {
			r, n := utf8.DecodeRuneInString(s[end:])
			if r != kelvin && r != longS {
				break
			}
			end += n
		}
		chars++
	}
	return end, chars, nonLetter
}

// bearer: (?i)\bBearer\s+V{12,} with V the value class. \s+ and V are
// disjoint, so the match is "Bearer", all the white space after it, and the
// whole run of V, which must be twelve characters or more.
func (m *matcher) bearer(pos int) int {
	s := m.s
	if !atBoundary(s, pos) {
		return -1
	}
	q := foldPrefix(s, pos, "bearer")
	if q < 0 {
		return -1
	}
	w := skipSpace(s, q)
	if w == q {
		return -1
	}
	end, chars, _ := m.valueRun(w)
	if chars < 12 {
		return -1
	}
	return end
}

// assignmentKeywordAlts is the keyword alternation of sensitive_assignment
// in its order, with [_-]? written out (greedy: the separator is tried
// first; at most one spelling can match a given text).
var assignmentKeywordAlts = []string{
	"api_key", "api-key", "apikey",
	"access_token", "access-token", "accesstoken",
	"refresh_token", "refresh-token", "refreshtoken",
	"id_token", "id-token", "idtoken",
	"client_secret", "client-secret", "clientsecret",
	"password", "passwd", "secret", "token",
}

// assignmentWords are the value alternation's literal words, in order.
var assignmentWords = []string{"secret", "hidden", "hideme", "password", "passwd", "token"}

// assignment: (?i)\bKEYWORD\s*[:=]\s*VALUE. The white space runs cannot
// give back anything useful (neither [:=] nor any VALUE alternative starts
// with white space), so the value starts after all of it, where the
// alternatives are tried in order:
//
//	"V{6,}"  a double-quoted run of six or more
//	'V{6,}'  a single-quoted one
//	V*N V*   the whole run of V, if it holds a byte of N = [0-9._\-+/=]
//	secret|hidden|hideme|password|passwd|token, in either case
func (m *matcher) assignment(pos int) int {
	s := m.s
	if !atBoundary(s, pos) {
		return -1
	}
	k := -1
	for _, kw := range assignmentKeywordAlts {
		if k = foldPrefix(s, pos, kw); k >= 0 {
			break
		}
	}
	if k < 0 {
		return -1
	}
	op := skipSpace(s, k)
	if op >= len(s) || s[op] != ':' && s[op] != '=' {
		return -1
	}
	w := skipSpace(s, op+1)
	if w < len(s) && (s[w] == '"' || s[w] == '\'') {
		end, chars, _ := m.valueRun(w + 1)
		if chars >= 6 && end < len(s) && s[end] == s[w] {
			return end + 1
		}
	}
	if end, _, nonLetter := m.cachedValueRun(w); nonLetter {
		return end
	}
	for _, word := range assignmentWords {
		if e := foldPrefix(s, w, word); e >= 0 {
			return e
		}
	}
	return -1
}

// cachedValueRun is valueRun, remembering the last run so that attempts
// starting inside it do not measure it again.
func (m *matcher) cachedValueRun(pos int) (end, chars int, nonLetter bool) {
	if m.valFrom >= 0 && m.valFrom <= pos && pos < m.valTo {
		// A run of letters only: any part of it has no non-letter either.
		// (A run with one is consumed by the match that measured it.)
		return m.valTo, 0, false
	}
	end, chars, nonLetter = m.valueRun(pos)
	if !nonLetter && end > pos {
		m.valFrom, m.valTo = pos, end
	}
	return end, chars, nonLetter
}
