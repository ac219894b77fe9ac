package cache

import (
	"fmt"
	"strings"
	"time"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/request"
)

// anthropic is the Messages API's cache (docs/caching.md, "Anthropic"):
// one sequence of blocks, tools then system then messages; a breakpoint
// writes the prefix ending at its block; a read walks back at most 20
// blocks from each breakpoint for an entry an earlier request wrote; a
// prefix below the model's minimum is not cached, silently.
type anthropic struct{}

// lookback is how many positions a breakpoint checks, its own first.
const lookback = 20

const (
	fiveMinutes = 5 * time.Minute
	oneHour     = time.Hour
)

// anthropicMinimums is the minimum cacheable prefix by model ID, as the
// documentation's table gives it by model name (read 2026-12-03).
var anthropicMinimums = []minRow{
	{"claude-opus-5", 512}, {"claude-fable-5", 512}, {"claude-mythos-5", 512},
	{"claude-opus-4-8", 1024}, {"claude-sonnet-5", 1024}, {"claude-sonnet-4-6", 1024}, {"claude-sonnet-4-5", 1024},
	{"claude-opus-4-1", 1024}, {"claude-opus-4", 1024}, {"claude-sonnet-4", 1024},
	{"claude-mythos-preview", 2048}, {"claude-opus-4-7", 2048}, {"claude-3-5-haiku", 2048},
	{"claude-opus-4-6", 4096}, {"claude-opus-4-5", 4096}, {"claude-haiku-4-5", 4096},
}

// settings: a tool_choice change keeps the tools and system entries; the
// thinking and effort settings are model-specific, read as the worst case
// (everything); speed keeps the tools.
func (anthropic) settings() map[string]string {
	return map[string]string{"tool_choice": "messages", "thinking": "tools", "output_config": "tools", "speed": "system"}
}

// block is one cache position: the segments of one body block.
type block struct {
	path, section, typ string
	last               int // the block's last segment
	cum                int // scaled tokens through the block
	key                digest.Digest
	cache              *payload.CacheControl
	empty              bool
}

// blocks groups a manifest's segments into positions and keys each by
// the prefix that ends there, with the settings that belong to it.
func blocks(m *request.Manifest, settings map[string]string, scale float64) []block {
	order := map[string]int{"tools": 0, "system": 1, "messages": 2}
	var out []block
	chain := digest.Bytes([]byte("model\x00" + m.Model))
	raw := 0
	for i, s := range m.Segments {
		buf := append(chain[:], s.Digest[:]...)
		chain = digest.Bytes(buf)
		raw += s.Tokens
		if i+1 < len(m.Segments) && m.Segments[i+1].Path == s.Path {
			continue
		}
		k := append([]byte{}, chain[:]...)
		for _, name := range sortedKeys(settings) {
			if order[s.Section] >= order[settings[name]] {
				k = append(append(append(k, name...), 0), m.Cache.Settings[name]...)
				k = append(k, 0)
			}
		}
		out = append(out, block{path: s.Path, section: s.Section, typ: s.Type, last: i,
			cum: int(float64(raw)*scale + 0.5), key: digest.Bytes(k), cache: s.Cache, empty: s.Bytes == 0 || s.Type == "text" && emptyText(s.Tokens)})
	}
	return out
}

// breakpoint is a block that writes an entry.
type breakpoint struct {
	pos  int
	ttl  time.Duration
	auto bool
}

// breakpoints reads a request's breakpoints in order, with the rules they
// break: more than four, a 1-hour entry after a 5-minute one, a ttl that
// is neither, a mark on a block that cannot carry one, the automatic one
// on a block marked with another ttl.
func (anthropic) breakpoints(m *request.Manifest, bl []block) ([]breakpoint, []Finding) {
	var bps []breakpoint
	var fs []Finding
	ttl := func(cc *payload.CacheControl, path string) time.Duration {
		if cc.Type != "ephemeral" {
			fs = append(fs, Finding{Severity: "error", Rule: "type", Path: path, Message: fmt.Sprintf("cache_control type %q; the API takes \"ephemeral\" only", cc.Type)})
		}
		switch cc.TTL {
		case "", "5m":
			return fiveMinutes
		case "1h":
			return oneHour
		}
		fs = append(fs, Finding{Severity: "error", Rule: "ttl", Path: path, Message: fmt.Sprintf("ttl %q is neither \"5m\" nor \"1h\"", cc.TTL)})
		return fiveMinutes
	}
	for i, b := range bl {
		if b.cache == nil {
			continue
		}
		if b.typ == "thinking" || b.typ == "redacted_thinking" || b.empty {
			fs = append(fs, Finding{Severity: "error", Rule: "cacheable", Path: b.path, Message: article(describe(b)) + " cannot carry cache_control"})
			continue
		}
		bps = append(bps, breakpoint{pos: i, ttl: ttl(b.cache, b.path)})
	}
	if m.Cache.Auto != nil {
		last := -1
		for i := len(bl) - 1; i >= 0; i-- {
			if b := bl[i]; b.typ != "thinking" && b.typ != "redacted_thinking" && !b.empty {
				last = i
				break
			}
		}
		t := ttl(m.Cache.Auto, "/cache_control")
		switch {
		case last < 0:
		case len(bps) > 0 && bps[len(bps)-1].pos == last && bps[len(bps)-1].ttl != t:
			fs = append(fs, Finding{Severity: "error", Rule: "automatic", Path: bl[last].path,
				Message: "the automatic breakpoint falls on a block marked with another ttl"})
		case len(bps) > 0 && bps[len(bps)-1].pos == last:
		default:
			bps = append(bps, breakpoint{pos: last, ttl: t, auto: true})
		}
	}
	if len(bps) > 4 {
		fs = append(fs, Finding{Severity: "error", Rule: "breakpoints", Path: bl[bps[4].pos].path,
			Message: fmt.Sprintf("%d breakpoints; the API allows 4%s", len(bps), autoSlot(bps))})
	}
	seenShort := ""
	for _, b := range bps {
		if b.ttl == fiveMinutes && seenShort == "" {
			seenShort = bl[b.pos].path
		}
		if b.ttl == oneHour && seenShort != "" {
			fs = append(fs, Finding{Severity: "error", Rule: "ttl-order", Path: bl[b.pos].path,
				Message: fmt.Sprintf("a 1-hour breakpoint after the 5-minute one at %s; 1-hour entries must come first", seenShort)})
			break
		}
	}
	return bps, fs
}

// article puts "a" or "an" before a block's description.
func article(s string) string {
	if s != "" && strings.ContainsRune("aeiou", rune(s[0])) {
		return "an " + s
	}
	return "a " + s
}

// autoSlot says that the automatic breakpoint counts, when there is one.
func autoSlot(bps []breakpoint) string {
	for _, b := range bps {
		if b.auto {
			return " (the automatic one takes a slot)"
		}
	}
	return ""
}

func describe(b block) string {
	switch {
	case b.empty:
		return "empty text block"
	case b.typ != "":
		return b.typ + " block"
	}
	return "block"
}

func hasErrors(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == "error" {
			return true
		}
	}
	return false
}

func (a anthropic) predict(st *state, c *Call, scale float64) Verdict {
	m := c.Request
	bl := blocks(m, a.settings(), scale)
	v := Verdict{Estimate: m.Counter == "estimate"}
	if len(bl) > 0 {
		v.InputTokens = bl[len(bl)-1].cum
	}
	bps, fs := a.breakpoints(m, bl)
	if hasErrors(fs) {
		v.Problems = fs
		return v
	}
	min, known := minimum(m.Model, st.opts, anthropicMinimums)
	// The read: from the last breakpoint back, each window of 20.
	best := -1
	for j := len(bps) - 1; j >= 0; j-- {
		b := bps[j].pos
		for p := b; p >= 0 && p > b-lookback; p-- {
			if e := st.entries[bl[p].key]; e != nil && e.alive(c.At) {
				best = max(best, p)
				break
			}
		}
	}
	if best >= 0 {
		// The read is the entry's own count: the provider's, where the
		// call that wrote it reported one.
		e := st.entries[bl[best].key]
		e.expires = c.At.Add(e.ttl)
		v.Predicted.Read, v.ReadThrough = e.tokens, bl[best].path
	}
	v.Blame = a.blame(st, c, bl, best, v.Predicted.Read)
	// The writes: every breakpoint past the read whose prefix is long
	// enough.
	began := c.Began
	if began.IsZero() {
		began = c.At
	}
	lastWrite, last1h := -1, -1
	// Each breakpoint below the minimum is blamed for the tokens past the
	// one before it: the prefixes overlap, and a miss is priced once.
	blamedThrough := v.Predicted.Read
	for _, b := range bps {
		if b.pos <= best {
			continue
		}
		if known && bl[b.pos].cum < min {
			tokens := max(bl[b.pos].cum-blamedThrough, 0)
			blamedThrough = max(blamedThrough, bl[b.pos].cum)
			v.Blame = append(v.Blame, Blame{Kind: "minimum", Path: bl[b.pos].path, Section: bl[b.pos].section, Tokens: tokens,
				Reason: fmt.Sprintf("breakpoint at %s is below %s's %s-token minimum (its prefix is about %s tokens): nothing is cached there",
					bl[b.pos].path, m.Model, thousands(min), thousands(bl[b.pos].cum))})
			continue
		}
		st.entries[bl[b.pos].key] = &entry{call: c.Name, path: bl[b.pos].path, pos: b.pos, tokens: bl[b.pos].cum,
			ttl: b.ttl, expires: c.At.Add(b.ttl), readable: began}
		lastWrite = b.pos
		if b.ttl == oneHour {
			last1h = b.pos
		}
	}
	if lastWrite > best {
		v.Predicted.Write = max(bl[lastWrite].cum-v.Predicted.Read, 0)
		// Billed as the documentation says: 1-hour writes up to the last
		// 1-hour breakpoint, 5-minute ones from there to the last.
		long := 0
		if last1h >= 0 {
			long = max(bl[last1h].cum-v.Predicted.Read, 0)
			if long > v.Predicted.Write {
				long = v.Predicted.Write
			}
		}
		v.writes = []lifetimeTokens{{"1h", long}, {"5m", v.Predicted.Write - long}}
		if r := c.Reported; r != nil && r.CacheWriteTokens > 0 {
			// What the provider counted through its last write is exact:
			// a later read of this entry is that many tokens.
			st.entries[bl[lastWrite].key].tokens = r.CacheReadTokens + r.CacheWriteTokens
		}
	}
	return v
}

// blame says why c read less than the calls before it had cached: the
// first change against the request that shares the most of its prefix,
// when the change falls inside what that request cached; or, when the
// shared prefix reaches past the read, the entry that was there and why
// it could not be read (expired, too far back, not yet readable).
func (a anthropic) blame(st *state, c *Call, bl []block, best, read int) []Blame {
	return blameMiss(st, c, bl, best, read, func(h *request.Manifest) []block { return blocks(h, a.settings(), 1) },
		fmt.Sprintf("is more than %d blocks behind every breakpoint of this call", lookback))
}

// blameMiss is blame for any cache whose entries are keyed by blocks:
// hblocks gives an earlier request's blocks keyed as bl is, and
// unreachable ends the reason an entry that was there, alive and readable,
// was not read.
func blameMiss(st *state, c *Call, bl []block, best, read int, hblocks func(*request.Manifest) []block, unreachable string) []Blame {
	h, d, ok := st.best(c)
	if !ok {
		return nil
	}
	hb := hblocks(h.Request)
	// The farthest position h's prefix was cached through (any entry h or
	// an earlier call wrote on h's prefix).
	cached := -1
	for p := len(hb) - 1; p >= 0; p-- {
		if st.entries[hb[p].key] != nil {
			cached = p
			break
		}
	}
	if cached < 0 {
		return nil
	}
	// A request that ends inside h's (h went on past it) has changed
	// nothing: it can read all of itself that h cached, and what it did
	// not read has a reason below, or none.
	ended := d.Setting == "" && d.Index >= len(c.Request.Segments)
	if !ended && d.Index <= hb[cached].last {
		// The change is inside what was cached.
		lost := st.entries[hb[cached].key].tokens - read
		return []Blame{{Kind: "change", Path: d.Path, Section: d.Section, Since: h.Name, Tokens: max(lost, 0),
			Reason: fmt.Sprintf("%s %s since call %s", d.Path, d.Reason, h.Name)}}
	}
	// The prefix is whole through h's cached entry: if it was not read,
	// say why.
	for p := len(bl) - 1; p > best; p-- {
		if bl[p].last > hb[cached].last {
			continue
		}
		e := st.entries[bl[p].key]
		if e == nil {
			continue
		}
		switch {
		case !c.At.Before(e.expires):
			return []Blame{{Kind: "expired", Path: e.path, Section: bl[p].section, Since: e.call, Tokens: e.tokens,
				Reason: fmt.Sprintf("the entry at %s (call %s) expired: its %s lifetime ended %s before this call", e.path, e.call, ttlName(e.ttl), c.At.Sub(e.expires).Round(time.Second))}}
		case c.At.Before(e.readable):
			return []Blame{{Kind: "concurrent", Path: e.path, Section: bl[p].section, Since: e.call, Tokens: e.tokens,
				Reason: fmt.Sprintf("the entry at %s (call %s) was not readable yet: this call started before that call's answer began", e.path, e.call)}}
		default:
			return []Blame{{Kind: "lookback", Path: e.path, Section: bl[p].section, Since: e.call, Tokens: e.tokens,
				Reason: fmt.Sprintf("the entry at %s (call %s) %s", e.path, e.call, unreachable)}}
		}
	}
	return nil
}

func (a anthropic) lint(m, since *request.Manifest, o *Options) []Finding {
	bl := blocks(m, a.settings(), 1)
	bps, fs := a.breakpoints(m, bl)
	min, known := minimum(m.Model, o, anthropicMinimums)
	if !known {
		fs = append(fs, Finding{Severity: "warning", Rule: "minimum", Message: fmt.Sprintf("minimum unknown: model %q is not in the table (docs/caching.md); give one with --min", m.Model)})
	}
	if len(bps) == 0 && len(bl) > 0 && (!known || bl[len(bl)-1].cum >= min) {
		fs = append(fs, Finding{Severity: "warning", Rule: "no-breakpoint", Message: "no cache_control breakpoint and no automatic caching: nothing is cached"})
	}
	for _, b := range bps {
		if known && bl[b.pos].cum < min {
			fs = append(fs, Finding{Severity: "warning", Rule: "minimum", Path: bl[b.pos].path,
				Message: fmt.Sprintf("breakpoint below %s's %s-token minimum (its prefix is about %s tokens): nothing is cached, and no error is returned", m.Model, thousands(min), thousands(bl[b.pos].cum))})
		}
	}
	if since == nil {
		return fs
	}
	d := diverge(since, m)
	sb := blocks(since, a.settings(), 1)
	sbps, _ := a.breakpoints(since, sb)
	if len(sbps) > 0 {
		last := sbps[len(sbps)-1].pos
		if d.Index <= sb[last].last {
			rule := "changed"
			if d.Setting == "" && d.Section == "tools" && d.Reason != "" && d.Reason[:5] == "tools" {
				rule = "tool-order"
			}
			fs = append(fs, Finding{Severity: "warning", Rule: rule, Path: d.Path,
				Message: fmt.Sprintf("%s, ahead of the previous request's breakpoint at %s: the cache is written again from here", d.Reason, sb[last].path)})
		} else {
			// The previous breakpoint's entry is reusable: is it within
			// reach of one of this request's breakpoints?
			reach := false
			for _, b := range bps {
				if b.pos >= last && b.pos-last < lookback {
					reach = true
				}
			}
			if !reach && len(bps) > 0 {
				fs = append(fs, Finding{Severity: "warning", Rule: "lookback", Path: sb[last].path,
					Message: fmt.Sprintf("the previous request's entry at %s is more than %d blocks behind every breakpoint here: it will not be read", sb[last].path, lookback)})
			}
		}
	}
	return fs
}

// emptyText: a text block that counts no tokens has no text.
func emptyText(tokens int) bool { return tokens == 0 }

// ttlName writes a lifetime as the API does ("5m", "1h").
func ttlName(d time.Duration) string {
	if d%time.Hour == 0 {
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	if d%time.Minute == 0 {
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}
