package redact

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The reference applies the catalog the slow, obvious way: one Go regexp per
// pattern, tried at every position of the text, in order. Go's regexp
// prefers among a pattern's paths as Rust's does (leftmost-first), but reads
// \b and \s as ASCII; so the reference writes \s out as Unicode's White_Space
// set and checks each \b itself, with its own word test:
//
//   - a leading \b is checked at the candidate start;
//   - a trailing \b (the token patterns and jwt, each ending in a greedy
//     repetition after a prefix that can match only one way) is found by
//     trying ends from the longest down, the whole pattern anchored at both
//     ends of the candidate span, and keeping the first end with a boundary.
//
// It is cubic in the worst case and meant for short texts.

const refSpace = `[\t\n\v\f\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}]`

type refPattern struct {
	name              string
	re                *regexp.Regexp // ^(?:body)
	whole             *regexp.Regexp // ^(?:body)$, for patterns with a trailing \b
	leading, trailing bool
}

var refCatalog = func() []refPattern {
	var out []refPattern
	for _, p := range Catalog() {
		src := strings.ReplaceAll(p.Source, `\s`, refSpace)
		flags := ""
		for _, f := range []string{"(?i)", "(?s)"} {
			if strings.HasPrefix(src, f) {
				flags, src = f, src[len(f):]
			}
		}
		rp := refPattern{name: p.Name}
		if rp.leading = strings.HasPrefix(src, `\b`); rp.leading {
			src = src[2:]
		}
		if rp.trailing = strings.HasSuffix(src, `\b`); rp.trailing {
			src = src[:len(src)-2]
			rp.whole = regexp.MustCompile(flags + `^(?:` + src + `)$`)
		}
		if strings.Contains(src, `\b`) {
			panic("reference: \\b inside " + p.Name)
		}
		rp.re = regexp.MustCompile(flags + `^(?:` + src + `)`)
		out = append(out, rp)
	}
	return out
}()

func refIsWord(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Nl, r) ||
		unicode.Is(unicode.Other_Alphabetic, r) || unicode.IsMark(r) || unicode.Is(unicode.Pc, r) ||
		unicode.Is(unicode.Join_Control, r)
}

func refBoundary(s string, i int) bool {
	before, after := false, false
	if i > 0 {
		r, _ := utf8.DecodeLastRuneInString(s[:i])
		before = r != utf8.RuneError && refIsWord(r)
	}
	if i < len(s) {
		r, _ := utf8.DecodeRuneInString(s[i:])
		after = r != utf8.RuneError && refIsWord(r)
	}
	return before != after
}

// matchAt returns the end of p's match starting at i, or -1.
func (p *refPattern) matchAt(s string, i int) int {
	if p.leading && !refBoundary(s, i) {
		return -1
	}
	m := p.re.FindStringIndex(s[i:])
	if m == nil {
		return -1
	}
	if !p.trailing {
		return i + m[1]
	}
	// The greedy match without the trailing \b is the longest span the
	// pattern can cover from i; try ends from there down.
	for j := i + m[1]; j > i; j-- {
		if refBoundary(s, j) && p.whole.MatchString(s[i:j]) {
			return j
		}
	}
	return -1
}

// findAll returns p's leftmost-first, non-overlapping matches in s.
func (p *refPattern) findAll(s string) [][2]int {
	var out [][2]int
	for i := 0; i < len(s); {
		if e := p.matchAt(s, i); e > i {
			out = append(out, [2]int{i, e})
			i = e
			continue
		}
		i++
	}
	return out
}

// refReplace runs the catalog over s once, in order.
func refReplace(s string) string {
	for _, p := range refCatalog {
		var b strings.Builder
		last := 0
		for _, m := range p.findAll(s) {
			b.WriteString(s[last:m[0]])
			fmt.Fprintf(&b, "<redacted:%s:%d>", p.name, m[1]-m[0])
			last = m[1]
		}
		b.WriteString(s[last:])
		s = b.String()
	}
	return s
}

// reference is String the slow way, for texts up to maxScanInput.
func reference(s string) string {
	if u, ok := redactURL(s); ok {
		s = u
	}
	return refReplace(s)
}

// refWindowed is Harn's windowed scan with windows of size bytes
// overlapping by overlap, over the reference's find-all.
func refWindowed(s string, size, overlap int) string {
	type claim struct {
		start, end int
		name       string
	}
	var claims []claim
	for _, p := range refCatalog {
		for at := 0; ; at += size - overlap {
			ws := floorBoundary(s, at)
			we := ceilBoundary(s, min(at+size, len(s)))
			for _, m := range p.findAll(s[ws:we]) {
				gs, ge := ws+m[0], ws+m[1]
				if gs == ws && ws != 0 || ge == we && we != len(s) {
					continue
				}
				overlaps := false
				for _, c := range claims {
					overlaps = overlaps || gs < c.end && c.start < ge
				}
				if !overlaps {
					claims = append(claims, claim{gs, ge, p.name})
				}
			}
			if we >= len(s) {
				break
			}
		}
	}
	out := s
	// Splice from the last claim so offsets stay valid.
	for k := len(claims) - 1; k >= 0; k-- {
		best := -1
		for j, c := range claims {
			if c.start >= 0 && (best < 0 || c.start > claims[best].start) {
				best = j
			}
		}
		c := claims[best]
		out = out[:c.start] + fmt.Sprintf("<redacted:%s:%d>", c.name, c.end-c.start) + out[c.end:]
		claims[best].start = -1
	}
	return out
}
