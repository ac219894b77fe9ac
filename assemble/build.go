package assemble

import (
	"fmt"
	"slices"
	"strings"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/digest"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/request"
)

// Assemble builds the request body of the conversation's latest call and
// its manifest. It is deterministic: the same conversation and options
// give the same bytes, and the conversation with more turns repeats every
// cut made for fewer. An input it cannot use is an *Error naming the part
// (ErrInvalid); binding parts that cannot fit are ErrNoFit.
func Assemble(c *Conversation, o *Options) (body []byte, m *Manifest, err error) {
	if o == nil {
		o = &Options{}
	}
	p, tools, sys, red, err := newPlanner(c, o)
	if err != nil {
		return nil, nil, err
	}
	pl, err := p.simulate()
	if err != nil {
		return nil, nil, err
	}
	return p.finish(pl, tools, sys, red)
}

// newPlanner checks the conversation and readies what planning needs:
// the tools' and system's bytes, and each turn's unit.
func newPlanner(c *Conversation, o *Options) (*planner, [][]byte, []byte, *promptloom.Reduction, error) {
	w, err := check(c)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	// The turns are the caller's: what is filled in below (a canonical
	// input, a result's tool) goes into a copy.
	cc := *c
	cc.Turns = slices.Clone(c.Turns)
	c = &cc
	// The system prompt is the reducer's, with each tool's guidance
	// gated on its tool.
	frags := make([]promptloom.Fragment, 0, len(c.System)+len(c.Tools))
	names := make([]string, len(c.Tools))
	for _, f := range c.System {
		if f.Source == "" {
			f.Source = f.ID
		}
		frags = append(frags, f)
	}
	tools := make([][]byte, len(c.Tools))
	base := 0
	for i := range c.Tools {
		t := &c.Tools[i]
		names[i] = t.Name
		schema := []byte(`{"type":"object"}`)
		if t.Schema != nil {
			if schema, err = pjson.Encode(t.Schema); err != nil {
				return nil, nil, nil, nil, invalid("tool:"+t.Name, "input_schema", "%v", err)
			}
		}
		tools[i] = w.tool(t, schema)
		base += w.count(tools[i])
	}
	red, err := promptloom.Reduce(frags, &promptloom.Options{Tools: names})
	if err != nil {
		return nil, nil, nil, nil, invalid("", "system", "%v", err)
	}
	var sys []byte
	if red.Present && red.System != "" {
		sys = w.system(red.System)
		base += w.count(sys)
	}

	p := &planner{c: c, o: o, w: w, r: ratesOf(c), base: base, budget: c.Window - c.OutputReserve, task: -1,
		units: make([]unit, len(c.Turns)), latestUser: make([]int, len(c.Turns)+1)}
	p.keep = o.KeepRecent
	if p.keep <= 0 {
		p.keep = p.budget / 4
	}
	open := map[string]int{}
	p.latestUser[0] = -1
	marked := hasTask(c.Turns)
	for i := range c.Turns {
		t := &c.Turns[i]
		u := &p.units[i]
		*u = unit{turn: t, pair: -1}
		if t.Kind == ToolCall {
			if t.Input, err = canonical(t.Input); err != nil {
				return nil, nil, nil, nil, invalid(t.ID, "input", "%v", err)
			}
			open[t.Call] = i
			u.sum = digest.Of(string(t.Input))
		} else {
			u.sum = digest.Of(t.Text)
		}
		if t.Kind == ToolResult {
			j := open[t.Call]
			delete(open, t.Call)
			u.pair, p.units[j].pair = j, i
			if t.Tool == "" {
				t.Tool = c.Turns[j].Tool
			}
		}
		if p.task < 0 && (t.Task || t.Kind == User && !marked) {
			p.task = i
		}
		u.js[0] = w.unit(t, "")
		u.tok[0] = w.count(u.js[0])
		u.tok[1] = u.tok[0]
		p.latestUser[i+1] = p.latestUser[i]
		if t.Kind == User {
			p.latestUser[i+1] = i
		}
	}
	for i := range p.units {
		u := &p.units[i]
		switch {
		case i == p.task:
			u.static = "binding: the task"
		case u.turn.Task:
			u.static = "binding: marked as the task"
		case u.turn.Register == budget.Binding:
			u.static = "binding: register binding"
		}
	}
	return p, tools, sys, red, nil
}

func hasTask(turns []Turn) bool {
	for i := range turns {
		if turns[i].Task {
			return true
		}
	}
	return false
}

// canonical is a JSON object's canonical form; nil is {}.
func canonical(raw []byte) ([]byte, error) {
	if raw == nil {
		return []byte("{}"), nil
	}
	b, err := pjson.Encode(raw)
	if err != nil {
		return nil, err
	}
	if len(b) == 0 || b[0] != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	return b, nil
}

// check holds the conversation to what a body needs and picks its wire.
func check(c *Conversation) (wire, error) {
	var w wire
	switch c.Provider {
	case payload.Anthropic:
	case payload.Gemini:
	case payload.OpenAIChat, payload.OpenAIResponses:
		ct, err := budget.NewCounter(openAIEncoding(c.Model))
		if err != nil {
			return w, invalid("", "provider", "%v", err)
		}
		w.counter = ct
	default:
		return w, invalid("", "provider", "%q (want anthropic, openai-chat, openai-responses or gemini)", c.Provider)
	}
	w.p = c.Provider
	switch {
	case c.Model == "":
		return w, invalid("", "model", "empty")
	case c.Window <= 0:
		return w, invalid("", "window", "%d; give the model's context window in tokens", c.Window)
	case c.OutputReserve <= 0 || c.OutputReserve >= c.Window:
		return w, invalid("", "output_reserve", "%d; it must be above 0 and below the window (%d)", c.OutputReserve, c.Window)
	}
	seen := map[string]bool{}
	for _, t := range c.Tools {
		if t.Name == "" || seen["tool:"+t.Name] {
			return w, invalid("tool:"+t.Name, "name", "empty or given twice")
		}
		seen["tool:"+t.Name] = true
	}
	open := map[string]string{}
	for i, t := range c.Turns {
		id := t.ID
		switch {
		case id == "":
			return w, invalid(fmt.Sprintf("turns[%d]", i), "id", "empty")
		case seen[id]:
			return w, invalid(id, "id", "given twice")
		case t.Register > budget.Generated:
			return w, invalid(id, "register", "%v is not a register", t.Register)
		}
		seen[id] = true
		switch t.Kind {
		case User, Assistant:
			if t.Text == "" {
				return w, invalid(id, "text", "empty (providers refuse an empty text block)")
			}
		case ToolCall:
			if t.Call == "" || t.Tool == "" {
				return w, invalid(id, "call", "a tool call needs its call id and tool name")
			}
			if _, ok := open[t.Call]; ok {
				return w, invalid(id, "call", "call id %q is already waiting for its result", t.Call)
			}
			open[t.Call] = id
		case ToolResult:
			if _, ok := open[t.Call]; !ok {
				return w, invalid(id, "call", "no earlier tool call %q is waiting for this result", t.Call)
			}
			delete(open, t.Call)
		default:
			return w, invalid(id, "kind", "%q (want user, assistant, tool_call or tool_result)", t.Kind)
		}
	}
	return w, nil
}

// openAIEncoding is the tokenizer of an OpenAI model: cl100k_base for
// GPT-4 and GPT-3.5, o200k_base for the models since.
func openAIEncoding(model string) string {
	if strings.HasPrefix(model, "gpt-3.5") || model == "gpt-4" || strings.HasPrefix(model, "gpt-4-") {
		return "cl100k_base"
	}
	return "o200k_base"
}

// stub is what a cleared tool result sends: enough to name what was
// there and to say how to have it again.
func stub(u *unit) string {
	return fmt.Sprintf("[cleared to save context: %s's result, %d bytes, %s; call the tool again if it is needed]",
		u.turn.Call, len(u.turn.Text), u.sum)
}

// finish places the breakpoints, writes the body and accounts for it.
func (p *planner) finish(pl *plan, tools [][]byte, sys []byte, red *promptloom.Reduction) ([]byte, *Manifest, error) {
	c, w := p.c, p.w
	m := &Manifest{Schema: schema, Provider: string(c.Provider), Model: c.Model, Window: c.Window,
		OutputReserve: c.OutputReserve, Counter: w.counterName(), Prices: p.r.note, Tokens: pl.tokens,
		Compactions: pl.compactions, Breakpoints: []Breakpoint{}}
	if m.Compactions == nil {
		m.Compactions = []Compaction{}
	}
	marks, why := p.breakpoints(pl, tools, sys)
	l := w.write(c, tools, sys, pl.units, marks)
	// Below the model's minimum a breakpoint caches nothing and takes a
	// slot: where the head is that short, ask the cache which ones hold.
	if w.p == payload.Anthropic && len(marks) > 0 && !p.headCached(tools, sys) {
		rm, err := newManifest(l.body, w.p, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("assemble: the body does not read back: %w", err)
		}
		held := map[string]bool{}
		for _, b := range cache.Breakpoints(rm, nil) {
			held[b.Path] = b.Cached
		}
		for at := range marks {
			if !held[pathOf(l, at)] {
				delete(marks, at)
			}
		}
		l = w.write(c, tools, sys, pl.units, marks)
	}
	cum := p.cumulative(pl)
	ats := make([]int, 0, len(marks))
	for at := range marks {
		ats = append(ats, at)
	}
	slices.SortFunc(ats, func(a, b int) int { return order(a) - order(b) })
	for _, at := range ats {
		tok := p.base
		if at >= 0 {
			tok = cum[at]
		}
		m.Breakpoints = append(m.Breakpoints, Breakpoint{Path: pathOf(l, at), TTL: marks[at].ttl, Tokens: tok, Reason: why[at]})
	}
	if w.p != payload.Anthropic {
		who := "OpenAI"
		if w.p == payload.Gemini {
			who = "Gemini"
		}
		m.Breakpoints = append(m.Breakpoints, Breakpoint{Tokens: pl.tokens,
			Reason: "none placed: " + who + " caches on its own (implicitly) the longest prefix a request shares with an earlier one (docs/caching.md); the tools, system and compacted head are kept byte-identical so that a compaction leaves them readable"})
	}
	for i, t := range c.Tools {
		m.Parts = append(m.Parts, Part{ID: "tool:" + t.Name, Source: "tool:" + t.Name, Kind: "tool", Status: Included,
			Reason: "tool definition", Path: l.toolPaths[i], Bytes: len(tools[i]), Tokens: w.count(tools[i]), Digest: digest.Of(string(tools[i]))})
	}
	for _, r := range red.Rows {
		pt := Part{ID: r.Fragment.ID, Source: r.Fragment.Source, Kind: "system", Register: r.Fragment.Register.String(),
			Status: Included, Reason: r.Reason, Bytes: r.Bytes, Digest: r.Digest}
		if r.Included {
			pt.Path, pt.Tokens = l.sysPath, w.count([]byte(r.Body))
		} else {
			pt.Status = Dropped
		}
		m.Parts = append(m.Parts, pt)
	}
	for i := range pl.units {
		u := &pl.units[i]
		t := u.turn
		pt := Part{ID: t.ID, Source: t.Source, Kind: t.Kind, Register: t.Register.String(), Priority: t.Priority,
			Path: l.paths[i], Tokens: u.cur(), Digest: u.sum}
		if u.state != drop {
			pt.Bytes = len(u.sent())
		}
		switch u.state {
		case keep:
			pt.Status = Included
			if pt.Reason = p.binding(i, len(pl.units)); pt.Reason == "" {
				pt.Reason = "kept: it fits, and no compaction has cut it"
			}
		case clear:
			pt.Status, pt.Reason = Cleared, compacted(pl, u, "replaced by a stub")
		case summarise:
			pt.Status, pt.Reason = Summarised, compacted(pl, u, "replaced by its summary")
		case drop:
			pt.Status, pt.Reason = Dropped, compacted(pl, u, "dropped (clearing and summarising were not enough)")
		}
		m.Parts = append(m.Parts, pt)
	}
	m.BodyDigest = digest.Bytes(l.body)
	return l.body, m, nil
}

func compacted(pl *plan, u *unit, what string) string {
	cp := pl.compactions[u.at]
	return fmt.Sprintf("%s by compaction %d (at %s): %s", what, u.at+1, cp.At, cp.Reason)
}

// order sorts breakpoint targets into body order: tools, system, units.
func order(at int) int {
	if at <= -2 {
		return -(1 << 20) + (-2 - at) // tools, in their order, before the system
	}
	return at
}

func pathOf(l *layout, at int) string {
	switch {
	case at == -1:
		return l.sysPath
	case at <= -2:
		return l.toolPaths[-2-at]
	}
	return l.paths[at]
}

// cumulative is the tokens through each unit, as sent.
func (p *planner) cumulative(pl *plan) []int {
	out := make([]int, len(pl.units))
	s := p.base
	for i := range pl.units {
		s += pl.units[i].cur()
		out[i] = s
	}
	return out
}

// headCached asks the cache whether a breakpoint at the end of the
// tools and system reaches the model's minimum (or the minimum is not
// known): then every later breakpoint does too.
func (p *planner) headCached(tools [][]byte, sys []byte) bool {
	at := -1
	if sys == nil {
		at = -1 - len(tools)
	}
	probe := p.w.write(p.c, tools, sys, nil, map[int]mark{at: {ttl: "1h"}})
	rm, err := newManifest(probe.body, p.w.p, nil)
	if err != nil {
		return false
	}
	bps := cache.Breakpoints(rm, nil)
	return len(bps) > 0 && bps[0].Cached
}

// breakpoints chooses the blocks that carry cache_control (Anthropic's
// explicit breakpoints; OpenAI's cache is implicit, and gets none), at
// most four, each with why it is there.
func (p *planner) breakpoints(pl *plan, tools [][]byte, sys []byte) (map[int]mark, map[int]string) {
	marks, why := map[int]mark{}, map[int]string{}
	if p.w.p != payload.Anthropic {
		return marks, why
	}
	present := func(i int) int { // the last block at or before unit i
		for ; i >= 0 && pl.units[i].state == drop; i-- {
		}
		return i
	}
	type cand struct {
		at     int
		ttl    string
		reason string
	}
	var cands []cand
	if last := present(len(pl.units) - 1); last >= 0 {
		cands = append(cands, cand{last, "5m", "the last block: written for the next call, which reads it back"})
	}
	if pl.prevIntact && len(pl.calls) > 1 {
		if at := present(pl.calls[len(pl.calls)-2] - 1); at >= 0 {
			cands = append(cands, cand{at, "5m", "the end of the previous call, whole in this one: this call reads what that call wrote, however many blocks were added since (a read looks back only so far from a breakpoint)"})
		}
	}
	if at := present(pl.headNow); at >= 0 {
		cands = append(cands, cand{at, "1h", "the end of the compacted head (stubs and summaries): the next compaction cuts after it and reads it back; 1 hour, to outlive the calls between compactions"})
	}
	stable := -1
	switch {
	case sys != nil:
		cands = append(cands, cand{-1, "1h", "the end of the tools and system: the same bytes on every call, read back after every compaction; 1 hour, to outlive the calls between compactions"})
	case len(tools) > 0:
		stable = -1 - len(tools)
		cands = append(cands, cand{stable, "1h", "the end of the tools: the same bytes on every call, read back after every compaction; 1 hour, to outlive the calls between compactions"})
	}
	if at := present(pl.headPrev); at >= 0 && pl.headPrev != pl.headNow {
		cands = append(cands, cand{at, "1h", "the end of the compacted head before this call's compaction: this call reads it back, its cut coming after it"})
	}
	for _, cd := range cands {
		if len(marks) == 4 { // Anthropic's limit
			break
		}
		if _, ok := marks[cd.at]; ok {
			continue
		}
		marks[cd.at], why[cd.at] = mark{cd.ttl}, cd.reason
	}
	// 1-hour entries must come before 5-minute ones: a 1-hour candidate
	// after a 5-minute one is written for 5 minutes.
	ats := make([]int, 0, len(marks))
	for at := range marks {
		ats = append(ats, at)
	}
	slices.SortFunc(ats, func(a, b int) int { return order(a) - order(b) })
	short := false
	for _, at := range ats {
		if marks[at].ttl == "5m" {
			short = true
		} else if short {
			marks[at] = mark{"5m"}
			why[at] += " (5 minutes here: it follows a 5-minute breakpoint, and 1-hour entries must come first)"
		}
	}
	return marks, why
}

// newManifest reads a body Assemble wrote back as provider p and builds
// its request manifest.
func newManifest(body []byte, p payload.Provider, o *request.Options) (*request.Manifest, error) {
	r, err := payload.Read(body, p)
	if err != nil {
		return nil, err
	}
	return request.FromPayload(r, o)
}
