package proxy

import (
	"errors"
	"fmt"
	"time"

	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/request"
	"github.com/promptloom/promptloom/transport"
)

// session is one conversation: a journal session and the transport that
// records into it.
type session struct {
	id    string
	j     *journal.Journal
	t     *transport.Transport
	calls []*callState // the calls the page still keeps
	n     int          // the calls made in the session
	last  *callState   // the latest call, for continuity
}

// keepCalls is how many calls the page keeps, across sessions.
var keepCalls = 2000

// callState is one call as the page shows it.
type callState struct {
	seq     int // from 1, across the proxy
	name    string
	session *session
	pr      *payload.Request  // the body, read
	req     *request.Manifest // its manifest, made when first needed (manifest)
	at      time.Time
	ended   time.Time
	done    bool
	resp    journal.Response
	err     error
	mErr    error // why there is no manifest
}

// admit finds (or opens) the session a call belongs to and registers the
// call. sess is the Promptloom-Session header ("" to find it by prefix
// continuity).
func (p *Proxy) admit(sess, name string, pr *payload.Request) (*session, *callState, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, nil, errors.New("the proxy is shutting down")
	}
	var s *session
	cs := &callState{pr: pr, at: time.Now()}
	if sess != "" {
		s = p.sessions[sess]
	} else {
		m := cs.manifest()
		if m == nil {
			return nil, nil, cs.mErr
		}
		if s = p.continuing(m); s == nil {
			p.auto++ // numbered apart from the sessions harnesses name
			sess = fmt.Sprintf("%s-%d", p.run, p.auto)
		}
	}
	if s == nil {
		j, err := p.o.Open(sess)
		if err != nil {
			return nil, nil, fmt.Errorf("opening the journal of session %s: %w", sess, err)
		}
		// Each request through the proxy is its own call (MaxRetries 0):
		// an SDK's retry comes as a new HTTP request the proxy cannot tie
		// to the attempt before it, so a failure is recorded at once.
		s = &session{id: sess, j: j, t: transport.New(p.o.Base, j, &transport.Options{MaxBodyBytes: p.o.MaxBodyBytes})}
		p.sessions[sess] = s
		p.order = append(p.order, s)
	}
	s.n++
	if name == "" {
		name = fmt.Sprintf("%s/%d", s.id, s.n)
	}
	p.seq++
	cs.seq, cs.name, cs.session = p.seq, name, s
	s.calls = append(s.calls, cs)
	s.last = cs
	p.calls = append(p.calls, cs)
	// The page keeps the latest calls only: a proxy that runs for weeks
	// holds a bounded number of requests (the transcript has them all).
	if len(p.calls) > keepCalls {
		old := p.calls[0]
		p.calls = p.calls[1:]
		if s := old.session; len(s.calls) > 0 && s.calls[0] == old {
			s.calls = s.calls[1:]
		}
	}
	p.notify(fmt.Sprint(cs.seq))
	return s, cs, nil
}

// continuing is the session whose latest request's messages the new
// request's messages extend (the longest such, the latest on a tie), or
// nil: a conversation goes on by sending what it sent before and more.
// Tools and system are left out of the match, so an agent whose tool
// definitions changed stays one session (and the cache blames the change).
func (p *Proxy) continuing(m *request.Manifest) *session {
	msgs := messages(m)
	var best *session
	bestN := 0
	for _, s := range p.order {
		last := s.last.manifest()
		if last == nil || last.Provider != m.Provider {
			continue
		}
		prev := messages(last)
		if len(prev) == 0 || len(prev) > len(msgs) {
			continue
		}
		same := true
		for i := range prev {
			if prev[i].Digest != msgs[i].Digest || prev[i].Path != msgs[i].Path {
				same = false
				break
			}
		}
		if same && len(prev) >= bestN {
			best, bestN = s, len(prev)
		}
	}
	return best
}

func messages(m *request.Manifest) []request.Segment {
	for i, s := range m.Segments {
		if s.Section == "messages" {
			return m.Segments[i:]
		}
	}
	return nil
}

// done records a call's outcome for the page; the first one stands.
func (p *Proxy) done(cs *callState, resp journal.Response, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cs.done {
		return
	}
	cs.done, cs.resp, cs.err, cs.ended = true, resp, err, time.Now()
	p.notify(fmt.Sprint(cs.seq))
}

// notify tells every page watching that call seq changed. p.mu is held.
func (p *Proxy) notify(seq string) {
	for ch := range p.watchers {
		select {
		case ch <- seq:
		default: // a slow page misses an update; it catches up on the next
		}
	}
}

// verdicts predicts a session's calls (p.mu held).
func (p *Proxy) verdicts(s *session) map[*callState]cache.Verdict {
	var calls []cache.Call
	var states []*callState
	for _, c := range s.calls {
		m := c.manifest()
		if m == nil {
			continue
		}
		cc := cache.Call{Name: c.name, At: c.at, Began: c.ended, Request: m}
		if c.done && c.err == nil {
			cc.Reported = c.resp.Usage
		}
		calls = append(calls, cc)
		states = append(states, c)
	}
	out := map[*callState]cache.Verdict{}
	for i, v := range cache.Run(calls, p.o.Cache).Verdicts {
		out[states[i]] = v
	}
	return out
}

// manifest is the call's request manifest, made the first time it is
// needed (for continuity, or by the page): a call named to its session by
// its header costs nothing more than its journaling until someone looks.
// p.mu is held, or the call is not shared yet.
func (c *callState) manifest() *request.Manifest {
	if c.req == nil && c.mErr == nil {
		c.req, c.mErr = request.FromPayload(c.pr, nil)
	}
	return c.req
}
