package fit

import (
	"container/list"
	"sync"

	"github.com/promptloom/promptloom/digest"
)

// countCache remembers counts by (encoding, content digest), so a text is
// counted once however many prompts it appears in. It holds at most its
// capacity of entries, dropping the least recently used, and is safe for
// concurrent use.
type countCache struct {
	mu      sync.Mutex
	max     int
	entries map[cacheKey]*list.Element
	order   *list.List // front: most recently used
	hits    int64
	misses  int64
}

// cacheKey names a counted text: a piece by its content digest; a window
// between two pieces by both pieces' digests (its text follows from them);
// any other window by its text itself (a few words: the map's own hash of it
// is cheaper than a digest).
type cacheKey struct {
	kind     keyKind
	encoding string
	digest   digest.Digest
	next     digest.Digest
	text     string
}

type keyKind uint8

const (
	pieceKey keyKind = iota
	pairKey
	textKey
)

type cacheEntry struct {
	key    cacheKey
	counts counts
}

// defaultCacheEntries bounds the default cache: about 6 MB at most.
const defaultCacheEntries = 1 << 16

// newCountCache returns a cache of at most entries counts.
func newCountCache(entries int) *countCache {
	return &countCache{max: max(entries, 1), entries: map[cacheKey]*list.Element{}, order: list.New()}
}

var defaultCache = newCountCache(defaultCacheEntries)

// get returns the counts of text under key, computing them on a miss with
// measure (outside the lock: counting is the slow part).
func (c *countCache) get(k cacheKey, measure func() counts) counts {
	c.mu.Lock()
	if e, ok := c.entries[k]; ok {
		c.order.MoveToFront(e)
		c.hits++
		n := e.Value.(*cacheEntry).counts
		c.mu.Unlock()
		return n
	}
	c.misses++
	c.mu.Unlock()

	n := measure()

	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[k]; ok { // counted meanwhile by another caller
		c.order.MoveToFront(e)
		return n
	}
	c.entries[k] = c.order.PushFront(&cacheEntry{key: k, counts: n})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.entries, last.Value.(*cacheEntry).key)
	}
	return n
}

// stats reports hits, misses and the number of entries held.
func (c *countCache) stats() (hits, misses int64, entries int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses, c.order.Len()
}
