package proxy

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/harn/redact"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/internal/wire"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/request"
	"github.com/promptloom/promptloom/transport"
)

// session is one conversation: a journal session and the transport that
// records into it.
type session struct {
	id string
	// ready is closed once the journal is open (j and t set) or could not
	// be opened (err set). The opening is done outside p.mu, so that a
	// slow store holds up the calls of its own session only.
	ready chan struct{}
	j     *journal.Journal
	t     *transport.Transport
	err   error

	// Under p.mu:
	calls []*callState // the calls the page still keeps
	n     int          // the calls made in the session
	// tail is the key of the session's latest request's messages in
	// p.tails (zero: not there, as the latest call was named to its
	// session by its header and its messages were never read).
	tail digest.Digest
	// version counts the changes to the session's calls the page shows,
	// so that its verdicts are computed once a change.
	version int
	// last is the id of the session's latest response, the one its next
	// call asks the provider to compare with (Options.Diagnostics).
	last string
	// busy counts the calls admitted to the session and not yet over, and
	// used is when the latest began or ended: the sweeper closes a
	// session that is not busy and unused for Options.Idle. idled says it
	// did, shut is closed once its journal is, and next is the session
	// that continues it (nil: none yet).
	busy  int
	used  time.Time
	idled bool
	shut  chan struct{}
	next  *session

	// Set before the session is shared: the session it continues
	// (Options.Follow), and the id its successors are named from, with
	// how many came before it (base~gen).
	prev *session
	base string
	gen  int

	// vmu is held while the session's verdicts are computed (one
	// computation at a time, shared by every page that asks), and memo is
	// the latest computed, read without a lock.
	vmu  sync.Mutex
	memo atomic.Pointer[verdictSet]
}

// verdictSet is a session's cache verdicts by call seq, as of a version,
// and its plot, drawn once for every page watching (plotHTML).
type verdictSet struct {
	version int
	bySeq   map[int]cache.Verdict
	plot    sync.Once
	html    string
	// plotJSON is html as a JSON string, for the events that carry it.
	plotJSON []byte
}

// keepCalls is how many calls the page keeps, across sessions.
var keepCalls = 2000

// callState is one call as the page shows it.
type callState struct {
	// Set before the call is shared, and read-only after.
	seq     int // from 1, across the proxy
	name    string
	session *session
	pr      *payload.Request // the body sent, read
	at      time.Time
	// change is what the proxy changed in the body before sending it
	// (nil: sent as received).
	change *change

	// The call's request manifest, made the first time it is needed (for
	// continuity, or by the page) and outside p.mu: a call named to its
	// session by its header costs nothing more than its journaling until
	// someone looks.
	mOnce  sync.Once
	req    *request.Manifest
	mErr   error       // why there is no manifest
	mReady atomic.Bool // req and mErr are made

	// Under p.mu: the outcome, only what the page shows of it (the
	// answer's body is the transcript's to keep).
	ended  time.Time
	done   bool
	usage  *payload.Usage
	stop   string
	failed string // the error, redacted ("": none)

	// ev is the call's row as an event last sent it, encoded once for
	// every page watching with the same query (rowEvent), under evMu:
	// the pages told of a change at once wait for the one encoding it.
	evMu sync.Mutex
	ev   *encodedRow
}

// manifest is the call's request manifest (nil: see mErr). It is not
// called under p.mu: it reads the whole body.
func (c *callState) manifest() *request.Manifest {
	c.mOnce.Do(func() {
		if h := hooks.Load(); h != nil && h.making != nil {
			h.making()
		}
		c.req, c.mErr = request.FromPayload(c.pr, nil)
		c.mReady.Store(true)
	})
	return c.req
}

// admit finds (or opens) the session a call belongs to and registers the
// call. sess is the Promptloom-Session header ("" to find it by prefix
// continuity), pr the body as received, from which continuity finds the
// session; prepare, when set, makes the body sent once the session is
// known and before the call is shared (cs.pr, cs.change). Under p.mu it
// does lookups and bookkeeping only: the manifest continuity needs is
// made before, the journal opened and the body prepared after.
func (p *Proxy) admit(sess, name string, pr *payload.Request, prepare func(*session, *callState)) (*session, *callState, error) {
	cs := &callState{pr: pr, at: time.Now()}
	var chain []digest.Digest
	if sess == "" {
		var err error
		if chain, err = p.chainOf(pr); err != nil {
			return nil, nil, err
		}
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, nil, errShuttingDown
	}
	var s *session
	if sess != "" {
		s = p.sessions[sess]
	} else {
		// The longest of the earlier requests this one extends.
		for i := len(chain) - 1; i >= 0 && s == nil; i-- {
			s = p.tails[chain[i]]
		}
		if s == nil {
			p.auto++ // numbered apart from the sessions harnesses name
			sess = fmt.Sprintf("%s-%d", p.run, p.auto)
		}
	}
	opening := s == nil
	if opening {
		s = &session{id: sess, base: sess, ready: make(chan struct{})}
		p.sessions[sess] = s
		p.order = append(p.order, s)
	} else {
		for s.next != nil {
			s = s.next
		}
		if s.idled {
			// The session was closed while idle: the call opens the one
			// that continues it, under a new id, since a closed session
			// (a store's chain, with one writer) takes no more lines.
			s = p.follow(s)
			opening = true
		}
	}
	// Busy until the call is over (release): the sweeper leaves it open.
	s.busy++
	s.used = cs.at
	// The session's latest request is this one from now: the next turn of
	// the conversation, sent once this one is answered, finds it.
	if s.tail != (digest.Digest{}) && p.tails[s.tail] == s {
		delete(p.tails, s.tail)
	}
	s.tail = digest.Digest{}
	if len(chain) > 0 {
		s.tail = chain[len(chain)-1]
		p.tails[s.tail] = s
	}
	p.mu.Unlock()
	if opening {
		p.open(s)
	}
	<-s.ready
	if s.err != nil {
		return nil, nil, s.err
	}
	admitted := false
	defer func() {
		if !admitted {
			p.release(s)
		}
	}()
	if prepare != nil {
		prepare(s, cs)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, nil, errShuttingDown
	}
	s.n++
	if name == "" {
		name = fmt.Sprintf("%s/%d", s.id, s.n)
	}
	p.seq++
	cs.seq, cs.name, cs.session = p.seq, name, s
	s.calls = append(s.calls, cs)
	p.calls = append(p.calls, cs)
	// The page keeps the latest calls only: a proxy that runs for weeks
	// holds a bounded number of requests (the transcript has them all).
	// The slots let go are cleared, so that no array behind a slice keeps
	// an evicted call and its body.
	if len(p.calls) > keepCalls {
		old := p.calls[0]
		p.calls[0] = nil
		p.calls = p.calls[1:]
		if o := old.session; len(o.calls) > 0 && o.calls[0] == old {
			o.calls[0] = nil
			o.calls = o.calls[1:]
			if len(o.calls) == 0 {
				o.calls = nil
			}
			// Its verdicts are made again when next asked for; until
			// then the session keeps none of a call the page let go.
			o.memo.Store(nil)
			o.version++
			p.dirty(o)
		}
	}
	p.changed(cs)
	admitted = true
	return s, cs, nil
}

// follow registers the session that continues old, closed while idle
// (p.mu held): named old's base~N, N one more than old's, or more while
// a session of that id is known already.
func (p *Proxy) follow(old *session) *session {
	s := &session{base: old.base, gen: old.gen, prev: old, ready: make(chan struct{})}
	for {
		s.gen++
		s.id = fmt.Sprintf("%s~%d", s.base, s.gen)
		if p.sessions[s.id] == nil {
			break
		}
	}
	old.next = s
	p.sessions[s.id] = s
	p.order = append(p.order, s)
	return s
}

// release says a call of s admitted is over: s is used from now.
func (p *Proxy) release(s *session) {
	p.mu.Lock()
	s.busy--
	s.used = time.Now()
	p.mu.Unlock()
}

// sweep closes every session that no call has used since Options.Idle
// before now, as Close would (journal_close, and its checkpoint when the
// journal signs): under p.mu it only marks them, and their journals are
// closed after. A later call that continues one opens its successor
// (follow).
func (p *Proxy) sweep(now time.Time) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	var idle []*session
	for _, s := range p.order {
		if !s.idled && s.busy == 0 && s.opened() && now.Sub(s.used) >= p.o.Idle {
			s.idled, s.shut = true, make(chan struct{})
			idle = append(idle, s)
		}
	}
	p.mu.Unlock()
	var errs []error
	for _, s := range idle {
		if err := s.j.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing idle session %s: %w", s.id, err))
		}
		close(s.shut)
	}
	return errors.Join(errs...)
}

// sweeper sweeps every quarter of Options.Idle until the proxy closes:
// one goroutine for every session, rather than a timer each.
func (p *Proxy) sweeper() {
	defer p.swept.Done()
	t := time.NewTicker(max(p.o.Idle/4, 100*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case now := <-t.C:
			if err := p.sweep(now); err != nil {
				p.log.Warn("promptloom proxy: idle sessions", "err", err)
			}
		}
	}
}

var errShuttingDown = errors.New("the proxy is shutting down")

// open opens s's journal, outside p.mu; a session that cannot be opened
// is forgotten, so that the next call tries again.
func (p *Proxy) open(s *session) {
	var j *journal.Journal
	var err error
	if s.prev != nil {
		// Its journal_open comes after the old session's journal_close,
		// as Verify holds a session that follows another to.
		<-s.prev.shut
		j, err = p.o.Follow(s.id, s.prev.id)
	} else {
		j, err = p.o.Open(s.id)
	}
	p.mu.Lock()
	if err != nil {
		s.err = fmt.Errorf("opening the journal of session %s: %w", s.id, err)
		if p.sessions[s.id] == s {
			delete(p.sessions, s.id)
		}
		if s.tail != (digest.Digest{}) && p.tails[s.tail] == s {
			delete(p.tails, s.tail)
		}
		if i := slices.Index(p.order, s); i >= 0 {
			p.order = slices.Delete(p.order, i, i+1) // which clears the slot let go
		}
		if s.prev != nil && s.prev.next == s {
			s.prev.next = nil // the next call tries again
		}
	} else {
		// Each request through the proxy is recorded as its own call; a
		// reader ties an SDK's retry to its failed attempt (cache.Logical).
		s.j = j
		s.t = transport.New(p.o.Base, j, &transport.Options{MaxBodyBytes: p.o.MaxBodyBytes, TracerProvider: p.o.TracerProvider})
	}
	close(s.ready)
	p.mu.Unlock()
}

// opened reports whether s's journal is open, without waiting for it.
func (s *session) opened() bool {
	select {
	case <-s.ready:
		return s.err == nil
	default:
		return false
	}
}

// chainOf is the key of each prefix of pr's messages, from the first
// message on: the provider, then each message part's digest and path (the
// keys the request manifest's message segments make), without making the
// manifest: a part's digest is of its canonical JSON after
// Harn's redaction, its cache mark left out (the segment digest), and a
// part sent before, byte for byte, is not redacted and encoded again
// (partDigests). Tools and system are left out, so an agent whose tool
// definitions changed stays one session (and the cache blames the
// change). A body whose parts or cache settings are malformed is refused
// as the manifest refuses it.
func (p *Proxy) chainOf(pr *payload.Request) ([]digest.Digest, error) {
	if h := hooks.Load(); h != nil && h.making != nil {
		h.making()
	}
	parts, err := pr.Parts()
	if err != nil {
		return nil, err
	}
	if _, err := pr.Cache(); err != nil {
		return nil, err
	}
	// Every part is digested, as the manifest digests it: a part with no
	// canonical form (a lone surrogate, a key twice) is refused wherever
	// it is, though only the messages make the keys.
	mark := wire.MarkKey(string(pr.Provider))
	raw := make([]rawPart, len(parts))
	for i, part := range parts {
		// The raw bytes and the provider (its cache mark) make the
		// part's digest.
		raw[i] = rawPart{pr.Provider, digest.Bytes(part.Raw)}
	}
	ds := p.parts.lookup(raw)
	for i, part := range parts {
		if ds[i] != (digest.Digest{}) {
			continue
		}
		red, err := redact.JSON(withoutMark(part, mark))
		if err != nil {
			// A block with no canonical form (a lone surrogate) is a
			// malformed body, as payload says of any other.
			return nil, &payload.Error{Kind: payload.ErrMalformed, Provider: pr.Provider,
				Path: strings.ReplaceAll(strings.TrimPrefix(part.Path, "/"), "/", "."), Msg: err.Error()}
		}
		ds[i] = digest.Bytes(red)
		p.parts.add(raw[i], ds[i])
	}
	var out []digest.Digest
	h := digest.Bytes([]byte(pr.Provider))
	buf := make([]byte, 0, 96)
	for i, part := range parts {
		if part.Section != "messages" {
			continue
		}
		buf = append(append(append(buf[:0], h[:]...), ds[i][:]...), part.Path...)
		h = digest.Bytes(buf)
		out = append(out, h)
	}
	return out, nil
}

// withoutMark is a part's JSON without its cache mark (the member mark of
// a block that has one): the segment digest's input, before redaction.
func withoutMark(p payload.Part, mark string) []byte {
	if p.Cache == nil || mark == "" {
		return p.Raw
	}
	return pjson.Without(string(p.Raw), mark)
}

// partDigests maps the digest of a part's raw bytes (with its provider)
// to its segment digest, for the parts continuity read lately:
// an agent resends its history with every call, and each part of it would
// otherwise be redacted and encoded again to find the session. Both are
// digests, and one is a function of the bytes the other is of: the map
// holds no text, and cannot give a part another's digest.
type partDigests struct {
	mu sync.Mutex
	m  map[rawPart]digest.Digest
}

// rawPart is a part as sent: its provider and the digest of its bytes.
type rawPart struct {
	provider payload.Provider
	raw      digest.Digest
}

// maxPartDigests bounds partDigests: past it the map starts again.
const maxPartDigests = 1 << 16

// lookup returns the segment digest of each raw digest (zero: not known).
func (c *partDigests) lookup(raw []rawPart) []digest.Digest {
	out := make([]digest.Digest, len(raw))
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, d := range raw {
		out[i] = c.m[d]
	}
	return out
}

func (c *partDigests) add(raw rawPart, seg digest.Digest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxPartDigests {
		c.m = make(map[rawPart]digest.Digest)
	}
	c.m[raw] = seg
}

// done records a call's outcome for the page; the first one stands. The
// error is redacted as the transcript redacts it: an upstream's answer
// may echo a credential.
func (p *Proxy) done(cs *callState, resp journal.Response, err error) {
	var failed string
	if err != nil {
		failed = redact.String(err.Error())
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if cs.done {
		return
	}
	cs.done, cs.ended = true, time.Now()
	cs.usage, cs.stop, cs.failed = resp.Usage, resp.StopReason, failed
	if err == nil && resp.ID != "" && cs.session != nil {
		cs.session.last = resp.ID
	}
	if err != nil && failed == "" {
		cs.failed = "failed"
	}
	if cs.session != nil {
		p.changed(cs)
	}
}

// changed says call cs changed (p.mu held): its session's verdicts are
// stale, and every page watching is told.
func (p *Proxy) changed(cs *callState) {
	cs.session.version++
	p.dirty(cs.session)
	p.tell(cs.seq)
}

// tell tells every page watching that call seq changed (p.mu held).
func (p *Proxy) tell(seq int) {
	for w := range p.watchers {
		if _, ok := w.pending[seq]; ok {
			continue // its next batch has the row as it stands then
		}
		w.pending[seq] = struct{}{}
		select {
		case w.wake <- struct{}{}:
		default: // woken already
		}
	}
}

// verdicts are s's cache verdicts, by call seq: computed outside p.mu,
// once a version, however many pages ask.
func (p *Proxy) verdicts(s *session) map[int]cache.Verdict {
	s.vmu.Lock()
	defer s.vmu.Unlock()
	p.mu.Lock()
	version := s.version
	if m := s.memo.Load(); m != nil && m.version == version {
		p.mu.Unlock()
		return m.bySeq
	}
	states := append([]*callState(nil), s.calls...)
	calls := make([]cache.Call, len(states))
	for i, c := range states {
		calls[i] = cache.Call{Name: c.name, At: c.at, Began: c.ended}
		if c.done && c.failed == "" {
			calls[i].Reported = c.usage
		}
	}
	p.mu.Unlock()
	if h := hooks.Load(); h != nil && h.computing != nil {
		h.computing(s.id)
	}
	kept, seqs := calls[:0], make([]int, 0, len(calls))
	for i, c := range states {
		if m := c.manifest(); m != nil {
			calls[i].Request = m
			kept = append(kept, calls[i])
			seqs = append(seqs, c.seq)
		}
	}
	out := make(map[int]cache.Verdict, len(kept))
	for i, v := range cache.Run(kept, p.o.Cache).Verdicts {
		out[seqs[i]] = v
	}
	s.memo.Store(&verdictSet{version: version, bySeq: out})
	return out
}

// testHooks are a test's: computing is called as a session's verdicts
// begin to be made, making as a call's manifest (or the digests
// continuity needs) begins to be made, joined as a page joins a
// verification under way, and batch is the clock a page's batch of
// events waits on (batchTimer). They are loaded atomically: a goroutine the
// test left behind may still read them as the test clears them.
type testHooks struct {
	computing func(session string)
	making    func()
	joined    func()
	batch     func(time.Duration) (<-chan time.Time, func() bool)
}

var hooks atomic.Pointer[testHooks]
