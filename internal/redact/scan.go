package redact

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The scanner finds every position at which a catalog pattern could start a
// match without running a regular expression.
// Every pattern begins with a literal (eyJ, ghp_, xoxb-, AKIA, Bearer, a
// sensitive keyword followed by : or =, ...), and each literal holds a byte
// that is rare in prose: '_', '-', 'J', 'A', 'b'/'B', ':' or '='. The scan
// stops only at those bytes and checks the literal around them. A position is
// reported when it passes the literal check and the pattern's leading \b; the
// pattern itself then runs anchored there. The candidate set must contain
// every real match start (a superset is fine): TestStringAgreesWithReference
// and FuzzRedact compare the result with the catalog's own regexps.

// anchors are the bytes at which the scanner stops.
const anchors = "_-JAbB:="

// anchorByte marks the anchors, for the byte-at-a-time scan.
var anchorByte = func() (t [256]uint8) {
	for i := range len(anchors) {
		t[anchors[i]] = 1
	}
	return t
}()

// candidates holds, per pattern, the ascending positions where it may match.
// The table is allocated on the first candidate: most text has none, and
// scanning it then costs no allocation and no zeroing.
type candidates struct {
	starts *[numPatterns][]int
	first  int // patterns before first are not wanted
	n      int
}

func (c *candidates) add(p, pos int) {
	if p < c.first {
		return
	}
	if c.starts == nil {
		c.starts = new([numPatterns][]int)
	}
	c.starts[p] = append(c.starts[p], pos)
	c.n++
}

// of returns the candidate starts of pattern p.
func (c *candidates) of(p int) []int {
	if c.starts == nil {
		return nil
	}
	return c.starts[p]
}

// scan returns the candidate starts in s for patterns first.. of the catalog.
//
// It looks for each anchor in turn with strings.IndexByte, which is
// vectorised: on prose, eight such searches cost about half of one
// table-driven pass over the bytes. Candidates then come grouped by anchor,
// not in text order; replaceAt sorts them. In text dense in anchors (a rule
// of dashes, snake_case code) that would be a call per byte, so past one hit
// per sixteen bytes the scan starts over, one byte at a time.
func scan(s string, first int) candidates {
	c := candidates{first: first}
	hits := len(s)/16 + len(anchors)
	for k := range len(anchors) {
		a := anchors[k]
		for i := 0; ; {
			j := strings.IndexByte(s[i:], a)
			if j < 0 {
				break
			}
			if hits--; hits < 0 {
				return scanBytes(s, first)
			}
			c.at(s, i+j)
			i += j + 1
		}
	}
	return c
}

// scanBytes is scan one byte at a time, for text dense in anchors.
func scanBytes(s string, first int) candidates {
	c := candidates{first: first}
	for i := 0; i < len(s); i++ {
		// Skip eight bytes at a time while none of them is an anchor.
		for i+8 <= len(s) {
			w := s[i : i+8]
			if anchorByte[w[0]]|anchorByte[w[1]]|anchorByte[w[2]]|anchorByte[w[3]]|
				anchorByte[w[4]]|anchorByte[w[5]]|anchorByte[w[6]]|anchorByte[w[7]] != 0 {
				break
			}
			i += 8
		}
		if i < len(s) && anchorByte[s[i]] != 0 {
			c.at(s, i)
		}
	}
	return c
}

// at checks the anchor byte at i.
func (c *candidates) at(s string, i int) {
	switch s[i] {
	case '_':
		scanUnderscore(c, s, i)
	case '-':
		scanDash(c, s, i)
	case 'J':
		if i >= 2 && s[i-2] == 'e' && s[i-1] == 'y' {
			c.addBounded(pJWT, s, i-2)
		}
	case 'A':
		if strings.HasPrefix(s[i:], "AIza") {
			c.addBounded(pGoogle, s, i)
		} else if hasAWSPrefix(s[i:]) {
			c.addBounded(pAWS, s, i)
		}
	case 'b', 'B':
		// The word is common; the pattern needs white space after it.
		if len(s)-i > 6 && asciiFoldPrefix(s[i+1:], "earer") && spaceAt(s, i+6) > 0 {
			c.addBounded(pBearer, s, i)
		}
	case ':', '=':
		scanAssignment(c, s, i)
	}
}

func (c *candidates) addBounded(p int, s string, pos int) {
	if atBoundary(s, pos) {
		c.add(p, pos)
	}
}

func scanUnderscore(c *candidates, s string, i int) {
	before := s[:i]
	if i >= 3 && before[i-3] == 'g' && before[i-2] == 'h' && strings.IndexByte("pousr", before[i-1]) >= 0 {
		c.addBounded(pGitHubToken, s, i-3)
	}
	if strings.HasSuffix(before, "github") && strings.HasPrefix(s[i:], "_pat_") {
		c.addBounded(pGitHubPAT, s, i-6)
	}
	if strings.HasSuffix(before, "hf") {
		c.addBounded(pHuggingFace, s, i-2)
	}
	if strings.HasSuffix(before, "tgp") && strings.HasPrefix(s[i:], "_v1_") {
		c.addBounded(pTogether, s, i-3)
	}
	if strings.HasSuffix(before, "npm") {
		c.addBounded(pNPM, s, i-3)
	}
	if strings.HasSuffix(before, "rk") || strings.HasSuffix(before, "sk") {
		c.addBounded(pStripe, s, i-2)
	}
}

func scanDash(c *candidates, s string, i int) {
	before := s[:i]
	if strings.HasPrefix(s[i:], "-----BEGIN ") {
		c.add(pPrivateKey, i) // this pattern has no leading \b
	}
	if i >= 4 && strings.HasSuffix(before[:i-1], "xox") && strings.IndexByte("abprs", before[i-1]) >= 0 {
		c.addBounded(pSlack, s, i-4)
	}
	if strings.HasSuffix(before, "glpat") {
		c.addBounded(pGitLab, s, i-5)
	}
	if strings.HasSuffix(before, "csk") {
		c.addBounded(pCerebras, s, i-3)
	}
	if strings.HasSuffix(before, "sk") {
		c.addBounded(pOpenAI, s, i-2)
	}
}

var awsPrefixes = [...]string{"AKIA", "ASIA", "AGPA", "AIDA", "ANPA", "AROA", "AIPA"}

func hasAWSPrefix(s string) bool {
	if len(s) < 4 {
		return false
	}
	for _, p := range awsPrefixes {
		if s[:4] == p {
			return true
		}
	}
	return false
}

// assignmentKeywords spells out the keyword alternation of
// sensitive_assignment, each [_-]? expanded.
var assignmentKeywords = func() []string {
	var out []string
	for _, k := range []string{"api%key", "access%token", "refresh%token", "id%token", "client%secret"} {
		for _, sep := range []string{"", "_", "-"} {
			out = append(out, strings.Replace(k, "%", sep, 1))
		}
	}
	return append(out, "password", "passwd", "secret", "token")
}()

// scanAssignment handles a ':' or '=' at i: it skips back over \s* and
// reports the start of every keyword that ends there.
func scanAssignment(c *candidates, s string, i int) {
	j := skipSpaceBack(s, i)
	keywordsEndingAt(s, j, func(start int) { c.addBounded(pSensitive, s, start) })
}

// keywordsEndingAt calls fn with the start of every keyword of
// sensitive_assignment that ends at j. Keywords are matched
// case-insensitively with Unicode simple folding, as (?i) does in Rust, so
// that the Kelvin sign matches k and the long s matches s. The leading \b is
// left to the caller.
func keywordsEndingAt(s string, j int, fn func(start int)) {
	if j == 0 {
		return
	}
	last := s[j-1] | 0x20 // every keyword ends in y, n, t or d, whose folds are ASCII
	if last != 'y' && last != 'n' && last != 't' && last != 'd' {
		return
	}
	// A folded letter (the Kelvin sign, the long s) is longer than its
	// ASCII twin, so only all-ASCII text can be compared byte by byte.
	reach := s[max(0, j-3*maxKeywordLen):j]
	ascii := true
	for k := 0; k < len(reach); k++ {
		if reach[k] >= 0x80 {
			ascii = false
			break
		}
	}
	for _, kw := range assignmentKeywords {
		if kw[len(kw)-1] != last {
			continue
		}
		start, ok := 0, false
		if ascii {
			start, ok = asciiSuffix(s[:j], kw)
		} else {
			start, ok = foldSuffix(s[:j], kw)
		}
		if ok {
			fn(start)
		}
	}
}

// endsWithKeyword reports whether a keyword of sensitive_assignment (at a
// word boundary) ends at j.
func endsWithKeyword(s string, j int) bool {
	found := false
	keywordsEndingAt(s, j, func(start int) { found = found || atBoundary(s, start) })
	return found
}

var maxKeywordLen = func() (n int) {
	for _, kw := range assignmentKeywords {
		n = max(n, len(kw))
	}
	return n
}()

// asciiSuffix reports whether the ASCII text s ends with the keyword kw in
// either case, and where it starts.
func asciiSuffix(s, kw string) (int, bool) {
	if len(s) < len(kw) {
		return 0, false
	}
	tail := s[len(s)-len(kw):]
	for k := 0; k < len(kw); k++ {
		c := tail[k]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != kw[k] {
			return 0, false
		}
	}
	return len(s) - len(kw), true
}

// asciiFoldPrefix reports whether s starts with lower (ASCII lowercase
// letters) in either case.
func asciiFoldPrefix(s, lower string) bool {
	if len(s) < len(lower) {
		return false
	}
	for i := range len(lower) {
		if s[i]|0x20 != lower[i] {
			return false
		}
	}
	return true
}

// foldSuffix reports whether s ends with kw under simple case folding, and
// where that suffix starts.
func foldSuffix(s, kw string) (int, bool) {
	end := len(s)
	for k := len(kw) - 1; k >= 0; k-- {
		if end == 0 {
			return 0, false
		}
		r, size := utf8.DecodeLastRuneInString(s[:end])
		if !foldEqual(r, rune(kw[k])) {
			return 0, false
		}
		end -= size
	}
	return end, true
}

// foldEqual reports whether r equals the ASCII rune p under simple folding.
func foldEqual(r, p rune) bool {
	if r == p {
		return true
	}
	for f := unicode.SimpleFold(p); f != p; f = unicode.SimpleFold(f) {
		if f == r {
			return true
		}
	}
	return false
}
