package proxy

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/internal/wire"
	"github.com/promptloom/promptloom/request"
)

//go:embed page.html.tmpl
var pageSource string

var pageTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"n": thousands, "px": px, "approx": approx,
	"deref": func(b *bool) bool { return b != nil && *b },
}).Parse(pageSource))

// allowed says whether r may read the page: from loopback, or with the
// token.
func (p *Proxy) allowed(r *http.Request) bool {
	if p.o.UIToken != "" {
		if r.Header.Get("Authorization") == "Bearer "+p.o.UIToken || r.URL.Query().Get("token") == p.o.UIToken {
			return true
		}
	}
	return p.o.UIToken == "" && isLoopback(r)
}

// page serves /promptloom/: the overview, a call's whole request
// explained, the calls as JSON, and the events that keep the overview
// current.
func (p *Proxy) page(w http.ResponseWriter, r *http.Request) {
	if !p.allowed(r) {
		http.Error(w, "promptloom: the page is served on loopback only, or with --ui-token", http.StatusForbidden)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "promptloom: the page is read-only", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'")
	switch path := strings.TrimPrefix(r.URL.Path, "/promptloom"); {
	case path == "" || path == "/":
		p.overview(w, r)
	case path == "/events":
		p.events(w, r)
	case path == "/calls.json":
		p.callsJSON(w)
	case strings.HasPrefix(path, "/call/"):
		n, err := strconv.Atoi(strings.TrimPrefix(path, "/call/"))
		p.callPage(w, r, n, err)
	default:
		http.NotFound(w, r)
	}
}

// row is one call as the overview lists it.
type row struct {
	Seq       int    `json:"seq"`
	Call      string `json:"call"`
	Session   string `json:"session"`
	Model     string `json:"model"`
	Tokens    int    `json:"tokens"`
	Status    string `json:"status"`
	Predicted string `json:"predicted"`
	Reported  string `json:"reported"`
	Blame     string `json:"blame,omitempty"`
	// Read, Written and Uncached are the predicted tokens the bar draws
	// (Estimate: the provider's tokenizer is not public, or its rounding
	// not documented); Cost and MissCost are the cache package's prices
	// ("": unpriced), and Provider the provider's own verdict beside
	// promptloom's blame, with Agrees.
	Read     int    `json:"read"`
	Written  int    `json:"written"`
	Uncached int    `json:"uncached"`
	Estimate bool   `json:"estimate,omitempty"`
	Cost     string `json:"cost,omitempty"`
	MissCost string `json:"miss_cost,omitempty"`
	Provider string `json:"provider_verdict,omitempty"`
	Agrees   *bool  `json:"agrees,omitempty"`

	// For the templates only: the bar, the session's element id, and the
	// query a link keeps (the token the page was given).
	Bar *barView `json:"-"`
	Key string   `json:"-"`
	Q   string   `json:"-"`

	c    *callState
	done bool // c.done when the row was taken
}

// rowOf is c's row as it stands, without its manifest's figures or its
// verdict (p.mu held: it reads the outcome).
func rowOf(c *callState) row {
	r := row{Seq: c.seq, Call: c.name, Session: c.session.id, Model: c.pr.Model, Status: "in flight", c: c, done: c.done}
	switch {
	case c.done && c.failed != "":
		r.Status = "error: " + c.failed
	case c.done:
		r.Status = "ok"
		if c.stop != "" {
			r.Status += " (" + c.stop + ")"
		}
	}
	return r
}

// fill adds the call's manifest figures and its verdict from vs to r
// (p.mu not held). With made unset, the manifest's figures are taken
// only when it was made already: an event's row is never held up by a
// computation.
func fill(r *row, vs map[int]cache.Verdict, made bool) {
	c := r.c
	r.c = nil
	r.Key = elementID(r.Session)
	var m *request.Manifest
	if made || c.mReady.Load() {
		m = c.manifest()
	}
	if m != nil {
		r.Model, r.Tokens = m.Model, m.Tokens
	}
	v, ok := vs[c.seq]
	if !ok {
		return
	}
	r.Predicted, r.Reported, r.Blame = figures(v)
	r.Read, r.Written, r.Estimate = v.Predicted.Read, v.Predicted.Write, v.Estimate
	r.Uncached = max(v.InputTokens-v.Predicted.Read-v.Predicted.Write, 0)
	if v.Priced {
		r.Cost = approx(v.Estimate && v.CostBasis == "predicted") + dollars(v.Cost)
		if v.MissCost > 0 {
			r.MissCost = approx(v.Estimate) + dollars(v.MissCost)
		}
	}
	r.Provider, r.Agrees = providerVerdict(v), v.Agrees
	r.Bar = barOf(m, v)
}

// figures are a verdict as the row shows it, a ~ before an estimate.
func figures(v cache.Verdict) (predicted, reported, blame string) {
	e := approx(v.Estimate)
	predicted = fmt.Sprintf("read %s%s, write %s%s", e, thousands(v.Predicted.Read), e, thousands(v.Predicted.Write))
	if v.Reported != nil {
		reported = fmt.Sprintf("read %s, write %s", thousands(v.Reported.Read), thousands(v.Reported.Write))
	}
	var bs []string
	for _, b := range v.Blame {
		bs = append(bs, b.Kind+": "+b.Reason)
	}
	return predicted, reported, strings.Join(bs, "; ")
}

// providerVerdict is the provider's own verdict on the call, where its
// answer carried one, and whether promptloom places the change alike.
func providerVerdict(v cache.Verdict) string {
	if v.ProviderReason == "" {
		return ""
	}
	line := "the provider says " + v.ProviderReason
	if v.ProviderTokens > 0 {
		line += " (about " + thousands(v.ProviderTokens) + " tokens missed, its estimate)"
	}
	switch {
	case v.Agrees == nil:
	case *v.Agrees:
		line += "; promptloom finds, since call " + v.ProviderSince + ", " + v.Found + ": they agree"
	default:
		line += "; promptloom finds, since call " + v.ProviderSince + ", " + v.Found + ": they disagree"
	}
	return line
}

// rows lists every call the page keeps, with its session's cache
// verdicts, and each session's plot: the list is taken under p.mu, the
// figures made outside it.
func (p *Proxy) rows(q string) ([]row, int, []*plotView) {
	p.mu.Lock()
	out := make([]row, 0, len(p.calls))
	for _, c := range p.calls {
		out = append(out, rowOf(c))
	}
	sessions := len(p.order)
	p.mu.Unlock()
	verdicts := map[*session]map[int]cache.Verdict{}
	var plots []*plotView
	for i := range out {
		s := out[i].c.session
		vs, ok := verdicts[s]
		if !ok {
			vs = p.verdicts(s)
			verdicts[s] = vs
			plots = append(plots, plotOf(s.id, vs))
		}
		fill(&out[i], vs, true)
		out[i].Q = q
	}
	return out, sessions, plots
}

// query is what a link on the page keeps of r's: the token it was given
// in its query, when that is the page's.
func (p *Proxy) query(r *http.Request) string {
	if t := r.URL.Query().Get("token"); t != "" && t == p.o.UIToken {
		return "?token=" + url.QueryEscape(t)
	}
	return ""
}

func (p *Proxy) overview(w http.ResponseWriter, r *http.Request) {
	q := p.query(r)
	rows, sessions, plots := p.rows(q)
	state := "not checked"
	if p.o.Verify != nil {
		state = p.verifyState()
	}
	p.mu.Lock()
	refused := slices.Clone(p.refusals)
	p.mu.Unlock()
	slices.Reverse(refused) // the latest first
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = pageTmpl.ExecuteTemplate(w, "page", map[string]any{
		"Upstream": p.upstream, "Sessions": sessions, "Rows": rows, "Verify": state, "Plots": plots, "Refused": refused,
	})
}

func (p *Proxy) callsJSON(w http.ResponseWriter) {
	rows, _, _ := p.rows("")
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(rows)
}

// callPage is one call's whole request explained, its words with it,
// with its cache verdict, where it left the call before it in its
// session, and its diff against that call.
func (p *Proxy) callPage(w http.ResponseWriter, r *http.Request, n int, err error) {
	p.mu.Lock()
	c := p.call(n)
	if err != nil || c == nil {
		p.mu.Unlock()
		http.Error(w, "promptloom: no such call (the page keeps the latest calls; the transcript has them all)", http.StatusNotFound)
		return
	}
	var prev *callState
	for i, x := range c.session.calls {
		if x == c && i > 0 {
			prev = c.session.calls[i-1]
		}
	}
	p.mu.Unlock()
	m := c.manifest()
	if m == nil {
		http.Error(w, "promptloom: the call's request has no manifest: "+c.mErr.Error(), http.StatusUnprocessableEntity)
		return
	}
	v := p.verdicts(c.session)[c.seq]
	var pm *request.Manifest
	if prev != nil {
		pm = prev.manifest()
	}
	x := cache.Explain(m, nil, p.o.Cache, true)
	x.Verdict = &v
	// The body as sent: the explanation redacts each segment's words.
	x.Body = wire.Body(c.pr)
	d := map[string]any{"Back": "../" + p.query(r), "Query": p.query(r)}
	if pm != nil {
		x.After(prev.name, pm)
		d["Previous"], d["PreviousSeq"] = prev.name, prev.seq
		d["Diff"] = diffOf(x, pm, wire.Body(prev.pr), p.o.Cache)
	}
	var b bytes.Buffer
	if err := x.WriteHTML(&b, c.name); err != nil {
		http.Error(w, "promptloom: "+err.Error(), http.StatusInternalServerError)
		return
	}
	var extra bytes.Buffer
	if err := pageTmpl.ExecuteTemplate(&extra, "diff", d); err != nil {
		http.Error(w, "promptloom: "+err.Error(), http.StatusInternalServerError)
		return
	}
	// The diff goes ahead of the explanation's segments (its first
	// heading): what changed since the call before is what a person
	// opening a call that missed looks for first.
	page := b.Bytes()
	at := bytes.Index(page, []byte("<h2"))
	if at < 0 {
		at = bytes.LastIndex(page, []byte("</body>"))
	}
	if at < 0 {
		at = len(page)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(page[:at])
	_, _ = w.Write(extra.Bytes())
	_, _ = w.Write(page[at:])
}

// events streams the overview's rows as they change (server-sent events:
// each a call's row, as JSON). A row is sent as it stands; its verdict
// follows when the refresher has made it. A page's events are sent in
// batches, one write at most every batchEvery: each row changed since the
// last batch, once, as it stands then. Twenty pages each sent a write for
// every call admitted, answered and given its verdict held up the calls'
// tail on two cores.
func (p *Proxy) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "promptloom: streaming unsupported", http.StatusInternalServerError)
		return
	}
	q := p.query(r)
	wt := &watcher{wake: make(chan struct{}, 1), pending: map[int]struct{}{}}
	if !p.watch(wt) {
		http.Error(w, "promptloom: shutting down", http.StatusServiceUnavailable)
		return
	}
	defer p.unwatch(wt)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": promptloom\n\n")
	fl.Flush()
	// The version of each session's verdicts whose plot this page has.
	plotted := map[*session]int{}
	var batch bytes.Buffer
	var seqs []int
	for {
		select {
		case <-r.Context().Done():
			return
		case <-p.stop:
			return
		case <-wt.wake:
		}
		// The rows that change within the interval go in this batch.
		tick, stop := batchTimer(batchEvery)
		select {
		case <-r.Context().Done():
			stop()
			return
		case <-p.stop:
			stop()
			return
		case <-tick:
		}
		rows := make([]row, 0, len(wt.pending))
		p.mu.Lock()
		seqs = seqs[:0]
		for n := range wt.pending {
			seqs = append(seqs, n)
		}
		clear(wt.pending)
		select {
		case <-wt.wake: // told of rows this batch takes
		default:
		}
		slices.Sort(seqs)
		for _, n := range seqs {
			if c := p.call(n); c != nil {
				rows = append(rows, rowOf(c))
			}
		}
		p.mu.Unlock()
		batch.Reset()
		for i := range rows {
			s := rows[i].c.session
			m := s.memo.Load()
			data := rowEvent(rows[i], m, q)
			if len(data) == 0 {
				continue
			}
			// The session's plot, from the verdicts made already, when
			// this page has not had it (the row's object with one more
			// member): a page sent the same plot again with every row
			// took more of the cores than the calls.
			if v, ok := plotted[s]; m != nil && (!ok || v != m.version) && m.plotHTML(s.id) != "" {
				plotted[s] = m.version
				batch.Write(eventHead)
				batch.Write(data[:len(data)-1])
				batch.Write(plotKey)
				batch.Write(m.plotJSON)
				batch.Write(plotTail)
				continue
			}
			batch.Write(eventHead)
			batch.Write(data)
			batch.Write(eventTail)
		}
		if batch.Len() == 0 {
			continue
		}
		if _, err := w.Write(batch.Bytes()); err != nil {
			return
		}
		fl.Flush()
	}
}

// batchEvery is how often at most a page's events are sent: a page
// watching has each change within it, and ten writes a second at most.
const batchEvery = 100 * time.Millisecond

// batchTimer waits d for a page's batch: a timer, or a test's clock.
func batchTimer(d time.Duration) (<-chan time.Time, func() bool) {
	if h := hooks.Load(); h != nil && h.batch != nil {
		return h.batch(d)
	}
	t := time.NewTimer(d)
	return t.C, t.Stop
}

// watcher is a page watching the events: the calls changed since its
// last batch, each once (p.mu), and wake, told when the first is added.
type watcher struct {
	wake    chan struct{}
	pending map[int]struct{}
}

// The pieces of an event, around its row's object.
var (
	eventHead = []byte("event: call\ndata: ")
	eventTail = []byte("\n\n")
	plotKey   = []byte(`,"plot":`)
	plotTail  = []byte("}\n\n")
)

// encodedRow is a call's row as an event sends it (its JSON object,
// without the plot), as of the verdicts memo, the call's outcome (done),
// its manifest's figures (made) and the query its links keep.
type encodedRow struct {
	memo       *verdictSet
	done, made bool
	q          string
	data       []byte
}

// rowsEncoded counts the rows events encoded, for a test.
var rowsEncoded atomic.Int64

// rowEvent is r (taken by rowOf) as an event's JSON object, with the
// verdicts m (nil: none yet), for pages whose query is q. It is encoded
// once for all the pages watching, not once a page: twenty pages open,
// each drawing and encoding every row again, took a core from the calls.
func rowEvent(r row, m *verdictSet, q string) []byte {
	c := r.c
	c.evMu.Lock()
	defer c.evMu.Unlock()
	made := c.mReady.Load()
	if e := c.ev; e != nil && e.memo == m && e.done == r.done && e.made == made && e.q == q {
		return e.data
	}
	var vs map[int]cache.Verdict
	if m != nil {
		vs = m.bySeq
	}
	fill(&r, vs, made)
	r.Q = q
	ev := event{row: r}
	var b strings.Builder
	if pageTmpl.ExecuteTemplate(&b, "row", r) == nil {
		ev.HTML = b.String()
	}
	data, _ := json.Marshal(ev)
	rowsEncoded.Add(1)
	c.ev = &encodedRow{memo: m, done: r.done, made: made, q: q, data: data}
	return data
}

// event is a call's row as an event sends it: its figures, the row and
// its session's plot as the page draws them (HTML: the page's script
// puts them in place of the old), so the SVG is drawn on the server
// alone.
type event struct {
	row
	HTML string `json:"html"`
	Plot string `json:"plot,omitempty"`
}

// watch adds a page to those told of changes, and starts the
// refresher that makes their verdicts, unless the proxy is closing.
func (p *Proxy) watch(w *watcher) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.watchers[w] = struct{}{}
	if !p.refreshing {
		p.refreshing = true
		go p.refresh()
	}
	return true
}

func (p *Proxy) unwatch(w *watcher) {
	p.mu.Lock()
	delete(p.watchers, w)
	p.mu.Unlock()
}

// dirty marks s's verdicts stale for the refresher (p.mu held).
func (p *Proxy) dirty(s *session) {
	if len(p.watchers) == 0 {
		return // a page load computes what it shows
	}
	p.stale[s] = struct{}{}
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// refresh makes, behind the calls, the verdicts of the sessions that
// changed while pages watch, and tells the pages of each row whose
// figures changed. One runs at a time, and it rests restFor times as
// long as it worked: a session's verdicts are the cache model run over
// its calls, and a page left open must not take the cores the calls need.
func (p *Proxy) refresh() {
	for {
		p.mu.Lock()
		if len(p.watchers) == 0 || p.closed {
			p.refreshing = false
			clear(p.stale)
			p.mu.Unlock()
			return
		}
		stale := p.stale
		p.stale = map[*session]struct{}{}
		p.mu.Unlock()
		if len(stale) == 0 {
			select {
			case <-p.kick:
			case <-p.stop:
			}
			continue
		}
		start := time.Now()
		for s := range stale {
			before := s.memo.Load()
			after := p.verdicts(s)
			p.mu.Lock()
			for seq, v := range after {
				if before != nil {
					if old, ok := before.bySeq[seq]; ok && sameFigures(old, v) {
						continue
					}
				}
				p.tell(seq)
			}
			p.mu.Unlock()
		}
		select {
		case <-time.After(restFor * time.Since(start)):
		case <-p.stop:
		}
	}
}

// restFor is how many times as long as its work the refresher rests: it
// takes at most a tenth of one core.
const restFor = 9

func sameFigures(a, b cache.Verdict) bool {
	a1, a2, a3 := figures(a)
	b1, b2, b3 := figures(b)
	return a1 == b1 && a2 == b2 && a3 == b3 && a.InputTokens == b.InputTokens &&
		a.Cost == b.Cost && a.MissCost == b.MissCost && providerVerdict(a) == providerVerdict(b)
}

// call is call seq, if the page still keeps it (p.mu held).
func (p *Proxy) call(seq int) *callState {
	i := seq - (p.seq - len(p.calls)) - 1
	if i < 0 || i >= len(p.calls) {
		return nil
	}
	return p.calls[i]
}

// plotHTML is the session's plot as of these verdicts, drawn the first
// time a page asks and shared by every page after: each watcher drawing
// it again for each batch of events cost 12 times the calls' own time
// with 20 pages open.
func (m *verdictSet) plotHTML(id string) string {
	m.plot.Do(func() {
		var b strings.Builder
		if pageTmpl.ExecuteTemplate(&b, "plot", plotOf(id, m.bySeq)) == nil {
			m.html = b.String()
		}
		m.plotJSON, _ = json.Marshal(m.html)
	})
	return m.html
}
