package cache

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/request"
)

// OpenAI's cache from GPT-5.6 on (docs/caching.md, "GPT-5.6 and later"):
// entries end at breakpoints, not at token steps. In implicit mode (the
// default) the request writes one at the end of its latest eligible
// message and at its latest three explicit markers; in explicit mode at
// its latest four markers. A read is the longest live entry among the
// request's lookup boundaries, exactly its tokens; writes are billed, and
// every entry lives 30 minutes from its last write or read.
const (
	maxWrites56      = 4
	firstExplicit56  = 2  // the first explicit markers are lookup boundaries,
	latestExplicit56 = 50 // and so are the latest ones,
	earlierEnds56    = 20 // and, in implicit mode, earlier eligible message ends
	lifetime56       = 30 * time.Minute
	minimum56        = 1024
)

// gpt56 reports whether m is for a model of the regime that has
// breakpoints: GPT-5.6 or later by its name, or a request that uses the
// regime's own fields (no earlier model accepts them).
func gpt56(m *request.Manifest) bool {
	if m.Cache.Mode != "" {
		return true
	}
	for _, s := range m.Segments {
		if s.Cache != nil {
			return true
		}
	}
	rest, ok := strings.CutPrefix(strings.ToLower(m.Model), "gpt-")
	if !ok {
		return false
	}
	major, rest := leadingNumber(rest)
	minor := 0
	if r, ok := strings.CutPrefix(rest, "."); ok {
		minor, _ = leadingNumber(r)
	}
	return major > 5 || major == 5 && minor >= 6
}

// leadingNumber reads the decimal digits s starts with (-1 for none) and
// returns what follows them.
func leadingNumber(s string) (int, string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, err := strconv.Atoi(s[:i])
	if err != nil {
		return -1, s
	}
	return n, s[i:]
}

// boundaries56 are a GPT-5.6 request's cache positions (indexes into bl):
// where it writes, and where it looks for an entry, each ascending.
type boundaries56 struct {
	writes, lookups []int
	explicitMode    bool
	markers         int
}

// message56 is one message's last block and what kind of message it is.
type message56 struct {
	end  int
	kind string // "user", "tool", "developer", "other"
}

func messages56(m *request.Manifest, bl []block) []message56 {
	var out []message56
	prev := ""
	for i, b := range bl {
		id := messageOf(b.path)
		if id == "" {
			continue
		}
		s := m.Segments[b.last]
		kind := "other"
		switch {
		case s.Role == "user":
			kind = "user"
		case s.Role == "tool" || s.Type == "function_call_output" || s.Type == "custom_tool_call_output":
			kind = "tool"
		case s.Role == "developer" || s.Role == "system":
			kind = "developer"
		}
		if id == prev {
			out[len(out)-1].end = i
			continue
		}
		out = append(out, message56{end: i, kind: kind})
		prev = id
	}
	return out
}

// messageOf is the pointer of the message a block belongs to
// ("/messages/3" for "/messages/3/content/0"), "" for a block outside the
// message list (a tool definition, Responses' instructions).
func messageOf(path string) string {
	if path == "/input" { // Responses' input as one string: one user message
		return path
	}
	for _, list := range []string{"/messages/", "/input/"} {
		if rest, ok := strings.CutPrefix(path, list); ok {
			n, _, _ := strings.Cut(rest, "/")
			return list + n
		}
	}
	return ""
}

func breakpoints56(m *request.Manifest, bl []block) boundaries56 {
	var b boundaries56
	b.explicitMode = m.Cache.Mode == "explicit"
	var explicit []int
	for p, x := range bl {
		if x.cache != nil && x.cache.Type == "explicit" {
			explicit = append(explicit, p)
		}
	}
	b.markers = len(explicit)
	look := map[int]bool{}
	for i, p := range explicit {
		if i < firstExplicit56 || i >= len(explicit)-latestExplicit56 {
			look[p] = true
		}
	}
	writes := explicit
	if !b.explicitMode {
		// The eligible message ends: user messages, the last of a run of
		// tool responses, the last of the first run of developer messages.
		msgs := messages56(m, bl)
		var ends []int
		firstDev, devRun := -1, true
		for i, x := range msgs {
			switch x.kind {
			case "user":
				ends = append(ends, x.end)
			case "tool":
				if i+1 == len(msgs) || msgs[i+1].kind != "tool" {
					ends = append(ends, x.end)
				}
			case "developer":
				if devRun && (i+1 == len(msgs) || msgs[i+1].kind != "developer") {
					firstDev = x.end
					ends = append(ends, x.end)
				}
			}
			if firstDev >= 0 || x.kind != "developer" && i > 0 && msgs[i-1].kind == "developer" {
				devRun = false
			}
		}
		if len(ends) > 0 {
			implicit := ends[len(ends)-1]
			writes = slices.Concat(lastN(explicit, maxWrites56-1), []int{implicit})
			for i := len(ends) - 1; i >= 0 && i >= len(ends)-1-earlierEnds56; i-- {
				look[ends[i]] = true
			}
		} else {
			writes = lastN(explicit, maxWrites56-1)
		}
		if firstDev >= 0 {
			look[firstDev] = true
		}
	} else {
		writes = lastN(explicit, maxWrites56)
	}
	b.writes = sortedUnique(writes)
	for p := range look {
		b.lookups = append(b.lookups, p)
	}
	b.lookups = sortedUnique(append(b.lookups, b.writes...))
	return b
}

func lastN(xs []int, n int) []int {
	if len(xs) > n {
		return xs[len(xs)-n:]
	}
	return xs
}

func sortedUnique(xs []int) []int {
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}

// seeded56 is m keyed as OpenAI keys its entries: by model and
// prompt_cache_key, so that two keys never share one.
func seeded56(m *request.Manifest) *request.Manifest {
	s := *m
	s.Model = m.Model + "\x00openai\x00" + m.Cache.Key
	return &s
}

func (o openai) predict56(st *state, c *Call, scale float64) Verdict {
	m := c.Request
	bl := blocks(seeded56(m), o.settings(), scale)
	v := Verdict{Estimate: m.Counter == "estimate"}
	if len(bl) == 0 {
		return v
	}
	v.InputTokens = bl[len(bl)-1].cum
	b := breakpoints56(m, bl)
	min := minimum56
	if n, ok := minimum(m.Model, st.opts, nil); ok {
		min = n
	}
	best := -1
	for i := len(b.lookups) - 1; i >= 0; i-- {
		if e := st.entries[bl[b.lookups[i]].key]; e != nil && e.alive(c.At) {
			best = b.lookups[i]
			break
		}
	}
	if best >= 0 {
		e := st.entries[bl[best].key]
		e.expires = c.At.Add(e.ttl)
		v.Predicted.Read, v.ReadThrough = e.tokens, bl[best].path
	}
	v.Blame = blameMiss(st, c, bl, best, v.Predicted.Read,
		func(h *request.Manifest) []block { return blocks(seeded56(h), o.settings(), 1) },
		"is not one of this call's lookup boundaries (its explicit markers, its eligible message ends)")
	if b.explicitMode && b.markers == 0 {
		v.Blame = append(v.Blame, Blame{Kind: "minimum", Tokens: 0,
			Reason: "explicit mode with no prompt_cache_breakpoint: nothing is cached"})
	}
	ttl := lifetime56
	if st.opts.Lifetime > 0 {
		ttl = st.opts.Lifetime
	}
	began := c.Began
	if began.IsZero() {
		began = c.At
	}
	lastWrite := -1
	for _, p := range b.writes {
		if p <= best {
			continue
		}
		if bl[p].cum < min {
			v.Blame = append(v.Blame, Blame{Kind: "minimum", Path: bl[p].path, Section: bl[p].section, Tokens: 0,
				Reason: fmt.Sprintf("breakpoint at %s is below %s's %s-token minimum (its prefix is about %s tokens): nothing is cached there",
					bl[p].path, m.Model, thousands(min), thousands(bl[p].cum))})
			continue
		}
		if e := st.entries[bl[p].key]; e != nil && e.alive(c.At) {
			e.expires = c.At.Add(ttl)
			continue
		}
		st.entries[bl[p].key] = &entry{call: c.Name, path: bl[p].path, pos: p, tokens: bl[p].cum, ttl: ttl,
			expires: c.At.Add(ttl), readable: began}
		lastWrite = p
	}
	if lastWrite > best {
		v.Predicted.Write = max(bl[lastWrite].cum-v.Predicted.Read, 0)
		v.writes = []lifetimeTokens{{writeLifetime56(m), v.Predicted.Write}}
		if r := c.Reported; r != nil && r.CacheWriteTokens > 0 {
			st.entries[bl[lastWrite].key].tokens = r.CacheReadTokens + r.CacheWriteTokens
		}
	}
	return v
}

// writeLifetime56 is the lifetime a GPT-5.6 request's writes are billed
// at, as the request names it: its ttl, "30m" when it names none.
func writeLifetime56(m *request.Manifest) string {
	if m.Cache.Retention != "" {
		return m.Cache.Retention
	}
	return "30m"
}

func (o openai) lint56(m, since *request.Manifest, opts *Options) []Finding {
	fs := implicitLint(m, since, opts, o.rules(), "OpenAI")
	bl := blocks(m, o.settings(), 1)
	b := breakpoints56(m, bl)
	if b.explicitMode && b.markers == 0 {
		fs = append(fs, Finding{Severity: "warning", Rule: "no-breakpoint", Message: "prompt_cache_options.mode is explicit and no block has a prompt_cache_breakpoint: nothing is cached"})
	}
	if n := b.markers; n > maxWrites56 || !b.explicitMode && n > maxWrites56-1 {
		kept := maxWrites56
		if !b.explicitMode {
			kept = maxWrites56 - 1
		}
		fs = append(fs, Finding{Severity: "warning", Rule: "breakpoints", Message: fmt.Sprintf("%d prompt_cache_breakpoint markers: only the latest %d are written (the rest are lookup boundaries at most)", n, kept)})
	}
	for _, x := range bl {
		if x.cache != nil && !markAccepted(m.Provider, m.Segments[x.last]) {
			fs = append(fs, Finding{Severity: "warning", Rule: "mark-place", Path: x.path,
				Message: fmt.Sprintf("a prompt_cache_breakpoint on a %s block of a %s message, where the API does not document one", orNone(x.typ), orNone(m.Segments[x.last].Role))})
		}
		if x.cache != nil && x.cache.Type != "explicit" {
			fs = append(fs, Finding{Severity: "warning", Rule: "mark-mode", Path: x.path, Message: fmt.Sprintf("prompt_cache_breakpoint mode %q: only \"explicit\" is documented", x.cache.Type)})
		}
	}
	// A written breakpoint whose prefix is short caches nothing, and the
	// API says nothing: as on Anthropic, lint says it before it is sent.
	min := minimum56
	if n, ok := minimum(m.Model, opts, nil); ok {
		min = n
	}
	for _, p := range b.writes {
		if x := bl[p]; x.cache != nil && x.cum < min {
			fs = append(fs, Finding{Severity: "warning", Rule: "minimum", Path: x.path,
				Message: fmt.Sprintf("breakpoint below %s's %s-token minimum (its prefix is about %s tokens): nothing is cached, and no error is returned", m.Model, thousands(min), thousands(x.cum))})
		}
	}
	return fs
}

// breakpointsList56 is Breakpoints for GPT-5.6: the positions the request
// writes, each marker or the implicit one.
func breakpointsList56(m *request.Manifest, o *Options) []Breakpoint {
	bl := blocks(m, openai{}.settings(), 1)
	b := breakpoints56(m, bl)
	min := minimum56
	if n, ok := minimum(m.Model, o, nil); ok {
		min = n
	}
	ttl := "30m"
	if o.Lifetime > 0 {
		ttl = o.Lifetime.String()
	}
	var out []Breakpoint
	for _, p := range b.writes {
		x := bl[p]
		bp := Breakpoint{Path: x.path, TTL: ttl, Segments: x.last + 1, Tokens: x.cum, Cached: x.cum >= min, Caches: caches(m, x)}
		if x.cache == nil {
			bp.Caches = "implicit, the latest eligible message: " + bp.Caches
		}
		if !bp.Cached {
			bp.Caches += fmt.Sprintf("; below %s's %s-token minimum, so nothing is cached here", m.Model, thousands(min))
		}
		out = append(out, bp)
	}
	return out
}

// markAccepted reports whether OpenAI documents a prompt_cache_breakpoint
// on the block s: in Chat Completions on text parts of any message and on
// image, audio and file parts of user messages; in Responses on content
// blocks of input messages.
func markAccepted(provider string, s request.Segment) bool {
	if provider == string(payload.OpenAIResponses) {
		return s.Role != ""
	}
	switch s.Type {
	case "text":
		return true
	case "image_url", "input_audio", "file":
		return s.Role == "user"
	}
	return false
}

func orNone(s string) string {
	if s == "" {
		return "bare"
	}
	return s
}
