package redact

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// windowOverlap is Harn's SCAN_WINDOW_OVERLAP_BYTES: each window re-reads
// this much of the one before.
const windowOverlap = 8 * 1024

// windowed is Harn's scan_secret_patterns_windowed, for texts longer than
// maxScanInput. Unlike the one-pass scan, every pattern reads the original
// text: pattern by pattern in catalog order, window by window, the pattern's
// matches are found in the window alone (as if the window were the whole
// text), and a match is dropped when it touches a window edge that is not
// an end of the text, or overlaps a match claimed before it (by an earlier
// pattern, or the same pattern in the window before). The claims are then
// replaced, all at once.
//
// Windows start every 248 KiB and are 256 KiB long, their ends moved to
// character boundaries (the start down, the end up). Harn checks each match
// against every claim so far; here a bitmap of claimed bytes answers the
// same question in time proportional to the match, which keeps the whole
// linear.
func windowed(s string) string {
	return windowedSized(s, maxScanInput, windowOverlap)
}

// windowedSized is windowed with windows of size bytes overlapping by
// overlap (tests use small ones).
func windowedSized(s string, size, overlap int) string {
	step := size - overlap
	type window struct {
		start, end int
		c          candidates
	}
	var windows []window
	for at := 0; ; at += step {
		ws := floorBoundary(s, at)
		we := ceilBoundary(s, min(at+size, len(s)))
		windows = append(windows, window{ws, we, scan(s[ws:we], 0)})
		if we >= len(s) {
			break
		}
	}
	type claim struct{ start, end, p int }
	var claims []claim
	claimed := make([]uint64, len(s)/64+1)
	free := func(a, b int) bool {
		for i := a; i < b; i++ {
			if claimed[i>>6]&(1<<(i&63)) != 0 {
				return false
			}
		}
		return true
	}
	for p := range numPatterns {
		for _, w := range windows {
			starts := w.c.of(p)
			if len(starts) == 0 {
				continue
			}
			slices.Sort(starts)
			m := newMatcher(s[w.start:w.end])
			last := 0
			for _, pos := range starts {
				if pos < last {
					continue
				}
				end := m.match(p, pos)
				if end < 0 {
					continue
				}
				last = end
				gs, ge := w.start+pos, w.start+end
				if gs == w.start && w.start != 0 || ge == w.end && w.end != len(s) {
					continue
				}
				if !free(gs, ge) {
					continue
				}
				for i := gs; i < ge; i++ {
					claimed[i>>6] |= 1 << (i & 63)
				}
				claims = append(claims, claim{gs, ge, p})
			}
		}
	}
	if len(claims) == 0 {
		return s
	}
	slices.SortFunc(claims, func(a, b claim) int { return a.start - b.start })
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, c := range claims {
		b.WriteString(s[last:c.start])
		placeholder(&b, c.p, c.end-c.start)
		last = c.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// floorBoundary moves i down to the start of the character it falls in.
func floorBoundary(s string, i int) int {
	if i >= len(s) {
		return len(s)
	}
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// ceilBoundary moves i up to the start of the next character.
func ceilBoundary(s string, i int) int {
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}
