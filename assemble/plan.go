package assemble

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/payload"
)

// action is what a compaction does, or did, to a turn.
type action uint8

const (
	keep action = iota
	clear
	summarise
	drop
)

// unit is one turn as the planner sees it.
type unit struct {
	turn *Turn
	// act is the cut available to a compaction (keep: none), alt the text
	// sent after it, tok the tokens sent kept and after act.
	act   action
	alt   string
	tok   [2]int
	js    [2][]byte // the JSON sent, kept and after act
	state action
	at    int // the compaction that cut it
	// queued: it waits, outside the kept window, for a compaction.
	queued bool
	pair   int // the call or result it is paired with, -1
	// static says why the turn is binding at every call ("": it is not).
	static string
	sum    digest.Digest
}

// cur is what the unit costs as it stands.
func (u *unit) cur() int {
	switch u.state {
	case keep:
		return u.tok[0]
	case drop:
		return 0
	}
	return u.tok[1]
}

// fenwick sums the current tokens of units before an index in log time,
// so the prefix a cut keeps is found without a walk.
type fenwick []int

func (f fenwick) add(i, d int) {
	for i++; i < len(f); i += i & -i {
		f[i] += d
	}
}

func (f fenwick) sum(n int) int { // units [0, n)
	s := 0
	for ; n > 0; n -= n & -n {
		s += f[n]
	}
	return s
}

// plan is the outcome of the simulation: every unit's state, the
// compactions made, and what the breakpoints of the last call need.
type plan struct {
	units       []unit
	calls       []int // each call's end (exclusive), the last being len(turns)
	compactions []Compaction
	// headPrev and headNow are the last cut unit before and after the last
	// call's own compaction (-1: none); prevIntact says the previous call's
	// prefix is whole in the last call.
	headPrev, headNow int
	prevIntact        bool
	tokens            int // the last call's input
}

// planner carries the simulation's running state.
type planner struct {
	c      *Conversation
	o      *Options
	w      wire
	r      rates
	units  []unit
	fen    fenwick
	base   int
	budget int
	keep   int
	// latestUser[e] is the last user turn before e (-1: none); result[i]
	// the index of tool call i's result (-1: none yet).
	latestUser []int
	task       int
	// since is where the call being planned starts its new turns (the
	// previous call's end).
	since int
}

// callEnds lists the ends of the calls a conversation's turns record: a
// call was made after each run of user turns and tool results that an
// assistant turn or tool call follows, and the last call ends with the
// turns.
func callEnds(turns []Turn) []int {
	var out []int
	for e := 1; e < len(turns); e++ {
		prev, next := turns[e-1].Kind, turns[e].Kind
		if (prev == User || prev == ToolResult) && (next == Assistant || next == ToolCall) {
			out = append(out, e)
		}
	}
	return append(out, len(turns))
}

// binding says why unit i is never shed at a call ending at e ("" when it
// may be).
func (p *planner) binding(i, e int) string {
	u := &p.units[i]
	if u.static != "" {
		return u.static
	}
	if u.turn.Kind == User && p.latestUser[e] == i {
		return "binding: the latest user turn"
	}
	if u.turn.Kind == ToolCall && (u.pair < 0 || u.pair >= e) {
		return "binding: a tool call still waiting for its result"
	}
	if i >= p.since {
		return "binding: new since the previous call (the model has not seen it)"
	}
	return ""
}

// simulate makes, call by call, every decision the conversation's calls
// were (or would have been) assembled with.
func (p *planner) simulate() (*plan, error) {
	n := len(p.units)
	pl := &plan{calls: callEnds(p.c.Turns), headPrev: -1, headNow: -1}
	p.fen = make(fenwick, n+1)
	expected := p.o.ExpectedTurns
	if expected <= 0 {
		expected = 20
	}
	var (
		added, bound, raw, cur, head int
		pending                      []int // units outside the kept window with a cut available, in order
		pendingSave                  int
		hold                         float64
		prevS                        int // the previous call's input
		// in and miss total the calls' input and the part of it not read
		// from the cache, as this planner models them.
		in, miss int
	)
	head = -1
	for k, e := range pl.calls {
		last := k == len(pl.calls)-1
		for ; added < e; added++ {
			t := p.units[added].tok[0]
			p.fen.add(added, t)
			raw += t
			cur += t
		}
		// Turns fall out of the kept window once the newer ones alone
		// fill it; the oldest first.
		for bound < e && raw > p.keep {
			u := &p.units[bound]
			raw -= u.tok[0]
			if u.state == keep && u.static == "" {
				if err := p.prepare(bound); err != nil {
					return nil, err
				}
				if u.act != keep {
					u.queued = true
					pending = append(pending, bound)
					pendingSave += u.tok[0] - u.tok[1]
				}
			}
			bound++
		}
		// Turns binding at this call stay out of this batch, and in the
		// queue for the next: the latest user turn, and the turns new
		// since the previous call (a suffix of the queue).
		if k > 0 {
			p.since = pl.calls[k-1]
		}
		save, first := pendingSave, -1
		for j := len(pending) - 1; j >= 0 && pending[j] >= p.since; j-- {
			save -= p.units[pending[j]].tok[0] - p.units[pending[j]].tok[1]
		}
		if lu := p.latestUser[e]; lu >= 0 && lu < p.since && p.units[lu].queued {
			save -= p.units[lu].tok[0] - p.units[lu].tok[1]
		}
		for _, i := range pending {
			if p.binding(i, e) == "" {
				first = i
				break
			}
		}
		s := p.base + cur
		if last {
			pl.headPrev = head
		}
		forced := s > p.budget
		do, why := false, ""
		if forced {
			do, why = true, fmt.Sprintf("the input, %d tokens, is over the window's %d", s, p.budget)
		} else if save > 0 {
			keepBefore := p.base + p.fen.sum(first)
			rewrite := s - save - keepBefore
			extra, old := p.extra(s, prevS, save, head, pending, e)
			// A cut not yet needed spends the session's allowance of
			// uncached tokens: the rewrite it causes is a miss. While the
			// session stays at hitTarget with it, the cut is priced by the
			// bill alone; past that, each token it adds to the misses is
			// priced at missPrice too, and the cut waits until it pays for
			// that as well.
			priced := ""
			if float64(miss+s-save-old) > (1-hitTarget)*float64(in+s-save) {
				extra += missPrice * float64(prevS-save-old)
				priced = fmt.Sprintf(", with each token it adds to the misses at %g more (the session would fall under %g of its input read from the cache)", missPrice, hitTarget)
			}
			hold += p.r.read * float64(save)
			switch {
			case p.o.decide != nil:
				do, why = p.o.decide(k), "chosen by the caller's plan"
			case !p.o.WhenFull && extra <= 0:
				do, why = true, fmt.Sprintf("priced: cutting now costs no more than not cutting (this call writes its prompt from token %d anyway%s), and saves %d tokens on every later call", prevS, priced, save)
			case !p.o.WhenFull && hold >= extra && float64(expected)*p.r.read*float64(save) >= extra:
				do, why = true, fmt.Sprintf("priced: the cuttable turns' reads since the last compaction (%.0f) reach what the cut costs beyond a call without it (%.0f, rewriting %d tokens%s), and the %d tokens it saves repay that within %d calls (in tokens at the input price)", hold, extra, rewrite, priced, save, expected)
			}
		}
		var cp Compaction
		if do {
			cp = Compaction{At: p.lastID(e), Reason: why}
			firstCut := n
			var left []int
			for _, i := range pending {
				u := &p.units[i]
				if u.state != keep {
					continue
				}
				if p.binding(i, e) != "" {
					left = append(left, i)
					continue
				}
				d := u.tok[1] - u.tok[0]
				u.state, u.at, u.queued = u.act, len(pl.compactions), false
				p.fen.add(i, d)
				cur += d
				cp.Saved -= d
				firstCut = min(firstCut, i)
				head = max(head, i)
				if u.act == clear {
					cp.Cleared++
				} else {
					cp.Summarised++
				}
			}
			pending, pendingSave = left, 0
			for _, i := range left {
				pendingSave += p.units[i].tok[0] - p.units[i].tok[1]
			}
			hold = 0
			// Clearing was not enough: drop the oldest turns that may be
			// shed, a tool call with its result, until the input fits.
			for i := 0; i < e && p.base+cur > p.budget; i++ {
				u := &p.units[i]
				if u.state == drop || p.binding(i, e) != "" || u.pair >= 0 && (u.pair >= e || p.binding(u.pair, e) != "") {
					continue
				}
				for _, j := range []int{i, u.pair} {
					if j < 0 || p.units[j].state == drop {
						continue
					}
					v := &p.units[j]
					d := -v.cur()
					v.state, v.at = drop, len(pl.compactions)
					p.fen.add(j, d)
					cur += d
					cp.Saved -= d
					cp.Dropped++
					firstCut = min(firstCut, j)
					head = max(head, j)
				}
			}
			if p.base+cur > p.budget {
				return nil, &Error{Field: "window", kind: ErrNoFit,
					Msg: fmt.Sprintf("at the call ending with %s the input is %d tokens with every part that may be shed cut; the window leaves %d (window %d, output reserve %d)",
						p.lastID(e), p.base+cur, p.budget, p.c.Window, p.c.OutputReserve)}
			}
			cp.Rewrite = p.base + cur - (p.base + p.fen.sum(firstCut))
			pl.compactions = append(pl.compactions, cp)
			// The call reads at most the prefix ahead of its first cut.
			prevS = min(prevS, p.base+p.fen.sum(firstCut))
			if last {
				pl.prevIntact = k > 0 && firstCut >= pl.calls[k-1]
			}
		} else if last {
			pl.prevIntact = k > 0
		}
		if last {
			pl.headNow = head
			pl.tokens = p.base + cur
		}
		in += p.base + cur
		miss += p.base + cur - prevS
		prevS = p.base + cur
	}
	pl.units = p.units
	return pl, nil
}

// prepare works out the cut available to unit i, asking the caller's
// summariser only now, when the turn first leaves the kept window.
func (p *planner) prepare(i int) error {
	u := &p.units[i]
	t := u.turn
	summary := t.Summary
	if summary == "" && p.o.Summarize != nil && t.Kind != ToolCall {
		s, err := p.o.Summarize(*t)
		if err != nil {
			return &Error{ID: t.ID, Field: "summary", Msg: err.Error(), kind: ErrInvalid}
		}
		summary = s
	}
	switch {
	case summary != "" && t.Kind != ToolCall:
		u.act, u.alt = summarise, summary
	case t.Kind == ToolResult:
		u.act, u.alt = clear, stub(u)
	default:
		return nil
	}
	u.js[1] = p.w.unit(t, u.alt)
	u.tok[1] = p.w.count(u.js[1])
	if u.tok[1] >= u.tok[0] {
		u.act, u.alt, u.tok[1], u.js[1] = keep, "", u.tok[0], u.js[0]
	}
	return nil
}

// rates are the model's cache prices as multiples of its input price:
// read; short, a write of what a later call reads back soon; long, a
// write of the compacted head, breakpointed for an hour (Anthropic) so
// that the calls between compactions do not outlive it. note says where
// they come from, for the manifest.
type rates struct {
	read, short, long float64
	note              string
}

// ratesOf asks package cache's price table for the model's rates; a
// cache that bills no write bills a written token as input (1).
func ratesOf(c *Conversation) rates {
	read, write, listed := (*cache.Prices)(nil).Rates(string(c.Provider), c.Model)
	r := rates{read: read, short: 1, long: 1}
	ttls := make([]string, 0, len(write))
	for ttl := range write {
		ttls = append(ttls, ttl)
	}
	// The cheapest lifetime is the one a write gets when the body names
	// none; on Anthropic the head is written for an hour.
	slices.SortFunc(ttls, func(a, b string) int {
		if write[a] != write[b] {
			if write[a] < write[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	if len(ttls) > 0 {
		r.short, r.long = write[ttls[0]], write[ttls[0]]
	}
	if w, ok := write["5m"]; ok && c.Provider == payload.Anthropic {
		r.short = w
	}
	if w, ok := write["1h"]; ok && c.Provider == payload.Anthropic {
		r.long = w
	}
	g := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) + "x" }
	how := "a cache read " + g(r.read) + " the input price, "
	switch {
	case len(ttls) == 0:
		how += "no write charge (a written token is billed as input)"
	case r.short == r.long:
		how += "a write " + g(r.short)
	default:
		how += "a write " + g(r.short) + " (5 minutes) and " + g(r.long) + " (1 hour)"
	}
	if listed {
		r.note = c.Model + " in package cache's price table: " + how
	} else {
		r.note = c.Model + " is not in package cache's price table: " + string(c.Provider) + "'s default for it, " + how
	}
	return r
}

// extra is what compacting at this call costs beyond not compacting, in
// tokens at the input price, at the model's cache prices (p.r): with the
// cut, the call reads the compacted head as it was (old tokens), writes
// the new head for an hour and the rest for five minutes; without it, it
// reads the previous call's prompt and writes what was added since.
func (p *planner) extra(s, prevS, save, head int, pending []int, e int) (float64, int) {
	newHead := -1
	for j := len(pending) - 1; j >= 0; j-- {
		if p.binding(pending[j], e) == "" {
			newHead = pending[j]
			break
		}
	}
	old := p.base
	if head >= 0 {
		old += p.fen.sum(head + 1)
	}
	h := max(p.base+p.fen.sum(newHead+1)-save, old)
	r := p.r
	with := r.read*float64(old) + r.long*float64(h-old) + r.short*float64(s-save-h)
	without := r.read*float64(prevS) + r.short*float64(s-prevS)
	return with - without, old
}

// hitTarget and missPrice weigh a cut the window does not force by what
// it does to the cache as well as to the bill: a token not read from the
// cache is also prefill time and, on Anthropic, counts against the
// input-tokens-per-minute limit where a read does not. Below hitTarget
// (the session's input read from the cache, as the planner models it: a
// hundredth over the 0.90 the tests hold it to, for what that model
// leaves out) a cut's extra misses cost missPrice each, in tokens at the
// input price. Chosen on seventeen generated sessions (docs/assemble.md):
// each reads 0.90 or more, at 1.04 to 1.15x the cost of the cheapest plan
// that ignores the misses.
const (
	hitTarget = 0.91
	missPrice = 2.0
)

// lastID names the call that ends at e by its last turn.
func (p *planner) lastID(e int) string {
	if e == 0 {
		return "no turns"
	}
	return "turn " + p.c.Turns[e-1].ID
}
