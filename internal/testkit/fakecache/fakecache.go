// Package fakecache is a prompt cache that behaves as Anthropic documents
// its own (docs/caching.md): the prefix in the order tools, system,
// messages; a breakpoint writes the prefix that ends at its block, if that
// prefix reaches the minimum; a read walks back at most 20 blocks from
// each breakpoint for a live entry; entries live 5 minutes (or 1 hour),
// refreshed when read. It is written apart from package cache, with
// encoding/json and SHA-256 and its own token count, so that the model's
// predictions can be held to something that is not the model.
//
// It is a test kit: the library never uses it.
package fakecache

import (
	"crypto/sha256"
	"encoding/json"
	"sync"
	"time"
)

// Usage is what the fake reports, as Anthropic's usage does: Input is the
// tokens after the last breakpoint, neither read nor written.
type Usage struct {
	Input, CacheRead, CacheWrite int
}

// Anthropic is the fake cache. Min is the minimum cacheable prefix, in
// the fake's tokens. It is safe for concurrent use.
type Anthropic struct {
	Min int

	mu      sync.Mutex
	entries map[[32]byte]entry
}

type entry struct {
	expires time.Time
	ttl     time.Duration
}

// Tokens is the fake's tokenizer: a token every four bytes of a text
// block's text, every four bytes of anything else's JSON, plus one.
func Tokens(block map[string]any) int {
	if t, ok := block["text"].(string); ok && (block["type"] == "text" || block["type"] == nil) {
		return len(t)/4 + 1
	}
	b, _ := json.Marshal(block)
	return len(b)/4 + 1
}

type block struct {
	key    [32]byte
	tokens int // through this block
	cc     map[string]any
}

// Serve reads a Messages request body sent at now and says what the
// cache did with it.
func (f *Anthropic) Serve(body []byte, now time.Time) (Usage, error) {
	var req struct {
		Model    string           `json:"model"`
		Tools    []map[string]any `json:"tools"`
		System   json.RawMessage  `json:"system"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return Usage{}, err
	}
	all := append([]map[string]any{}, req.Tools...)
	blocksOf := func(raw json.RawMessage) ([]map[string]any, error) {
		if len(raw) == 0 || string(raw) == "null" {
			return nil, nil
		}
		var bs []map[string]any
		if err := json.Unmarshal(raw, &bs); err != nil {
			var text string
			if err := json.Unmarshal(raw, &text); err != nil {
				return nil, err
			}
			bs = []map[string]any{{"type": "text", "text": text}}
		}
		return bs, nil
	}
	sys, err := blocksOf(req.System)
	if err != nil {
		return Usage{}, err
	}
	all = append(all, sys...)
	for _, m := range req.Messages {
		bs, err := blocksOf(m.Content)
		if err != nil {
			return Usage{}, err
		}
		all = append(all, bs...)
	}
	h := sha256.New()
	h.Write([]byte(req.Model))
	var bl []block
	total := 0
	for _, b := range all {
		cc, _ := b["cache_control"].(map[string]any)
		bare := map[string]any{}
		for k, v := range b {
			if k != "cache_control" {
				bare[k] = v
			}
		}
		j, _ := json.Marshal(bare)
		h.Write(j)
		var k [32]byte
		copy(k[:], h.Sum(nil))
		total += Tokens(bare)
		bl = append(bl, block{key: k, tokens: total, cc: cc})
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.entries == nil {
		f.entries = map[[32]byte]entry{}
	}
	read := -1
	for i := len(bl) - 1; i >= 0; i-- {
		if bl[i].cc == nil {
			continue
		}
		for p := i; p >= 0 && p > i-20; p-- {
			if e, ok := f.entries[bl[p].key]; ok && now.Before(e.expires) {
				read = max(read, p)
				break
			}
		}
	}
	var u Usage
	if read >= 0 {
		u.CacheRead = bl[read].tokens
		e := f.entries[bl[read].key]
		e.expires = now.Add(e.ttl)
		f.entries[bl[read].key] = e
	}
	last := read
	for i, b := range bl {
		if b.cc == nil || i <= read || b.tokens < f.Min {
			continue
		}
		ttl := 5 * time.Minute
		if b.cc["ttl"] == "1h" {
			ttl = time.Hour
		}
		f.entries[b.key] = entry{expires: now.Add(ttl), ttl: ttl}
		last = i
	}
	if last > read {
		u.CacheWrite = bl[last].tokens - u.CacheRead
	}
	u.Input = total - u.CacheRead - u.CacheWrite
	return u, nil
}
