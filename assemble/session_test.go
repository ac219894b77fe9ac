package assemble

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"testing"
	"time"

	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/internal/testkit/fakecache"
	"github.com/promptloom/promptloom/request"
)

// A session's figures, as package cache predicts them for the bodies.
type run struct {
	results []*result
	calls   []cache.Call
	an      *cache.Analysis
	cost    float64 // in tokens at the base input price
	dollars float64 // as package cache prices it, from its price table
}

var sessionStart = time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)

// callGap is the time between two calls of the session.
const callGap = 15 * time.Second

// runSession assembles every call of c, in order, with o, and predicts
// the session's cache reads and writes.
func runSession(t testing.TB, c *Conversation, o *Options) *run {
	t.Helper()
	bodies := make([]*Conversation, 0)
	for _, e := range callEnds(c.Turns) {
		sub := *c
		sub.Turns = c.Turns[:e]
		bodies = append(bodies, &sub)
	}
	return runBodies(t, bodies, o)
}

// runBodies assembles each conversation as one call of a session.
func runBodies(t testing.TB, convs []*Conversation, o *Options) *run {
	t.Helper()
	r := &run{}
	for k, sub := range convs {
		res, err := assembled(sub, o)
		if err != nil {
			t.Fatalf("call %d: %v", k, err)
		}
		m, err := newManifest(res.Body, sub.Provider, &request.Options{Model: sub.Model})
		if err != nil {
			t.Fatalf("call %d: the body does not read: %v", k, err)
		}
		at := sessionStart.Add(time.Duration(k) * callGap)
		r.results = append(r.results, res)
		r.calls = append(r.calls, cache.Call{Name: fmt.Sprint(k), At: at, Began: at.Add(time.Second), Request: m})
	}
	r.an = cache.Run(r.calls, nil)
	for k, v := range r.an.Verdicts {
		r.cost += price(r.calls[k].Request, v)
	}
	r.dollars = float64(r.an.Summary.Cost) / 1e6
	return r
}

// price is a call's input cost in base-price tokens, Anthropic's way:
// reads at 0.1, 5-minute writes at 1.25, 1-hour writes at 2, the rest at 1
// (docs/caching.md, "Lifetimes": 1-hour writes are billed up to the last
// 1-hour breakpoint past the read).
func price(m *request.Manifest, v cache.Verdict) float64 {
	long := 0
	for _, b := range cache.Breakpoints(m, nil) {
		if b.TTL == "1h" && b.Cached && b.Tokens > v.Predicted.Read {
			long = max(long, b.Tokens-v.Predicted.Read)
		}
	}
	long = min(long, v.Predicted.Write)
	rest := v.InputTokens - v.Predicted.Read - v.Predicted.Write
	return 0.1*float64(v.Predicted.Read) + 2*float64(long) + 1.25*float64(v.Predicted.Write-long) + float64(rest)
}

func compactions(r *run) int { return len(r.results[len(r.results)-1].Manifest.Compactions) }

// The 200-turn session under a window that forces compactions: most of
// the input is read from the cache, the cost is near the reference
// planner's optimum and well under both baselines', nothing binding is
// shed, every body holds to the provider's rules, and the cache model
// agrees with the independent fake.
func TestSession(t *testing.T) {
	c := genSession(200, 200, 30000, 1)
	r := runSession(t, c, nil)
	n := compactions(r)
	hit := r.an.Summary.PredictedHitRate
	t.Logf("calls %d, compactions %d, predicted hit rate %.3f, cost %.0f (cache's price table: $%.2f)", len(r.calls), n, hit, r.cost, r.dollars)
	if want := "claude-sonnet-5 in package cache's price table: a cache read 0.1x the input price, a write 1.25x (5 minutes) and 2x (1 hour)"; r.results[0].Manifest.Prices != want {
		t.Errorf("prices: %q, want %q", r.results[0].Manifest.Prices, want)
	}
	if len(r.an.Summary.Unpriced) > 0 {
		t.Errorf("cache cannot price %v", r.an.Summary.Unpriced)
	}
	if hit < 0.90 {
		t.Errorf("predicted hit rate %.3f, want at least 0.90", hit)
	}

	// The reference: the cheapest plan over the same cut points.
	ref := runSession(t, c, &Options{decide: referencePlan(t, c, nil)})
	t.Logf("reference plan: cost %.0f ($%.2f), compactions %d; ratio %.3f ($: %.3f)", ref.cost, ref.dollars, compactions(ref), r.cost/ref.cost, r.dollars/ref.dollars)
	if r.cost > 1.15*ref.cost || r.dollars > 1.15*ref.dollars {
		t.Errorf("cost %.0f ($%.2f) is %.3fx ($: %.3fx) the reference plan's %.0f, want at most 1.15x", r.cost, r.dollars, r.cost/ref.cost, r.dollars/ref.dollars, ref.cost)
	}
	full := runSession(t, c, &Options{WhenFull: true})
	t.Logf("WhenFull: cost %.0f ($%.2f), compactions %d", full.cost, full.dollars, compactions(full))
	if compactions(full) < 3 {
		t.Errorf("the window forces %d compactions (WhenFull), want at least 3", compactions(full))
	}
	if full.cost < r.cost {
		t.Errorf("WhenFull (%.0f) measures cheaper than the default Priced (%.0f)", full.cost, r.cost)
	}

	// The baselines.
	for _, b := range []struct {
		name string
		cut  func(c *Conversation, e int, toks []int, budget int) []Turn
	}{{"drop-the-oldest", dropOldest}, {"priority pruning", priorityPrune}} {
		base := runBaseline(t, c, b.cut)
		t.Logf("%s: cost %.0f ($%.2f), hit rate %.3f; ratio %.2f ($: %.2f)", b.name, base.cost, base.dollars, base.an.Summary.PredictedHitRate, base.cost/r.cost, base.dollars/r.dollars)
		if base.cost < 2*r.cost || base.dollars < 2*r.dollars {
			t.Errorf("%s costs %.0f, less than twice the assembler's %.0f", b.name, base.cost, r.cost)
		}
	}

	// The session lint, which holds the calls' history to the cache's
	// rules (lifetimes, breakpoints moved, entries out of reach), finds
	// nothing either.
	for _, f := range cache.Run(r.calls, &cache.Options{Lint: true}).Lint {
		t.Errorf("session lint: %+v", f)
	}

	fake := &fakecache.Anthropic{Min: 1024}
	var worst float64
	for k, res := range r.results {
		m := r.calls[k].Request
		if m.Tokens+c.OutputReserve > c.Window {
			t.Errorf("call %d: %d input tokens and %d reserved exceed the window of %d", k, m.Tokens, c.OutputReserve, c.Window)
		}
		// The body alone breaks no rule.
		for _, f := range cache.Explain(m, nil, nil, true).Lint {
			t.Errorf("call %d: lint: %v", k, f)
		}
		// Between calls, the prefix changes only where a compaction cuts,
		// after the head the previous call had compacted: the one thing
		// the lint of a session says of it is that change.
		if k > 0 {
			prev := r.calls[k-1].Request
			for _, f := range cache.Explain(m, prev, nil, true).Lint {
				if f.Rule != "changed" || !compactedAt(res, k, r) {
					t.Errorf("call %d: lint against call %d: %v", k, k-1, f)
				}
			}
			if compactedAt(res, k, r) {
				// The head as package request counts it: through the
				// previous call's last 1-hour breakpoint.
				head, sum, long := 0, 0, map[string]bool{}
				for _, bp := range r.results[k-1].Manifest.Breakpoints {
					long[bp.Path] = bp.TTL == "1h"
				}
				for _, sg := range prev.Segments {
					sum += sg.Tokens
					if long[sg.Path] {
						head = sum
					}
				}
				if d := cache.Explain(m, nil, nil, false).After("", prev); d.Section != "messages" || d.SharedTokens < head {
					t.Errorf("call %d: the compaction changes the prefix at %s, %d tokens in; the previous call's compacted head is %d", k, d.Path, d.SharedTokens, head)
				}
			}
		}
		if len(res.Manifest.Breakpoints) > 4 {
			t.Errorf("call %d: %d breakpoints", k, len(res.Manifest.Breakpoints))
		}
		u, err := fake.Serve(res.Body, r.calls[k].At)
		if err != nil {
			t.Fatal(err)
		}
		// The fake and the model read and write through the same blocks,
		// exactly; their tokens differ only in how each counts a block.
		v := r.an.Verdicts[k]
		fb, mb := fakeBlocks(t, res.Body), modelBlocks(m)
		if len(fb) != len(mb) {
			t.Fatalf("call %d: the fake sees %d blocks, the model %d", k, len(fb), len(mb))
		}
		for _, pair := range [][2]int{{at(fb, u.CacheRead), at(mb, v.Predicted.Read)},
			{at(fb, u.CacheRead+u.CacheWrite), at(mb, v.Predicted.Read+v.Predicted.Write)}} {
			if pair[0] != pair[1] || pair[0] == -2 {
				t.Errorf("call %d: the fake read %d and wrote %d, through blocks %d; the model %+v, through blocks %d", k, u.CacheRead, u.CacheWrite, pair[0], v.Predicted, pair[1])
			}
		}
		for _, pair := range [][2]int{{u.CacheRead, v.Predicted.Read}, {u.CacheWrite, v.Predicted.Write}} {
			if pair[0] > 0 {
				worst = math.Max(worst, math.Abs(float64(pair[1]-pair[0]))/float64(pair[0]))
			}
		}
		checkBinding(t, c, k, res)
		if k > 0 {
			ends := callEnds(c.Turns)
			for _, pt := range res.Manifest.Parts[len(res.Manifest.Parts)-ends[k]+ends[k-1]:] {
				if pt.Status != Included {
					t.Errorf("call %d: %s, new in this call, is %s", k, pt.ID, pt.Status)
				}
			}
		}
	}
	t.Logf("cache model against the fake: the same blocks read and written on every call; their token counts differ by at most %.1f%%", 100*worst)
}

// fakeBlocks is the tokens through each block of an Anthropic body as the
// fake counts them (fakecache.Tokens, a block without its cache_control),
// in the order it keys them: tools, system, messages.
func fakeBlocks(t *testing.T, body []byte) []int {
	t.Helper()
	var req struct {
		Tools    []map[string]any `json:"tools"`
		System   []map[string]any `json:"system"`
		Messages []struct {
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	all := append(req.Tools, req.System...)
	for _, m := range req.Messages {
		all = append(all, m.Content...)
	}
	out, sum := make([]int, len(all)), 0
	for i, b := range all {
		delete(b, "cache_control")
		sum += fakecache.Tokens(b)
		out[i] = sum
	}
	return out
}

// modelBlocks is the tokens through each block as package request counts
// them: a block's segments share its path.
func modelBlocks(m *request.Manifest) []int {
	var out []int
	sum := 0
	for i, s := range m.Segments {
		sum += s.Tokens
		if i+1 == len(m.Segments) || m.Segments[i+1].Path != s.Path {
			out = append(out, sum)
		}
	}
	return out
}

// at is the block whose prefix is tokens long: -1 for none (0 tokens),
// -2 when no block ends there.
func at(cum []int, tokens int) int {
	if tokens == 0 {
		return -1
	}
	for i, c := range cum {
		if c == tokens {
			return i
		}
	}
	return -2
}

// compactedAt says call k made a compaction.
func compactedAt(res *result, k int, r *run) bool {
	prev := 0
	if k > 0 {
		prev = len(r.results[k-1].Manifest.Compactions)
	}
	return len(res.Manifest.Compactions) > prev
}

// checkBinding: no binding part of call k is cut.
func checkBinding(t *testing.T, c *Conversation, k int, res *result) {
	t.Helper()
	latest := ""
	waiting := map[string]bool{}
	for _, pt := range res.Manifest.Parts {
		switch pt.Kind {
		case User:
			latest = pt.ID
		}
	}
	for _, tt := range c.Turns {
		if tt.Kind == ToolCall {
			waiting[tt.ID] = true
		}
	}
	for _, pt := range res.Manifest.Parts {
		if pt.Status == Included || pt.Kind == "tool" || pt.Kind == "system" {
			continue
		}
		if pt.ID == latest || pt.ID == c.Turns[0].ID || pt.Register == "binding" {
			t.Errorf("call %d: binding part %s is %s", k, pt.ID, pt.Status)
		}
	}
}

// runBaseline assembles each call of c with the turns a baseline keeps,
// and nothing compacted by the assembler (they fit).
func runBaseline(t *testing.T, c *Conversation, cut func(c *Conversation, e int, toks []int, budget int) []Turn) *run {
	t.Helper()
	p, _, _, _, err := newPlanner(c, &Options{})
	if err != nil {
		t.Fatal(err)
	}
	toks := make([]int, len(p.units))
	for i := range p.units {
		toks[i] = p.units[i].tok[0]
	}
	var convs []*Conversation
	for _, e := range callEnds(c.Turns) {
		sub := *c
		sub.Turns = cut(c, e, toks, p.budget-p.base)
		convs = append(convs, &sub)
	}
	return runBodies(t, convs, &Options{decide: func(int) bool { return false }})
}

// dropOldest is trim_messages' "last": the newest turns that fit, the
// task kept, starting on a turn that is not a tool's result.
func dropOldest(c *Conversation, e int, toks []int, budget int) []Turn {
	total := toks[0]
	s := e
	for s > 1 && total+toks[s-1] <= budget {
		s--
		total += toks[s]
	}
	for s < e && c.Turns[s].Kind == ToolResult {
		s++
	}
	return append([]Turn{c.Turns[0]}, c.Turns[s:e]...)
}

// priorityPrune is prompt-tsx's rule: the lowest priority goes first,
// the oldest first among equals, a tool call with its result, until the
// rest fits; the task and the latest turn stay.
func priorityPrune(c *Conversation, e int, toks []int, budget int) []Turn {
	total := 0
	for i := 0; i < e; i++ {
		total += toks[i]
	}
	order := make([]int, 0, e)
	for i := 1; i < e-1; i++ {
		order = append(order, i)
	}
	sort.SliceStable(order, func(a, b int) bool { return c.Turns[order[a]].Priority < c.Turns[order[b]].Priority })
	gone := make([]bool, e)
	pairOf := map[string][]int{}
	for i := 0; i < e; i++ {
		if c.Turns[i].Call != "" {
			pairOf[c.Turns[i].Call] = append(pairOf[c.Turns[i].Call], i)
		}
	}
	for _, i := range order {
		if total <= budget {
			break
		}
		group := []int{i}
		if id := c.Turns[i].Call; id != "" {
			group = pairOf[id]
		}
		for _, j := range group {
			if !gone[j] {
				gone[j] = true
				total -= toks[j]
			}
		}
	}
	var out []Turn
	for i := 0; i < e; i++ {
		if !gone[i] {
			out = append(out, c.Turns[i])
		}
	}
	return out
}

// referencePlan is the cheapest choice of the calls to compact at, by
// dynamic programming over the calls: after a compaction at call j, what
// is cut is fixed by j (every turn older than the kept window with a cut
// available, and not binding then), so a call's state is the last call
// that compacted. A call is priced as docs/caching.md prices it: the read
// of the longest prefix a breakpoint can find, the write of the rest (the
// compacted head for an hour), and the model is this package's own
// counts.
func referencePlan(t *testing.T, c *Conversation, o *Options) func(int) bool {
	if o == nil {
		o = &Options{}
	}
	p, _, _, _, err := newPlanner(c, o)
	if err != nil {
		t.Fatal(err)
	}
	calls := callEnds(c.Turns)
	m := len(calls)
	n := len(p.units)
	prefix := make([]int, n+1)
	for i := range p.units {
		prefix[i+1] = prefix[i] + p.units[i].tok[0]
	}
	// The cut set of a compaction at each call: its saving, and its last
	// cut turn.
	saved := make([]int, m)
	lastCut := make([]int, m)
	headSaved := make([]int, m) // saving up to the last cut, the same
	bound, raw := 0, 0
	for k, e := range calls {
		if k > 0 {
			p.since = calls[k-1]
		}
		raw = prefix[e] - prefix[bound]
		for bound < e && raw > p.keep {
			raw -= p.units[bound].tok[0]
			if err := p.prepare(bound); err != nil {
				t.Fatal(err)
			}
			bound++
		}
		lastCut[k] = -1
		for i := 0; i < bound; i++ {
			u := &p.units[i]
			if u.act == keep || u.static != "" || p.binding(i, e) != "" {
				continue
			}
			saved[k] += u.tok[0] - u.tok[1]
			lastCut[k] = i
		}
		headSaved[k] = saved[k]
	}
	size := func(k, j int) int { // input of call k, last compaction at j (-1: none)
		s := p.base + prefix[calls[k]]
		if j >= 0 {
			s -= saved[j]
		}
		return s
	}
	head := func(j int) int {
		if j < 0 || lastCut[j] < 0 {
			return p.base
		}
		return p.base + prefix[lastCut[j]+1] - headSaved[j]
	}
	inf := math.Inf(1)
	// f[k][j+1]: the cheapest cost through call k with last compaction j.
	f := make([][]float64, m)
	from := make([][]int, m)
	for k := range f {
		f[k] = make([]float64, m+1)
		from[k] = make([]int, m+1)
		for j := range f[k] {
			f[k][j] = inf
		}
	}
	if size(0, -1) <= p.budget {
		f[0][0] = 2*float64(p.base) + 1.25*float64(size(0, -1)-p.base)
	}
	for k := 1; k < m; k++ {
		best, arg := inf, -1
		for j := -1; j < k; j++ {
			prev := f[k-1][j+1]
			if prev == inf {
				continue
			}
			// Go on with j's cuts.
			if s := size(k, j); s <= p.budget {
				read := size(k-1, j)
				if cost := prev + 0.1*float64(read) + 1.25*float64(s-read); cost < f[k][j+1] {
					f[k][j+1], from[k][j+1] = cost, j
				}
			}
			// Or compact at k: read the old head, write the new one for an
			// hour and the rest for five minutes.
			read, h := head(j), head(k)
			cost := prev + 0.1*float64(read) + 2*float64(max(h-read, 0)) + 1.25*float64(size(k, k)-max(h, read))
			if cost < best {
				best, arg = cost, j
			}
		}
		if size(k, k) <= p.budget && best < f[k][k+1] {
			f[k][k+1], from[k][k+1] = best, arg
		}
	}
	best, j := inf, -1
	for jj := -1; jj < m; jj++ {
		if f[m-1][jj+1] < best {
			best, j = f[m-1][jj+1], jj
		}
	}
	if best == inf {
		t.Fatal("the reference planner found no plan that fits")
	}
	compact := make([]bool, m)
	for k := m - 1; k > 0; k-- {
		if j == k {
			compact[k] = true
		}
		j = from[k][j+1]
	}
	t.Logf("reference plan: modelled cost %.0f", best)
	return func(k int) bool { return compact[k] }
}

// Other sessions from the same generator (hitTarget and missPrice were
// chosen on seeds 1 to 17, docs/assemble.md gives each): each reads 0.90
// of its input from the cache, costs at most 1.15x the reference planner's
// cheapest plan (which reads less), and half what either baseline costs.
func TestSessionSeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("four sessions of 200 turns")
	}
	for _, seed := range []uint64{2, 4, 6, 8} {
		c := genSession(200, 200, 30000, seed)
		r := runSession(t, c, nil)
		ref := runSession(t, c, &Options{decide: referencePlan(t, c, nil)})
		b1, b2 := runBaseline(t, c, dropOldest), runBaseline(t, c, priorityPrune)
		hit := r.an.Summary.PredictedHitRate
		t.Logf("seed %d: %d calls, %d compactions, hit rate %.3f, %.3fx the reference (hit rate %.3f), baselines %.2fx and %.2fx",
			seed, len(r.calls), compactions(r), hit, r.cost/ref.cost, ref.an.Summary.PredictedHitRate, b1.cost/r.cost, b2.cost/r.cost)
		if hit < 0.90 || r.cost > 1.15*ref.cost || r.dollars > 1.15*ref.dollars || b1.cost < 2*r.cost || b2.cost < 2*r.cost {
			t.Errorf("seed %d: hit rate %.3f, cost %.0f, reference %.0f, baselines %.0f and %.0f", seed, hit, r.cost, ref.cost, b1.cost, b2.cost)
		}
	}
}
