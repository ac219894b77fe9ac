package fit

import (
	"strings"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/digest"
)

// tally keeps the exact count of a prompt made of pieces joined by a
// separator, as pieces leave it.
//
// Tokens can merge across a join, so the count of a prompt is not the sum of
// its pieces' counts. But the tokenizers of o200k_base and cl100k_base split
// text into pieces before merging, and a space between two ASCII letters is
// always a split point: the letters before it end a piece whatever precedes
// them, and the space starts the next piece (" word") whatever follows. Such
// a cut point is a seam the count can be taken apart at. So each piece is
// counted once (cached by digest), with the counts of its head (up to its
// first cut) and tail (from its last cut); the whole is the pieces' interiors
// plus the windows that run from one piece's tail, across the joins and any
// piece without a cut, to the next piece's head. Removing a piece recounts
// one window. TestTallyMatchesTokenizer holds this to the tokenizer's count
// of the whole string.
type tally struct {
	counter budget.Counter
	cache   *countCache
	sep     string
	pieces  []piece
	prev    []int // alive neighbours; -1 and len(pieces) mark the ends
	next    []int
	alive   []bool
	first   int         // the first alive piece; len(pieces) when none is left
	window  map[int]int // count of the window that starts at an anchor's tail (-1: at the start)
	total   int
	// additive: the counter counts bytes, so a join adds its own length
	// and nothing merges; no window, no cache.
	additive bool
	live     int   // alive pieces, when additive
	sizes    []int // each piece's size, when additive (pieces is then unused)
}

type piece struct {
	text string
	key  digest.Digest
	counts
}

// counts is what the cache keeps of a text: its count, and for a piece with
// cut points, where its first and last cut are and the counts of its head
// and tail.
type counts struct {
	total       int
	cut         bool
	first, last int
	head, tail  int
}

func (p *piece) interior() int { return p.total - p.head - p.tail }

// newTally counts the items' texts joined by sep, through cache (keyed by
// each item's Key).
func newTally(counter budget.Counter, cache *countCache, items []Item, sep string) *tally {
	n := len(items)
	if counter == budget.Bytes() { // the one counter whose counts add up
		// Bytes add up: the whole is the pieces and the joins, exactly. Only
		// each piece's size and whether it is still in are kept.
		t := &tally{counter: counter, cache: cache, sep: sep, additive: true, live: n, sizes: make([]int, n), alive: make([]bool, n)}
		for i := range items {
			t.sizes[i], t.alive[i] = len(items[i].Text), true
			t.total += len(items[i].Text)
		}
		if n > 1 {
			t.total += (n - 1) * len(sep)
		}
		return t
	}
	t := &tally{counter: counter, cache: cache, sep: sep, pieces: make([]piece, n), prev: make([]int, n), next: make([]int, n),
		alive: make([]bool, n), window: map[int]int{}}
	for i := range n {
		t.prev[i], t.next[i], t.alive[i] = i-1, i+1, true
	}
	for i := range items {
		it := &items[i]
		t.pieces[i] = piece{text: it.Text, key: it.Key, counts: t.measure(it.Key, it.Text)}
	}
	left := -1
	for i := range t.pieces {
		if t.pieces[i].cut {
			t.total += t.pieces[i].interior()
			t.setWindow(left)
			left = i
		}
	}
	t.setWindow(left)
	return t
}

// measure counts a piece and finds its cut points, through the cache.
func (t *tally) measure(key digest.Digest, text string) counts {
	return t.cache.get(cacheKey{kind: pieceKey, encoding: t.counter.Encoding(), digest: key}, func() counts {
		c := counts{total: t.counter.Count(text)}
		c.first, c.last = cutPoints(text)
		if c.first > 0 {
			c.cut = true
			c.head = t.counter.Count(text[:c.first])
			c.tail = t.counter.Count(text[c.last:])
		}
		return c
	})
}

// count counts a window through the cache.
func (t *tally) countWindow(key cacheKey, text func() string) int {
	key.encoding = t.counter.Encoding()
	return t.cache.get(key, func() counts {
		return counts{total: t.counter.Count(text())}
	}).total
}

// cutPoints returns the first and last space that stands between two ASCII
// letters; 0, 0 when there is none.
func cutPoints(s string) (first, last int) {
	for i := 1; i+1 < len(s); i++ {
		if s[i] == ' ' && isLetter(s[i-1]) && isLetter(s[i+1]) {
			first = i
			break
		}
	}
	if first == 0 {
		return 0, 0
	}
	for i := len(s) - 2; i >= first; i-- {
		if s[i] == ' ' && isLetter(s[i-1]) && isLetter(s[i+1]) {
			return first, i
		}
	}
	return first, first
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// count is the exact count of the alive pieces joined by the separator.
func (t *tally) count() int { return t.total }

// pieceCount is the count of piece i on its own.
func (t *tally) pieceCount(i int) int {
	if t.additive {
		return t.sizes[i]
	}
	return t.pieces[i].total
}

// remove takes piece i out of the prompt.
func (t *tally) remove(i int) {
	if !t.alive[i] {
		return
	}
	if t.additive {
		t.alive[i] = false
		t.total -= t.sizes[i]
		if t.live--; t.live > 0 {
			t.total -= len(t.sep)
		}
		return
	}
	left := t.anchorBefore(i)
	t.total -= t.window[left]
	if t.pieces[i].cut {
		t.total -= t.pieces[i].interior() + t.window[i]
		delete(t.window, i)
	}
	t.alive[i] = false
	if t.first == i {
		t.first = t.next[i]
	}
	p, n := t.prev[i], t.next[i]
	if p >= 0 {
		t.next[p] = n
	}
	if n < len(t.pieces) {
		t.prev[n] = p
	}
	t.setWindow(left)
}

// anchorBefore returns the nearest alive piece with cut points before i, or
// -1.
func (t *tally) anchorBefore(i int) int {
	for j := t.prev[i]; j >= 0; j = t.prev[j] {
		if t.pieces[j].cut {
			return j
		}
	}
	return -1
}

// setWindow counts the window that starts at left's tail (or at the start
// of the prompt) and runs to the next anchor's head (or the end), and adds
// it to the total. A window between two adjacent anchors, the usual case,
// is looked up by the two pieces' digests without building its text.
func (t *tally) setWindow(left int) {
	if left >= 0 {
		if r := t.next[left]; r < len(t.pieces) && t.pieces[r].cut {
			l, rp := &t.pieces[left], &t.pieces[r]
			n := t.countWindow(cacheKey{kind: pairKey, digest: l.key, next: rp.key, text: t.sep}, func() string {
				return l.text[l.last:] + t.sep + rp.text[:rp.first]
			})
			t.window[left] = n
			t.total += n
			return
		}
	}
	text := t.windowText(left)
	n := 0
	if text != "" {
		n = t.countWindow(cacheKey{kind: textKey, text: text}, func() string { return text })
	}
	t.window[left] = n
	t.total += n
}

func (t *tally) windowText(left int) string {
	var b strings.Builder
	i := t.first
	if left >= 0 {
		p := &t.pieces[left]
		b.WriteString(p.text[p.last:])
		i = t.next[left]
	}
	for ; i < len(t.pieces); i = t.next[i] {
		if b.Len() > 0 || left >= 0 {
			b.WriteString(t.sep)
		}
		p := &t.pieces[i]
		if p.cut {
			b.WriteString(p.text[:p.first])
			break
		}
		b.WriteString(p.text)
	}
	return b.String()
}
