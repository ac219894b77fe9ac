package cache

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/request"
)

// contextWindows is the largest request each model takes, in tokens, by
// model ID as the price table matches them (docs/caching.md, "The session
// lint"): the input limit where the provider gives one apart from the
// context window.
var contextWindows = []minRow{
	{"claude-fable-5-1", 1_000_000}, {"claude-fable-5", 1_000_000},
	{"claude-opus-5-5", 1_000_000}, {"claude-opus-5", 1_000_000},
	{"claude-sonnet-5-5", 1_000_000}, {"claude-sonnet-5", 1_000_000},
	{"claude-haiku-4-5", 200_000},
	{"gpt-6.2-sol", 922_000}, {"gpt-5.6-sol", 1_050_000},
}

// session is one conversation's calls, in order, with their verdicts.
type session struct {
	calls    []*Call
	verdicts []*Verdict
}

// lintSessions holds each session's history to the caches' rules: what
// changed on every call ahead of a breakpoint, tools that moved or were
// re-described, a growing conversation no breakpoint follows, lifetimes
// out of order or falling, prefixes under the minimum, requests over the
// context window. Each finding names the change to make and what it would
// have saved over the session.
func lintSessions(calls []Call, a *Analysis, o *Options) []Finding {
	var order []string
	by := map[string]*session{}
	for i := range calls {
		if i >= len(a.Verdicts) {
			break
		}
		k := conversation(&calls[i])
		if by[k] == nil {
			by[k] = &session{}
			order = append(order, k)
		}
		by[k].calls = append(by[k].calls, &calls[i])
		by[k].verdicts = append(by[k].verdicts, &a.Verdicts[i])
	}
	var out []Finding
	for _, k := range order {
		s := by[k]
		l := &linter{s: s, o: o}
		for _, rule := range []func() *Finding{l.volatile, l.tools, l.tail, l.ttlOrder, l.ttlFall, l.minimum, l.window} {
			if f := rule(); f != nil {
				f.Severity = "warning"
				f.Session = s.calls[0].Session
				if f.Model == "" {
					f.Model = s.calls[len(s.calls)-1].Request.Model
				}
				out = append(out, *f)
			}
		}
	}
	return out
}

type linter struct {
	s *session
	o *Options
}

// scale is call i's ratio of the provider's tokens to the manifest's.
func (l *linter) scale(i int) float64 {
	m, v := l.s.calls[i].Request, l.s.verdicts[i]
	if m.Tokens > 0 && v.InputTokens > 0 {
		return float64(v.InputTokens) / float64(m.Tokens)
	}
	return 1
}

func scaled(n int, f float64) int { return int(float64(n)*f + 0.5) }

// rates are call i's prices (false: the table has none for its model).
func (l *linter) rates(i int) (rates, bool) {
	c := l.s.calls[i]
	r, ok := l.o.prices().lookup(c.Request.Provider, c.Request.Model)
	if !ok {
		return rates{}, false
	}
	return r.tier(l.s.verdicts[i].InputTokens), true
}

// blamed adds up the blames that match, in tokens and money, and counts
// the calls they are on.
func (l *linter) blamed(match func(i int, b Blame) bool) (tokens int, cost int64, calls int) {
	for i, v := range l.s.verdicts {
		hit := false
		for _, b := range v.Blame {
			if match(i, b) {
				tokens += b.Tokens
				cost = addMicros(cost, b.Cost)
				hit = true
			}
		}
		if hit {
			calls++
		}
	}
	return tokens, cost, calls
}

// volatile: a segment whose bytes differ on every call of the session
// (a timestamp, an id), ahead of a breakpoint: every call writes again
// from there. Tools are the tools rule's.
func (l *linter) volatile() *Finding {
	cs := l.s.calls
	if len(cs) < 3 {
		return nil
	}
	digests := make([]map[string]string, len(cs))
	for i, c := range cs {
		digests[i] = map[string]string{}
		for _, seg := range c.Request.Segments {
			digests[i][seg.Path] += seg.Digest.String()
		}
	}
	var found []string
	for j, seg := range cs[0].Request.Segments {
		p := seg.Path
		if seg.Section == "tools" || j > 0 && cs[0].Request.Segments[j-1].Path == p || slices.Contains(found, p) {
			continue
		}
		every := true
		for i := 1; i < len(cs) && every; i++ {
			d, ok := digests[i][p]
			every = ok && d != digests[i-1][p] && l.ahead(cs[i].Request, p)
		}
		if every {
			found = append(found, p)
		}
	}
	if len(found) == 0 {
		return nil
	}
	// The first such segment is the one every miss names.
	path := found[0]
	tokens, cost, calls := l.blamed(func(_ int, b Blame) bool { return b.Kind == "change" && b.Path == path })
	last := "its bytes differ"
	for _, v := range l.s.verdicts {
		for _, b := range v.Blame {
			if b.Kind == "change" && b.Path == path {
				last = b.Reason
			}
		}
	}
	also := ""
	if len(found) > 1 {
		also = fmt.Sprintf(" (so do %s)", strings.Join(found[1:], ", "))
	}
	return &Finding{Rule: "volatile", Path: path, Calls: len(cs),
		Message: fmt.Sprintf("%s changes on every call of the session (%d calls), ahead of a breakpoint%s; last: %s; %s wrote the prefix again from there",
			path, len(cs), also, last, plural(calls, "call")),
		Fix:          fmt.Sprintf("move what changes in %s (a time, an id) after the last breakpoint, into the newest message, or out of the prompt, so the prefix ahead of the breakpoint is the same on every call", path),
		SavingTokens: tokens, SavingCost: cost}
}

// ahead reports whether the segment at path lies ahead of one of m's
// breakpoints (for an implicit cache, anywhere in the prefix).
func (l *linter) ahead(m *request.Manifest, path string) bool {
	at := -1
	for i, seg := range m.Segments {
		if seg.Path == path {
			at = i
			break
		}
	}
	for _, b := range Breakpoints(m, l.o) {
		if at >= 0 && b.Segments > at {
			return true
		}
	}
	return false
}

// tools: the tool definitions changed between calls, reordered or
// re-described.
func (l *linter) tools() *Finding {
	cs := l.s.calls
	reordered, redescribed := 0, 0
	first, path := "", ""
	for i := 1; i < len(cs); i++ {
		d := diverge(cs[i-1].Request, cs[i].Request)
		if d.Setting != "" || d.Section != "tools" || d.Index >= len(cs[i-1].Request.Segments) {
			continue
		}
		if strings.HasPrefix(d.Reason, "tools reordered") {
			reordered++
		} else {
			redescribed++
		}
		if first == "" {
			first, path = d.Reason, d.Path
		}
	}
	if reordered+redescribed == 0 {
		return nil
	}
	tokens, cost, _ := l.blamed(func(_ int, b Blame) bool { return b.Kind == "change" && b.Section == "tools" })
	rule := "tools-changed"
	if redescribed == 0 {
		rule = "tool-order"
	}
	return &Finding{Rule: rule, Path: path, Calls: reordered + redescribed,
		Message: fmt.Sprintf("the tools changed between calls: reordered on %s, re-described on %s (first: %s); tools come first in the prefix, so each change writes everything again",
			plural(reordered, "call"), plural(redescribed, "call"), first),
		Fix:          "send the same tools on every call of a session, in one order (sorted by name, say) and with the same descriptions and schemas; put what varies in a message, or choose tools with tool_choice",
		SavingTokens: tokens, SavingCost: cost}
}

// tail: a conversation that grows, whose last breakpoint lies behind what
// the call before it already sent (Anthropic's explicit breakpoints).
func (l *linter) tail() *Finding {
	cs := l.s.calls
	if len(cs) < 3 || payload.Provider(cs[0].Request.Provider) != payload.Anthropic {
		return nil
	}
	grew, tokens := 0, 0
	var cost money
	priced := true
	lastPath := ""
	for i := range cs {
		cur := cs[i].Request
		bps := Breakpoints(cur, l.o)
		bpTokens := 0
		lastPath = ""
		if len(bps) > 0 {
			bpTokens, lastPath = bps[len(bps)-1].Tokens, bps[len(bps)-1].Path
		}
		f := l.scale(i)
		r, ok := l.rates(i)
		priced = priced && ok
		tailTokens := scaled(cur.Tokens-bpTokens, f)
		if i == 0 {
			// The first call would write its tail once more.
			cost.add(tailTokens, r.write["5m"]-r.input)
			continue
		}
		prev := cs[i-1].Request
		d := diverge(prev, cur)
		if messages(cur) <= messages(prev) || d.Index < firstMessage(prev) {
			continue
		}
		lost := scaled(d.SharedTokens-bpTokens, f)
		if lost <= 0 {
			continue
		}
		grew++
		tokens += lost
		fresh := scaled(cur.Tokens-d.SharedTokens, f)
		cost.add(lost, r.input-r.read)
		cost.add(fresh, r.write["5m"]-r.input)
	}
	saving := cost.micros()
	if grew < 2 || priced && saving <= 0 {
		return nil
	}
	if !priced {
		saving = 0
	}
	where := "no breakpoint"
	if lastPath != "" {
		where = "the last breakpoint is at " + lastPath
	}
	return &Finding{Rule: "tail-breakpoint", Path: lastPath, Calls: grew,
		Message: fmt.Sprintf("the conversation grows on %s, and %s: what the call before sent is sent again as input every time", plural(grew, "call"), where),
		Fix:     "put a cache_control breakpoint on the newest message block of every request (or turn on automatic caching, a top-level cache_control), so each call reads what the one before it wrote",
		// The saving: the conversation read instead of sent, less the
		// dearer write of each call's new tail.
		SavingTokens: tokens, SavingCost: saving}
}

// messages counts m's message segments.
func messages(m *request.Manifest) int {
	n := 0
	for _, s := range m.Segments {
		if s.Section == "messages" {
			n++
		}
	}
	return n
}

// firstMessage is the index of m's first message segment.
func firstMessage(m *request.Manifest) int {
	for i, s := range m.Segments {
		if s.Section == "messages" {
			return i
		}
	}
	return len(m.Segments)
}

// ttlOrder: calls the API refuses for a 1-hour breakpoint after a
// 5-minute one.
func (l *linter) ttlOrder() *Finding {
	n, tokens, path := 0, 0, ""
	var cost money
	priced := true
	for i, v := range l.s.verdicts {
		bad := false
		for _, p := range v.Problems {
			if p.Rule == "ttl-order" {
				bad, path = true, cmp.Or(path, p.Path)
			}
		}
		if !bad {
			continue
		}
		n++
		if i == 0 {
			continue
		}
		// What the call could have read of the one before it.
		prev, cur := l.s.calls[i-1].Request, l.s.calls[i].Request
		d := diverge(prev, cur)
		cached := 0
		if bps := Breakpoints(prev, l.o); len(bps) > 0 {
			cached = bps[len(bps)-1].Tokens
		}
		t := scaled(min(d.SharedTokens, cached), l.scale(i))
		tokens += t
		r, ok := l.rates(i)
		priced = priced && ok
		cost.add(t, r.input-r.read)
	}
	if n == 0 {
		return nil
	}
	saving := cost.micros()
	if !priced {
		saving = 0
	}
	return &Finding{Rule: "ttl-order", Path: path, Calls: n,
		Message: fmt.Sprintf("%s put a 1-hour breakpoint after a 5-minute one (at %s): the API refuses such a request, so nothing was read or written", plural(n, "call"), path),
		Fix:     "put every 1h breakpoint ahead of the 5m ones (tools and system 1h, the conversation's tail 5m), or give all breakpoints one lifetime",
		// The saving is what the refused calls could have read.
		SavingTokens: tokens, SavingCost: saving}
}

// longest is the longest lifetime among m's breakpoints ("" for none).
func (l *linter) longest(m *request.Manifest) string {
	ttl := ""
	for _, b := range Breakpoints(m, l.o) {
		if b.TTL == "1h" {
			return "1h"
		}
		if b.TTL != "" {
			ttl = b.TTL
		}
	}
	return ttl
}

// ttlFall: a session whose breakpoints were 1 hour and became 5 minutes.
func (l *linter) ttlFall() *Finding {
	cs := l.s.calls
	if payload.Provider(cs[0].Request.Provider) != payload.Anthropic {
		return nil
	}
	fall := -1
	for i := 1; i < len(cs) && fall < 0; i++ {
		if l.longest(cs[i-1].Request) == "1h" && l.longest(cs[i].Request) == "5m" {
			fall = i
		}
	}
	if fall < 0 {
		return nil
	}
	// Saved by keeping 1h: the entries that expired after the fall though
	// the call came within the hour, less the dearer 1-hour writes.
	tokens := 0
	var premium money
	var missed int64
	priced := true
	for i := fall; i < len(cs); i++ {
		v := l.s.verdicts[i]
		r, ok := l.rates(i)
		priced = priced && ok
		for _, w := range v.writes {
			if w.ttl == "5m" {
				premium.add(w.tokens, r.write["1h"]-r.write["5m"])
			}
		}
		if gap := cs[i].At.Sub(cs[i-1].At); gap < time.Hour {
			for _, b := range v.Blame {
				if b.Kind == "expired" {
					tokens += b.Tokens
					missed = addMicros(missed, b.Cost)
				}
			}
		}
	}
	saving := max(addMicros(missed, -premium.micros()), 0)
	if !priced {
		saving = 0
	}
	return &Finding{Rule: "ttl-fall", Calls: len(cs) - fall,
		Message: fmt.Sprintf("the cache lifetime fell from 1h to 5m at call %s (call %s asked for 1h): entries now expire after 5 minutes; %s tokens expired after the fall on calls that came within the hour",
			cs[fall].Name, cs[fall-1].Name, thousands(tokens)),
		Fix:          `keep "ttl": "1h" on the breakpoints for the whole session (check what changed the request at that call: a client or a proxy that rewrites cache_control)`,
		SavingTokens: tokens, SavingCost: saving}
}

// minimum: breakpoints, or whole requests, under the model's minimum.
func (l *linter) minimum() *Finding {
	path, n, tokens := "", 0, 0
	var cost money
	priced := true
	for i, v := range l.s.verdicts {
		hit := false
		floor, known := minFor(l.s.calls[i].Request, l.o)
		for _, b := range v.Blame {
			// A blame with no path is a whole request under the minimum
			// (not GPT-5.6's explicit mode with no marker, also blamed so).
			if b.Kind == "minimum" && (b.Path != "" || known && v.InputTokens < floor) {
				hit, path = true, cmp.Or(path, b.Path)
			}
		}
		if !hit {
			continue
		}
		n++
		if i == 0 {
			continue
		}
		// With a breakpoint at the end of the prefix shared with the call
		// before, past the minimum, it would have been read.
		min, known := minFor(l.s.calls[i].Request, l.o)
		d := diverge(l.s.calls[i-1].Request, l.s.calls[i].Request)
		if f := l.scale(i); known && scaled(d.SharedTokens, f) >= min {
			t := max(scaled(d.SharedTokens, f)-v.Predicted.Read, 0)
			tokens += t
			r, ok := l.rates(i)
			priced = priced && ok
			cost.add(t, r.input-r.read)
		}
	}
	if n == 0 {
		return nil
	}
	m := l.s.calls[len(l.s.calls)-1].Request
	min, _ := minFor(m, l.o)
	saving := cost.micros()
	if !priced {
		saving = 0
	}
	f := &Finding{Rule: "minimum", Path: path, Calls: n, SavingTokens: tokens, SavingCost: saving}
	if path != "" {
		f.Message = fmt.Sprintf("on %s the breakpoint at %s caches a prefix under %s's %s-token minimum: nothing is cached there, and no error says so", plural(n, "call"), path, m.Model, thousands(min))
		f.Fix = fmt.Sprintf("move the breakpoint later, to the end of what the calls share (past %s tokens), or drop it", thousands(min))
	} else {
		f.Message = fmt.Sprintf("%s are under %s's %s-token minimum: the provider caches none of them", plural(n, "call"), m.Model, thousands(min))
		f.Fix = fmt.Sprintf("nothing to change unless the prefix the calls share can pass %s tokens (a longer, stable system prompt or tool list first)", thousands(min))
	}
	return f
}

// minFor is m's model's minimum cacheable prefix.
func minFor(m *request.Manifest, o *Options) (int, bool) {
	switch payload.Provider(m.Provider) {
	case payload.Anthropic:
		return minimum(m.Model, o, anthropicMinimums)
	case payload.Gemini:
		return gemini{}.rules().min(m, o)
	}
	if n, ok := minimum(m.Model, o, nil); ok {
		return n, true
	}
	return minimum56, true
}

// window: requests larger than the model takes.
func (l *linter) window() *Finding {
	n, tokens, largest, limit := 0, 0, 0, 0
	var cost money
	priced := true
	for i, c := range l.s.calls {
		w, ok := contextWindow(c.Request.Model)
		if !ok {
			continue
		}
		size := l.s.verdicts[i].InputTokens
		if c.Reported != nil {
			size = totalReported(c.Request.Provider, c.Reported)
		}
		if size <= w {
			continue
		}
		n, limit, largest = n+1, w, max(largest, size)
		tokens += size - w
		r, ok := l.rates(i)
		priced = priced && ok
		cost.add(size-w, r.input)
	}
	if n == 0 {
		return nil
	}
	saving := cost.micros()
	if !priced {
		saving = 0
	}
	return &Finding{Rule: "context-window", Calls: n,
		Message: fmt.Sprintf("%s over the model's %s-token context window (the largest, %s tokens): the provider refuses such a request", plural(n, "request"), thousands(limit), thousands(largest)),
		Fix:     fmt.Sprintf("compact or drop earlier turns (old tool results first) so that every request stays under %s tokens", thousands(limit)),
		// The saving is the tokens past the window, at the input price.
		SavingTokens: tokens, SavingCost: saving}
}

// contextWindow is the largest request model takes, when known.
func contextWindow(model string) (int, bool) {
	m := strings.ToLower(model)
	for _, r := range contextWindows {
		if modelMatches(m, r.prefix) {
			return r.tokens, true
		}
	}
	return 0, false
}
