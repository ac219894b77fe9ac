// Package cache holds the providers' prompt-cache rules, as
// docs/caching.md states them, over request manifests: which prefix a
// call can read from the calls before it, what it writes, and, for every
// miss or shortfall, the segment, fragment, binding or setting to blame.
//
// Run predicts a sequence of calls, in the order they were made, beside
// what the provider reported; Explain, asked to lint, holds one request to
// the rules before it is sent; Explanation.After says where one request
// leaves the prefix of the call before it.
// There is one model a provider: Anthropic's (anthropic.go), the implicit
// caches of OpenAI and Gemini (implicit.go), and GPT-5.6's explicit
// breakpoints (openai56.go); each rule the models implement has its test.
package cache

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/request"
)

// Call is one call to predict: its whole request, when it was made, when
// its answer began (entries it writes are readable from then), and what
// the provider reported.
type Call struct {
	Name    string
	Line    int
	Session string
	At      time.Time
	Began   time.Time
	Request *request.Manifest
	// Reported is the usage the provider returned (nil: none recorded).
	Reported *payload.Usage
}

// Tokens is a cache read and write, in tokens.
type Tokens struct {
	Read  int `json:"read_tokens"`
	Write int `json:"write_tokens"`
}

// Verdict is one call's prediction beside the provider's report.
type Verdict struct {
	Call    string `json:"call"`
	Line    int    `json:"line"`
	Session string `json:"session,omitempty"`
	// Predicted is what the provider's rules predict; Reported what the
	// provider said (nil when the transcript has no usage for the call).
	Predicted Tokens  `json:"predicted"`
	Reported  *Tokens `json:"reported"`
	// InputTokens is the request's whole prompt, as counted (scaled to the
	// provider's report where there is one).
	InputTokens int `json:"input_tokens"`
	// ReadThrough is the path of the last segment the predicted read
	// covers ("" when nothing is read).
	ReadThrough string `json:"read_through,omitempty"`
	// Estimate says the token figures are estimates (the provider's
	// tokenizer is not public, or its rounding is not documented).
	Estimate bool `json:"estimate,omitempty"`
	// Blame says why tokens were written again, or not read, each with
	// the segment it names.
	Blame []Blame `json:"blame,omitempty"`
	// Problems are the rules the request breaks that make the provider
	// refuse it (a fifth breakpoint, TTLs out of order): nothing is
	// predicted for it.
	Problems []Finding `json:"problems,omitempty"`
	// Model is the request's. Cost is what the call cost, in
	// micro-dollars, at the price table's list prices: from the usage the
	// provider reported (CostBasis "reported"), or, with none, from the
	// prediction, output unknown ("predicted"). MissCost is what its
	// misses cost over reading the same tokens (each blame's Cost, added
	// up). Priced is false when the table has no price for the model, or
	// for a lifetime the call wrote, and Unpriced says which: then only
	// tokens are shown.
	Model     string `json:"model,omitempty"`
	Priced    bool   `json:"priced"`
	Cost      int64  `json:"cost_micro_usd"`
	MissCost  int64  `json:"miss_cost_micro_usd"`
	CostBasis string `json:"cost_basis,omitempty"`
	Unpriced  string `json:"unpriced,omitempty"`
	// ProviderReason is the provider's own verdict on the call, where its
	// answer carried one (payload.Usage.CacheMissReason: Anthropic's cache
	// diagnostics, OpenAI's prompt cache diagnostics), and
	// ProviderTokens its estimate of the tokens the miss cost.
	// ProviderSince is the earlier call promptloom holds it against, the
	// one before it in its session (the call whose response a proxy asks
	// the provider to compare with), and Found is where promptloom finds
	// the request leaving that call: a path and its section, a setting,
	// or "no change". Agrees is true when the two place the change alike
	// (tools_changed beside a change in /tools/N), false when they do
	// not, nil when there is nothing to hold together (no verdict, one
	// that concludes nothing, or no call before it).
	ProviderReason string `json:"provider_reason,omitempty"`
	ProviderTokens int    `json:"provider_missed_tokens,omitempty"`
	ProviderSince  string `json:"provider_since,omitempty"`
	Found          string `json:"found,omitempty"`
	Agrees         *bool  `json:"agrees,omitempty"`

	// writes are the predicted write by lifetime, in the order the
	// provider bills them (Anthropic's 1h entries come first).
	writes []lifetimeTokens
}

// lifetimeTokens are tokens written with one lifetime, named as the
// provider's API names it.
type lifetimeTokens struct {
	ttl    string
	tokens int
}

// String says the verdict in words, the prediction beside the report in
// the same tokens, as report prints it.
func (v Verdict) String() string {
	est := ""
	if v.Estimate {
		est = " (estimated)"
	}
	line := fmt.Sprintf("the provider's rules predict a read of %s tokens and a write of %s%s", thousands(v.Predicted.Read), thousands(v.Predicted.Write), est)
	if v.ReadThrough != "" {
		line += ", read through " + v.ReadThrough
	}
	if r := v.Reported; r != nil {
		line += fmt.Sprintf("; it reported a read of %s and a write of %s", thousands(r.Read), thousands(r.Write))
	}
	for _, p := range v.Problems {
		line += "; refused: " + p.String()
	}
	if v.ProviderReason != "" {
		line += "; " + v.providerLine()
	}
	return line
}

// Blame is one reason a call missed the cache, or read less of it.
type Blame struct {
	// Kind is change (a byte, setting or order changed ahead of what was
	// cached), expired (the entry's lifetime ran out), minimum (a
	// breakpoint's prefix is below the model's minimum), lookback (the
	// entry is farther back than the provider looks), concurrent (the
	// entry's writer had not begun its answer when this call started),
	// unexplained (the provider reported another read than its rules
	// predict, and nothing changed).
	Kind    string `json:"kind"`
	Path    string `json:"path,omitempty"`
	Section string `json:"section,omitempty"`
	Reason  string `json:"reason"`
	// Tokens are the tokens written again, or not read, because of it.
	Tokens int `json:"tokens"`
	// Since is the earlier call the comparison is with.
	Since string `json:"since,omitempty"`
	// Cost is what the miss cost, in micro-dollars: the tokens at the
	// price the call paid for them (the write it made, then input) less
	// the same tokens at the cache-read price; 0 when unpriced.
	Cost int64 `json:"cost_micro_usd,omitempty"`
}

// Finding is a rule a request breaks, or a likely mistake, found by Lint.
type Finding struct {
	// Severity is "error" (the provider refuses the request) or
	// "warning" (it is accepted and caches less than it could).
	Severity string `json:"severity"`
	Rule     string `json:"rule"`
	Path     string `json:"path,omitempty"`
	Message  string `json:"message"`
	// The session lint (Options.Lint) also says where and what to do:
	// the session and model, how many of its calls the finding covers,
	// the change to make (Fix), and its estimated saving over the session,
	// in tokens and micro-dollars (SavingCost is 0 for a model the price
	// table does not price).
	Session      string `json:"session,omitempty"`
	Model        string `json:"model,omitempty"`
	Calls        int    `json:"calls,omitempty"`
	Fix          string `json:"fix,omitempty"`
	SavingTokens int    `json:"saving_tokens,omitempty"`
	SavingCost   int64  `json:"saving_micro_usd,omitempty"`
}

func (f Finding) String() string {
	if f.Path != "" {
		return fmt.Sprintf("%s: %s: %s (%s)", f.Severity, f.Path, f.Message, f.Rule)
	}
	return fmt.Sprintf("%s: %s (%s)", f.Severity, f.Message, f.Rule)
}

// Options tune the models. Nil is the documentation's values.
type Options struct {
	// Minimums overrides the minimum cacheable prefix, in tokens, by model
	// ID prefix ("claude-sonnet-4-5": 1024); the longest prefix that
	// matches a model wins over the built-in table.
	Minimums map[string]int
	// Lifetime overrides how long an entry lives when nothing says
	// otherwise (Anthropic's 5 minutes; OpenAI's in_memory; Gemini's
	// implicit cache).
	Lifetime time.Duration
	// Prices prices each call; nil is the built-in table
	// (docs/caching.md, "Prices").
	Prices *Prices
	// Lint adds, to Run's analysis, the findings of the session lint: each
	// session's history held to the caches' rules (docs/caching.md,
	// "The session lint").
	Lint bool
}

// Analysis is Run's result: a verdict a call and a summary.
type Analysis struct {
	Verdicts []Verdict `json:"calls"`
	Summary  Summary   `json:"summary"`
	// Lint is the session lint's findings, with Options.Lint.
	Lint []Finding `json:"lint,omitempty"`
}

// Summary totals an analysis.
type Summary struct {
	Calls int `json:"calls"`
	// PredictedHitRate is the predicted cache reads over the whole input
	// as counted; ReportedHitRate the reported reads over the whole input
	// the providers reported (over the calls with a report).
	PredictedHitRate float64 `json:"predicted_hit_rate"`
	ReportedHitRate  float64 `json:"reported_hit_rate"`
	// Rewritten are the tokens written again, or not read, by blamed path
	// (the path in Key), with what they cost.
	Rewritten []Total `json:"rewritten,omitempty"`
	// Changes counts the blames of kind change.
	Changes int `json:"changes"`
	// Cost and MissCost add up the calls' (micro-dollars, priced calls
	// only); Sessions, Models and Causes break them down by session, by
	// model and by the kind of blame; Unpriced names the models the table
	// has no price for. PricesTaken and PricesSource are the table's.
	Cost         int64    `json:"cost_micro_usd"`
	MissCost     int64    `json:"miss_cost_micro_usd"`
	Sessions     []Total  `json:"sessions,omitempty"`
	Models       []Total  `json:"models,omitempty"`
	Causes       []Total  `json:"causes,omitempty"`
	Unpriced     []string `json:"unpriced,omitempty"`
	PricesTaken  string   `json:"prices_taken,omitempty"`
	PricesSource string   `json:"prices_source,omitempty"`
	// Agreements counts the calls whose provider's verdict agrees with
	// promptloom's (Verdict.Agrees), and Disagreements lists each call
	// where it does not, in words.
	Agreements    int      `json:"agreements"`
	Disagreements []string `json:"disagreements,omitempty"`
}

// Total is money and tokens added up over the calls of one session or
// one model, or over the misses of one cause (a blame's kind) or of one
// blamed path.
type Total struct {
	Key string `json:"key"`
	// Calls counts the calls (for a cause or a path: the misses it
	// names); Unpriced those of them the table has no price for.
	Calls    int `json:"calls"`
	Unpriced int `json:"unpriced_calls,omitempty"`
	// Cost is what the calls cost (0 for a cause or a path); MissTokens
	// and MissCost are their misses, in tokens and micro-dollars.
	Cost       int64 `json:"cost_micro_usd"`
	MissTokens int   `json:"miss_tokens"`
	MissCost   int64 `json:"miss_cost_micro_usd"`
}

// model is one provider's cache.
type model interface {
	// settings are the request members rendered into the prefix, each
	// with the section it invalidates from.
	settings() map[string]string
	lint(m, since *request.Manifest, o *Options) []Finding
	predict(st *state, c *Call, scale float64) Verdict
}

func modelFor(provider string) model {
	switch payload.Provider(provider) {
	case payload.Anthropic:
		return anthropic{}
	case payload.OpenAIChat, payload.OpenAIResponses:
		return openai{}
	case payload.Gemini:
		return gemini{}
	}
	return nil
}

// lint holds m to its provider's cache rules; since, when given, is the
// previous request of the conversation, and content that changed since,
// ahead of a breakpoint, is reported too (Explain's Lint).
func lint(m, since *request.Manifest, o *Options) []Finding {
	md := modelFor(m.Provider)
	if md == nil {
		return []Finding{{Severity: "warning", Rule: "provider", Message: fmt.Sprintf("no cache model for provider %q", m.Provider)}}
	}
	if since != nil && since.Provider != m.Provider {
		// Another provider's request shares no cache with this one.
		fs := md.lint(m, nil, orDefault(o))
		return append(fs, Finding{Severity: "warning", Rule: "since", Message: fmt.Sprintf("the previous request is %s's, this one %s's: nothing is compared", since.Provider, m.Provider)})
	}
	return md.lint(m, since, orDefault(o))
}

// diverge is request.Diverge with the provider's rules of what is in the
// prefix.
func diverge(a, b *request.Manifest) request.Divergence {
	var settings map[string]string
	if md := modelFor(b.Provider); md != nil {
		settings = md.settings()
	}
	return request.Diverge(a, b, settings)
}

// Run predicts calls in the order given (the order they were made), each
// from the entries the calls before it wrote: one cache for all of them,
// as a provider keeps one for an organization. A miss is blamed on a
// change only against an earlier call that shares a prefix with it, or
// the one before it in its session: a call of another conversation that
// shares nothing was never its cache. Token figures estimated rather than
// counted are scaled, call by call, to the total the provider reported for
// the call, and to the mean of the provider's other calls where it
// reported none; counted figures are the tokenizer's and stay as they are.
func Run(calls []Call, o *Options) *Analysis {
	o = orDefault(o)
	st := &state{opts: o, entries: map[digest.Digest]*entry{}}
	means := meanScales(calls)
	a := &Analysis{Verdicts: make([]Verdict, 0, len(calls))}
	reportedIn := 0 // the whole prompts the providers reported
	for i := range calls {
		c := &calls[i]
		v := st.verdict(c, means)
		st.remember(c)
		a.Verdicts = append(a.Verdicts, v)
		if c.Reported != nil {
			reportedIn += totalReported(c.Request.Provider, c.Reported)
		}
	}
	a.summarize(reportedIn)
	a.tally()
	a.totals(o.prices())
	if o.Lint {
		a.Lint = lintSessions(calls, a, o)
	}
	return a
}

// verdict is c's prediction from the cache the calls before it left in
// st: the one source of a call's predicted read and write, for Run (cache,
// explain --request on a recorded call, the proxy's page), Compare (diff
// --request) and the Predictor alike. An estimated manifest is scaled to
// the total the provider reported for c, or else to the mean of the
// provider's reports in means; counted figures stay as they are. The
// verdict is then held to c's report (an unexplained shortfall or excess),
// priced, and set beside the provider's own verdict.
func (st *state) verdict(c *Call, means map[string]float64) Verdict {
	md := modelFor(c.Request.Provider)
	var v Verdict
	if md == nil {
		v = Verdict{Problems: []Finding{{Severity: "warning", Rule: "provider", Message: "no cache model for this provider"}}}
	} else {
		scale := 1.0
		if c.Request.Counter == "estimate" {
			if s, ok := means[c.Request.Provider]; ok {
				scale = s
			}
			if s, ok := callScale(c); ok {
				scale = s
			}
		}
		v = md.predict(st, c, scale)
	}
	v.Call, v.Line, v.Session = c.Name, c.Line, c.Session
	if c.Reported != nil {
		v.Reported = &Tokens{Read: c.Reported.CacheReadTokens, Write: c.Reported.CacheWriteTokens}
		if short := v.Predicted.Read - v.Reported.Read; short > 0 && len(v.Problems) == 0 && (!v.Estimate || v.Reported.Read == 0 || float64(short) > 0.05*float64(v.Predicted.Read)) {
			v.Blame = append(v.Blame, Blame{Kind: "unexplained", Path: v.ReadThrough,
				Reason: fmt.Sprintf("the provider read %d tokens, %d fewer than its rules predict, and nothing changed to explain it (an entry evicted early, another workspace, or a rule read otherwise: docs/caching.md)",
					v.Reported.Read, v.Predicted.Read-v.Reported.Read),
				Tokens: v.Predicted.Read - v.Reported.Read})
		}
		// An implicit cache reads in 128-token steps, and a count
		// leaves out the provider's own framing of messages and
		// tools: a step more than predicted is an ordinary hit.
		if over := v.Reported.Read - v.Predicted.Read; over > 128 && len(v.Problems) == 0 && (!v.Estimate || float64(over) > 0.05*float64(max(v.Predicted.Read, v.InputTokens))) {
			// More than the calls before it can have written: the
			// transcript does not hold every call of the cache (another
			// client, another proxy), or the report is wrong.
			v.Blame = append(v.Blame, Blame{Kind: "unexplained", Path: v.ReadThrough,
				Reason: fmt.Sprintf("the provider read %d tokens, %d more than its rules predict from the calls before it (entries written by calls not in this transcript, or a rule read otherwise: docs/caching.md)",
					v.Reported.Read, over)})
		}
	}
	priceCall(st.opts.prices(), &v, c)
	st.beside(c, &v)
	return v
}

func orDefault(o *Options) *Options {
	if o == nil {
		return &Options{}
	}
	return o
}

// prices is the table the options name, or the built-in one.
func (o *Options) prices() *Prices {
	if o == nil || o.Prices == nil {
		return defaultPrices
	}
	return o.Prices
}

// totalReported is the whole prompt a provider reported for a call.
func totalReported(provider string, u *payload.Usage) int {
	return u.Prompt(payload.Provider(provider))
}

// callScale is the ratio of a call's reported prompt to its estimate,
// for an estimated manifest with a report.
func callScale(c *Call) (float64, bool) {
	if c.Reported == nil || c.Request.Counter != "estimate" || c.Request.Tokens == 0 {
		return 0, false
	}
	t := totalReported(c.Request.Provider, c.Reported)
	if t == 0 {
		return 0, false
	}
	return float64(t) / float64(c.Request.Tokens), true
}

// meanScales is, by provider, the ratio of the prompts its calls reported
// to their estimates, for the providers that reported any: a provider's
// tokenizer is not another's.
func meanScales(calls []Call) map[string]float64 {
	rep, est := map[string]int{}, map[string]int{}
	for i := range calls {
		c := &calls[i]
		if _, ok := callScale(c); ok {
			rep[c.Request.Provider] += totalReported(c.Request.Provider, c.Reported)
			est[c.Request.Provider] += c.Request.Tokens
		}
	}
	out := make(map[string]float64, len(est))
	for p, n := range est {
		out[p] = float64(rep[p]) / float64(n)
	}
	return out
}

// summarize totals the verdicts; repIn is the whole prompts the
// providers reported.
func (a *Analysis) summarize(repIn int) {
	var predRead, predIn, repRead int
	byPath := map[string]*Total{}
	for i := range a.Verdicts {
		v := &a.Verdicts[i]
		a.Summary.Calls++
		predRead += v.Predicted.Read
		predIn += v.InputTokens
		if v.Reported != nil {
			repRead += v.Reported.Read
		}
		for _, b := range v.Blame {
			if b.Kind == "change" {
				a.Summary.Changes++
			}
			if b.Kind == "unexplained" || b.Tokens == 0 {
				continue
			}
			r := byPath[b.Path]
			if r == nil {
				r = &Total{Key: b.Path}
				byPath[b.Path] = r
			}
			r.MissTokens += b.Tokens
			r.MissCost = addMicros(r.MissCost, b.Cost)
			r.Calls++
			if !v.Priced {
				r.Unpriced++
			}
		}
	}
	if predIn > 0 {
		a.Summary.PredictedHitRate = float64(predRead) / float64(predIn)
	}
	if repIn > 0 {
		a.Summary.ReportedHitRate = float64(repRead) / float64(repIn)
	}
	for _, r := range byPath {
		a.Summary.Rewritten = append(a.Summary.Rewritten, *r)
	}
	sort.Slice(a.Summary.Rewritten, func(i, j int) bool {
		x, y := a.Summary.Rewritten[i], a.Summary.Rewritten[j]
		return x.MissTokens > y.MissTokens || x.MissTokens == y.MissTokens && x.Key < y.Key
	})
}

// state is the cache as the calls so far left it.
type state struct {
	opts    *Options
	entries map[digest.Digest]*entry
	// latest is each conversation's latest call, by provider and session.
	latest map[string]*Call
	index  map[digest.Digest]*Call // each prefix, by its chain digest: the latest call to send it
}

func conversation(c *Call) string { return c.Request.Provider + "\x00" + c.Session }

// entry is one cached prefix.
type entry struct {
	call     string
	path     string
	pos      int
	tokens   int
	ttl      time.Duration
	expires  time.Time
	readable time.Time
}

func (e *entry) alive(at time.Time) bool {
	return at.Before(e.expires) && !at.Before(e.readable)
}

// minimum finds a model's minimum in table, the user's overrides first.
func minimum(model string, o *Options, table []minRow) (int, bool) {
	best, n, ok := -1, 0, false
	m := strings.ToLower(model)
	for p, v := range o.Minimums {
		if strings.HasPrefix(m, strings.ToLower(p)) && len(p) > best {
			best, n, ok = len(p), v, true
		}
	}
	if ok {
		return n, true
	}
	for _, r := range table {
		if strings.HasPrefix(m, r.prefix) && len(r.prefix) > best {
			best, n, ok = len(r.prefix), r.tokens, true
		}
	}
	return n, ok
}

type minRow struct {
	prefix string
	tokens int
}

// best is the earlier call whose request shares the longest prefix with
// c's, and where c leaves it: found through the index of every earlier
// call's prefixes (the latest call to have each), so a run of n calls is
// linear in its segments, not quadratic in its calls. With no prefix in
// common, it is the latest earlier call of c's session (for calls with
// no session, of the others with none).
func (st *state) best(c *Call) (*Call, request.Divergence, bool) {
	chain := prefixChain(c.Request)
	var at *Call
	for i := len(chain) - 1; i >= 0 && at == nil; i-- {
		at = st.index[chain[i]]
	}
	if at == nil {
		at = st.latest[conversation(c)]
	}
	if at == nil {
		return nil, request.Divergence{}, false
	}
	return at, diverge(at.Request, c.Request), true
}

// remember adds c's prefixes to the index, and c as its session's latest.
func (st *state) remember(c *Call) {
	if st.index == nil {
		st.index = map[digest.Digest]*Call{}
		st.latest = map[string]*Call{}
	}
	st.latest[conversation(c)] = c
	for _, k := range prefixChain(c.Request) {
		st.index[k] = c
	}
}

// prefixChain is the digest of each prefix of m's segments: the
// provider and model, then each segment's digest and path in turn.
func prefixChain(m *request.Manifest) []digest.Digest {
	out := make([]digest.Digest, len(m.Segments))
	h := digest.Bytes([]byte(m.Provider + "\x00" + m.Model))
	buf := make([]byte, 0, 96)
	for i, s := range m.Segments {
		buf = append(append(append(buf[:0], h[:]...), s.Digest[:]...), s.Path...)
		h = digest.Bytes(buf)
		out[i] = h
	}
	return out
}

func plural(n int, one string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %ss", n, one)
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Breakpoint is one place a request asks its provider to cache, and what
// the prefix ending there holds.
type Breakpoint struct {
	// Path is the segment the breakpoint is on ("" for an implicit cache,
	// which has no one place).
	Path string `json:"path,omitempty"`
	TTL  string `json:"ttl,omitempty"`
	// Auto is Anthropic's automatic breakpoint (top-level cache_control).
	Auto bool `json:"auto,omitempty"`
	// Segments and Tokens are the prefix it caches, counted from the
	// start; Cached is false when the prefix is below the model's minimum.
	Segments int  `json:"segments"`
	Tokens   int  `json:"tokens"`
	Cached   bool `json:"cached"`
	// Caches says it in words.
	Caches string `json:"caches"`
}

// Breakpoints lists where m asks its provider to cache, in order, and
// what each breakpoint caches.
func Breakpoints(m *request.Manifest, o *Options) []Breakpoint {
	o = orDefault(o)
	switch payload.Provider(m.Provider) {
	case payload.Anthropic:
		a := anthropic{}
		bl := blocks(m, a.settings(), 1)
		bps, _ := a.breakpoints(m, bl)
		min, known := minimum(m.Model, o, anthropicMinimums)
		var out []Breakpoint
		for _, b := range bps {
			x := bl[b.pos]
			ttl := "5m"
			if b.ttl == oneHour {
				ttl = "1h"
			}
			bp := Breakpoint{Path: x.path, TTL: ttl, Auto: b.auto, Segments: x.last + 1, Tokens: x.cum, Cached: !known || x.cum >= min}
			bp.Caches = caches(m, x)
			switch {
			case !known:
				bp.Caches += " (minimum unknown for " + m.Model + ")"
			case !bp.Cached:
				bp.Caches += fmt.Sprintf("; below %s's %s-token minimum, so nothing is cached here", m.Model, thousands(min))
			}
			if b.auto {
				bp.Caches = "automatic: " + bp.Caches
			}
			out = append(out, bp)
		}
		return out
	case payload.OpenAIChat, payload.OpenAIResponses, payload.Gemini:
		if m.Provider != string(payload.Gemini) && gpt56(m) {
			return breakpointsList56(m, o)
		}
		var r implicitRules
		who := "OpenAI"
		if m.Provider == string(payload.Gemini) {
			r, who = gemini{}.rules(), "Gemini"
		} else {
			r = openai{}.rules()
		}
		min, known := r.min(m, o)
		b := Breakpoint{Segments: len(m.Segments), Tokens: m.Tokens, Cached: !known || m.Tokens >= min}
		b.Caches = fmt.Sprintf("%s caches the prefix it shares with earlier requests on its own (implicit)", who)
		if known {
			b.Caches += fmt.Sprintf(", from %s tokens", thousands(min))
		}
		if !b.Cached {
			b.Caches += fmt.Sprintf("; this request is about %s, below it", thousands(m.Tokens))
		}
		return []Breakpoint{b}
	}
	return nil
}

// caches says what the prefix through block x holds.
func caches(m *request.Manifest, x block) string {
	sections := map[string]bool{}
	for _, s := range m.Segments[:x.last+1] {
		sections[s.Section] = true
	}
	var covers []string
	for _, s := range []string{"tools", "system", "messages"} {
		if sections[s] {
			covers = append(covers, s)
		}
	}
	return fmt.Sprintf("caches %s through %s: %s, about %s tokens", strings.Join(covers, ", "), x.path, plural(x.last+1, "segment"), thousands(x.cum))
}

// Predictor is Run one call at a time, for a program that predicts each
// call as it is made (the transport's span attributes): the calls given
// so far are the cache. It is safe for concurrent use.
type Predictor struct {
	mu sync.Mutex
	st *state
}

// NewPredictor returns a Predictor with an empty cache.
func NewPredictor(o *Options) *Predictor {
	return &Predictor{st: &state{opts: orDefault(o), entries: map[digest.Digest]*entry{}}}
}

// Predict predicts c from the calls before it and adds it to the cache.
// Its estimates are scaled only to a report given with it: a call
// predicted as it is sent has none yet.
func (p *Predictor) Predict(c Call) Verdict {
	p.mu.Lock()
	defer p.mu.Unlock()
	v := p.st.verdict(&c, nil)
	p.st.remember(&c)
	return v
}
