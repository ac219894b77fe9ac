// Package proxy is promptloom as a gateway: a reverse proxy
// (net/http/httputil's, with package transport as its transport) that a
// harness in any language points its SDK's base URL at. Every model call
// is held to its prompt (when the proxy is given one) and journaled whole,
// request and response as they came; everything else passes through
// unrecorded. Streams pass on as they arrive.
//
// A call is named by the optional Promptloom-Call header and grouped into
// a session by Promptloom-Session (both removed before the upstream sees
// the request); without them a session is found by prefix continuity: a
// call whose messages extend an earlier call's belongs to that call's
// session. Each session is one journal session. The proxy serves a live
// page of its sessions and calls under /promptloom/ (Page), on loopback
// only unless it is given a token.
package proxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/harn/redact"
	"github.com/promptloom/promptloom/internal/relay"
	"github.com/promptloom/promptloom/internal/wire"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/journal/tiles"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/transport"

	"go.opentelemetry.io/otel/trace"
)

// The headers a harness may add, removed before the upstream sees them.
const (
	CallHeader    = "Promptloom-Call"
	SessionHeader = "Promptloom-Session"
)

// Options configure a Proxy.
type Options struct {
	// Upstream is the provider's base URL (https://api.anthropic.com).
	Upstream *url.URL
	// Open returns the journal a session's calls are recorded in, by the
	// session's id: a session of a transcript file, or a PostgreSQL chain.
	Open func(session string) (*journal.Journal, error)
	// Prompt, when set, is the prompt a call must be sent with, by the
	// call's name (the Promptloom-Call header; "" without one): the
	// proxy holds its system channel and tools to it, as the transport
	// does, and refuses a stale prompt or a gated tool with the
	// provider's own error. A nil explanation leaves the call unattributed.
	Prompt func(call string) (*explain.Explanation, error)
	// MaxBodyBytes bounds a request body (0: promptloom.DefaultMaxBytes);
	// a larger one is refused with the provider's error (413).
	MaxBodyBytes int
	// UIToken, when set, lets the page and its events be read from other
	// addresses than loopback, with Authorization: Bearer TOKEN (or
	// ?token=TOKEN); without it they are served on loopback only.
	UIToken string
	// Base is the transport to the upstream (nil: http.DefaultTransport's
	// settings, keeping up to 256 idle connections to the upstream rather
	// than its 2).
	Base http.RoundTripper
	// Logger logs what goes wrong beside a call (nil: slog.Default).
	Logger *slog.Logger
	// Verify, when set, says the transcript's verification state for the
	// page ("OK: 12 calls, signed by …").
	Verify func() string
	// Cache tunes the cache models the page uses.
	Cache *cache.Options
	// Diagnostics asks the provider, on every call of a session, for its
	// own verdict on the cache (wire.AskDiagnostics): against
	// the session's latest response, and on its first call too, so the
	// next can be compared with it. AutoCache places cache breakpoints in
	// a request that sets none (wire.PlaceBreakpoints). Either
	// is a change the proxy makes to the body it sends; without them the
	// body is sent as it came, byte for byte.
	Diagnostics, AutoCache bool
	// Idle, when set, closes a session no call has used for that long,
	// as Close does (its journal_close, and its checkpoint when the
	// journal signs): a proxy left running leaves no session open for
	// ever. A later call that continues it (by its header, or by prefix
	// continuity) opens a new session with Follow, named ID~N.
	Idle time.Duration
	// Follow opens the journal of a session that continues one closed
	// while idle (journal.Options.Follows): required with Idle.
	Follow func(session, follows string) (*journal.Journal, error)
	// TracerProvider, when set, gives each call the transport's GenAI span
	// (transport.Options.TracerProvider); nil, none.
	TracerProvider trace.TracerProvider
}

// Proxy is the gateway: an http.Handler. Close it when done.
type Proxy struct {
	o     Options
	rp    *httputil.ReverseProxy
	run   string // this proxy's run id, for the sessions it names
	log   *slog.Logger
	start time.Time

	upstream string // the upstream's URL for the page, its credentials left out

	// mu guards the sessions, the calls the page keeps and their outcomes,
	// and the pages watching. Nothing that reads a body, runs a cache
	// model or opens a store is done under it: every call needs it.
	mu       sync.Mutex
	sessions map[string]*session
	order    []*session
	// tails finds a session by its latest request's messages (the key
	// messageChain makes), for a call without Promptloom-Session.
	tails    map[digest.Digest]*session
	parts    partDigests  // chainOf's digests of parts read lately (its own lock)
	auto     int          // the sessions found by continuity so far
	calls    []*callState // the latest calls (keepCalls), oldest first
	seq      int          // the calls made so far
	closed   bool
	watchers map[*watcher]struct{}
	// stale are the sessions whose verdicts the refresher has to make
	// again for the pages watching; kick wakes it, stop ends it.
	stale      map[*session]struct{}
	refreshing bool
	kick       chan struct{}
	stop       chan struct{}
	tiles      http.Handler
	// swept is done when the sweeper (Options.Idle) has ended.
	swept sync.WaitGroup
	// refusals are the latest requests refused (keepRefusals), for the
	// page; refusing is the session that records the refusals of no
	// session (opened on the first, closed by Close).
	refusals []refusal
	refusing *session

	// verifying is the verification of the transcript under way, which
	// the pages loading meanwhile share (under vmu).
	vmu       sync.Mutex
	verifying *verification
}

// verification is one run of Options.Verify.
type verification struct {
	done  chan struct{}
	state string
}

// tilesPrefix is where the proxy serves each signed session's tree of
// calls as C2SP tlog-tiles: /promptloom/tiles/SESSION/checkpoint, and
// the tiles under /promptloom/tiles/SESSION/tile/.
const tilesPrefix = "/promptloom/tiles/"

// sessionLogs is the proxy's sessions as a tiles.Source.
type sessionLogs struct{ p *Proxy }

func (s sessionLogs) Log(name string) (tiles.Log, bool) {
	s.p.mu.Lock()
	sess, ok := s.p.sessions[name]
	s.p.mu.Unlock()
	if !ok || !sess.opened() {
		return tiles.Log{}, false
	}
	return sess.j.Log()
}

// New returns a proxy to o.Upstream.
func New(o *Options) (*Proxy, error) {
	if o == nil || o.Upstream == nil || o.Upstream.Scheme == "" || o.Upstream.Host == "" {
		return nil, errors.New("proxy: Options.Upstream must be an absolute URL")
	}
	if o.Open == nil {
		return nil, errors.New("proxy: Options.Open is required")
	}
	if o.Idle < 0 || o.Idle > 0 && o.Follow == nil {
		return nil, errors.New("proxy: Options.Idle must not be negative, and needs Options.Follow")
	}
	p := &Proxy{o: *o, sessions: map[string]*session{}, tails: map[digest.Digest]*session{}, watchers: map[*watcher]struct{}{},
		stale: map[*session]struct{}{}, kick: make(chan struct{}, 1), stop: make(chan struct{}), start: time.Now(),
		upstream: shownUpstream(o.Upstream)}
	p.tiles = http.StripPrefix(tilesPrefix, tiles.Handler(sessionLogs{p}))
	if p.o.MaxBodyBytes <= 0 {
		p.o.MaxBodyBytes = promptloom.DefaultMaxBytes
	}
	if p.o.Base == nil {
		p.o.Base = http.DefaultTransport
		if t, ok := http.DefaultTransport.(*http.Transport); ok {
			// Every call goes to the one upstream: keep as many idle
			// connections to it as calls run at once, not the default
			// two, so that a burst of clients does not dial (and shake
			// hands with TLS) again for every call past the second.
			t = t.Clone()
			t.MaxIdleConnsPerHost = idleUpstreamConns
			p.o.Base = t
		}
	}
	p.log = p.o.Logger
	if p.log == nil {
		p.log = slog.Default()
	}
	var id [4]byte
	_, _ = rand.Read(id[:])
	p.run = hex.EncodeToString(id[:])
	up := p.o.Upstream
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(up)
			if hasPathPrefix(r.In.URL.Path, up.Path) {
				// The SDK's base URL and the upstream both end in /v1
				// (OpenAI's convention): the path is not prefixed twice.
				r.Out.URL.Path, r.Out.URL.RawPath = r.In.URL.Path, r.In.URL.RawPath
			}
			r.Out.Host = up.Host
			r.Out.Header.Del(CallHeader)
			r.Out.Header.Del(SessionHeader)
		},
		Transport: dispatch{p},
		// No FlushInterval: ReverseProxy flushes each write of an event
		// stream or of a body of unknown length (every provider's stream)
		// as it comes, and an answer of known length is written whole.
		ErrorHandler: p.upstreamError,
		BufferPool:   &copyBuffers,
	}
	if p.o.Idle > 0 {
		p.swept.Add(1)
		go p.sweeper()
	}
	return p, nil
}

// idleUpstreamConns is how many idle connections to the upstream the
// proxy's own transport keeps (Options.Base nil).
const idleUpstreamConns = 256

// hasPathPrefix reports whether path begins with the non-root path
// prefix at a segment boundary.
func hasPathPrefix(path, prefix string) bool {
	prefix = strings.TrimSuffix(prefix, "/")
	rest, ok := strings.CutPrefix(path, prefix)
	return prefix != "" && ok && (rest == "" || rest[0] == '/')
}

// ServeHTTP serves the page under /promptloom/ and proxies everything
// else.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, tilesPrefix) {
		// Hashes and signed checkpoints only: served to any address the
		// proxy listens on, for auditors, unlike the page.
		p.tiles.ServeHTTP(w, r)
		return
	}
	if r.URL.Path == "/promptloom" || strings.HasPrefix(r.URL.Path, "/promptloom/") {
		p.page(w, r)
		return
	}
	shape, _, _, routed := payload.Route(r.URL.Path)
	if !routed || r.Method != http.MethodPost {
		p.rp.ServeHTTP(w, r) // not a model call: passed through, unrecorded
		return
	}
	call, err := headerName(r.Header, CallHeader)
	if err == nil {
		var sess string
		if sess, err = headerName(r.Header, SessionHeader); err == nil {
			p.model(w, r, shape, call, sess)
			return
		}
	}
	// Neither header can be trusted to name anything: the refusal goes
	// to the refusals of no session, and the body is not read.
	p.refuse(r.Context(), nil, "", "", "malformed", err.Error()+" (the body was not read)", nil)
	wire.WriteError(w, string(shape), http.StatusBadRequest, err.Error())
}

// headerName reads a naming header: one value, printable, at most 200
// bytes ("" when absent).
func headerName(h http.Header, key string) (string, error) {
	vs := h.Values(key)
	switch {
	case len(vs) == 0:
		return "", nil
	case len(vs) > 1:
		return "", fmt.Errorf("promptloom: the %s header is given %d times; give it once", key, len(vs))
	}
	v := vs[0]
	if len(v) > 200 {
		return "", fmt.Errorf("promptloom: the %s header is %d bytes; at most 200", key, len(v))
	}
	for _, c := range v {
		if c < 0x20 || c == 0x7f || c == 0x2028 || c == 0x2029 || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) {
			return "", fmt.Errorf("promptloom: the %s header holds a control character (%U)", key, c)
		}
	}
	return v, nil
}

// copyBuffers are ReverseProxy's buffers for copying answers, kept from one
// call to the next instead of 32 KiB made for each.
var copyBuffers = bufferPool{sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}}

type bufferPool struct{ p sync.Pool }

func (b *bufferPool) Get() []byte  { return *b.p.Get().(*[]byte) }
func (b *bufferPool) Put(s []byte) { b.p.Put(&s) }

// readBody reads a request body of at most limit bytes, and one more when
// there are more. Its buffer grows with the bytes that come, never ahead
// of them: a declared length is the client's word, and a client that
// declares 60 MB and sends ten bytes costs ten bytes. The buffer doubles
// as it fills (the copies add up to the body once more), and a declared
// length caps the last step, so a body of the length it declared ends in
// a buffer of its size.
func readBody(body io.Reader, declared int64, limit int) ([]byte, error) {
	want := limit + 1
	if declared >= 0 && declared < int64(want) {
		want = int(declared) + 1 // the extra byte sees the end without growing
	}
	buf := make([]byte, 0, min(want, 64<<10))
	for {
		if len(buf) == cap(buf) {
			if len(buf) > limit {
				return buf, nil
			}
			// Past a declared length the client lied; the limit holds.
			next := min(2*cap(buf), limit+1)
			if len(buf) < want {
				next = min(next, want)
			}
			buf = slices.Grow(buf, next-len(buf))
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch {
		case err == io.EOF:
			return buf, nil
		case err != nil:
			return buf, err
		}
	}
}

// bodyIdle is how long a request body may send nothing before the proxy
// gives up on it, and bodyWhole how long the whole of it may take: a
// slow client holds a connection and what it sent, not for ever. (Atomic
// for a test that shortens them.)
var bodyIdle, bodyWhole atomic.Int64

func init() {
	bodyIdle.Store(int64(30 * time.Second))
	bodyWhole.Store(int64(10 * time.Minute))
}

// deadlineReader sets the connection's read deadline before each Read of
// a body: bodyIdle from now, and never past the whole body's deadline.
type deadlineReader struct {
	r     io.Reader
	rc    *http.ResponseController
	whole time.Time
}

func (d *deadlineReader) Read(p []byte) (int, error) {
	if d.rc != nil {
		at := time.Now().Add(time.Duration(bodyIdle.Load()))
		if at.After(d.whole) {
			at = d.whole
		}
		if err := d.rc.SetReadDeadline(at); err != nil {
			d.rc = nil // a writer without deadlines (a test's recorder)
		}
	}
	return d.r.Read(p)
}

// model handles a model call: the body read once, the session found, the
// call put on the context for the transport, the request proxied.
func (p *Proxy) model(w http.ResponseWriter, r *http.Request, shape payload.Provider, name, sess string) {
	rc := http.NewResponseController(w)
	idle, whole := time.Duration(bodyIdle.Load()), time.Duration(bodyWhole.Load())
	body, err := readBody(&deadlineReader{r: io.LimitReader(r.Body, int64(p.o.MaxBodyBytes)+1), rc: rc, whole: time.Now().Add(whole)},
		r.ContentLength, p.o.MaxBodyBytes)
	r.Body.Close()
	// No deadline once the body is in: an answer streams for as long as
	// the model writes, and the server's own read watches for the client
	// going away meanwhile.
	_ = rc.SetReadDeadline(time.Time{})
	// Each refusal is journaled (refuse) with the digest of what came,
	// in the session the header names when it is open.
	refuse := func(status int, reason, msg string) {
		p.refuse(r.Context(), nil, sess, name, reason, msg, body)
		wire.WriteError(w, string(shape), status, msg)
	}
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		refuse(http.StatusRequestTimeout, "body_stalled", fmt.Sprintf(
			"promptloom: the request body stalled: nothing came for %s, or the whole of it took over %s (%d bytes came)", idle, whole, len(body)))
		return
	case err != nil:
		refuse(http.StatusBadRequest, "unreadable", "promptloom: reading the request body: "+err.Error())
		return
	}
	if len(body) > p.o.MaxBodyBytes {
		refuse(http.StatusRequestEntityTooLarge, "over_limit",
			fmt.Sprintf("promptloom: the request body is over %d bytes", p.o.MaxBodyBytes))
		return
	}
	pr, err := payload.Read(body, shape)
	if err != nil {
		refuse(http.StatusBadRequest, "malformed", "promptloom: "+err.Error())
		return
	}
	tc := &transport.Call{Name: name}
	if p.o.Prompt != nil {
		x, err := p.o.Prompt(name)
		if err != nil {
			refuse(http.StatusBadRequest, "no_prompt", "promptloom: "+err.Error())
			return
		}
		tc.Explanation = x
	}
	var prepare func(*session, *callState)
	if p.o.Diagnostics || p.o.AutoCache {
		prepare = func(s *session, cs *callState) { p.rewrite(s, cs, r.Header) }
	}
	s, cs, err := p.admit(sess, name, pr, prepare)
	var pe *payload.Error
	switch {
	case errors.As(err, &pe):
		refuse(http.StatusBadRequest, "malformed", "promptloom: "+err.Error())
		return
	case err != nil:
		wire.WriteError(w, string(shape), http.StatusServiceUnavailable, "promptloom: "+err.Error())
		return
	}
	defer p.release(s)
	tc.Name = cs.name
	relayed := &relay.Call{Payload: cs.pr, Done: func(resp journal.Response, err error) { p.done(cs, resp, err) }}
	if cs.change != nil {
		// Both bodies on the record: the one sent, and the one that came
		// with what the proxy changed in it.
		relayed.Received, relayed.Changed = body, cs.change.what
	}
	// The body sent: as received, or as the proxy changed it (cs.change),
	// with its own length.
	sent := wire.Body(cs.pr)
	r.Body = io.NopCloser(bytes.NewReader(sent))
	r.ContentLength = int64(len(sent))
	ctx := relay.With(transport.With(context.WithValue(r.Context(), sessionKey{}, s), tc), relayed)
	ctx = context.WithValue(ctx, callStateKey{}, admitted{cs, body})
	p.rp.ServeHTTP(w, r.WithContext(ctx))
}

type callStateKey struct{}

// admitted is a call on its way to the transport: its state, and the
// body as it came (a refusal's digest is of what came, not of what the
// proxy would have sent).
type admitted struct {
	cs       *callState
	received []byte
}

// refused settles, for the page, a call the transport refused before
// sending it (a stale prompt, a gated tool, a line too long), and
// journals the refusal in its session: the transport records no call, so
// Done never comes, and the page would show it in flight for ever.
func (p *Proxy) refused(r *http.Request, reason string, err error) {
	if a, _ := r.Context().Value(callStateKey{}).(admitted); a.cs != nil {
		p.refuse(r.Context(), a.cs.session, "", a.cs.name, reason, err.Error(), a.received)
		p.done(a.cs, journal.Response{}, fmt.Errorf("refused by promptloom before it was sent (%s): %w", reason, err))
	}
}

// keepRefusals is how many refusals the page keeps.
const keepRefusals = 200

// refusal is a refused request as the page shows it.
type refusal struct {
	At                            time.Time
	Session, Call, Reason, Detail string
	Bytes                         int
}

// refuse journals a request the proxy refused (Journal.Refuse: the
// reason's code, the message the client was sent, and the digest of the
// body that came, never the body): in s, else in the open session the
// Promptloom-Session header names, else in the proxy's session of
// refusals, so that an auditor sees every request turned away. It is
// kept for the page too. The journal is written outside p.mu.
func (p *Proxy) refuse(ctx context.Context, s *session, header, call, reason, message string, body []byte) {
	p.mu.Lock()
	if s == nil && header != "" {
		for s = p.sessions[header]; s != nil && s.next != nil; {
			s = s.next
		}
	}
	if s != nil && (s.idled || !s.opened()) {
		s = nil
	}
	if s != nil {
		s.busy++ // the sweeper leaves it open until the line is written
	}
	closed := p.closed
	p.mu.Unlock()
	own := s != nil
	if !closed && s == nil {
		s = p.refusalSession()
	}
	var err error
	switch {
	case closed:
		err = errShuttingDown
	case s == nil:
		err = errors.New("the session of refusals could not be opened")
	default:
		// The client may be gone; the refusal is recorded all the same.
		err = s.j.Refuse(context.WithoutCancel(ctx), call, reason, message, body)
	}
	if own {
		p.release(s)
	}
	if err != nil {
		p.log.Warn("promptloom proxy: journaling a refusal", "reason", reason, "err", err)
	}
	f := refusal{At: time.Now(), Call: call, Reason: reason, Detail: redact.String(message), Bytes: len(body)}
	if s != nil {
		f.Session = s.id
	}
	p.mu.Lock()
	if len(p.refusals) >= keepRefusals {
		p.refusals = slices.Delete(p.refusals, 0, 1)
	}
	p.refusals = append(p.refusals, f)
	p.mu.Unlock()
}

// refusalSession is the session that records the refusals of no session,
// opened on the first (nil: it could not be, and the next tries again).
func (p *Proxy) refusalSession() *session {
	p.mu.Lock()
	s := p.refusing
	opening := s == nil
	if opening {
		id := p.run + "-refused"
		s = &session{id: id, base: id, ready: make(chan struct{})}
		p.refusing = s
	}
	p.mu.Unlock()
	if opening {
		p.open(s)
	}
	<-s.ready
	if s.err != nil {
		p.mu.Lock()
		if p.refusing == s {
			p.refusing = nil
		}
		p.mu.Unlock()
		p.log.Warn("promptloom proxy: the session of refusals", "err", s.err)
		return nil
	}
	return s
}

type sessionKey struct{}

// dispatch sends each request through its session's transport.
type dispatch struct{ p *Proxy }

func (d dispatch) RoundTrip(r *http.Request) (*http.Response, error) {
	s, _ := r.Context().Value(sessionKey{}).(*session)
	if s == nil {
		return d.p.o.Base.RoundTrip(r)
	}
	return s.t.RoundTrip(r)
}

// refusedError is a transport refusal the proxy answers with the
// provider's own error, not a 502.
func (p *Proxy) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	shape, _, _, _ := payload.Route(r.URL.Path)
	switch {
	case errors.Is(err, journal.ErrStaleManifest):
		reason := "stale_prompt"
		if re := (*manifest.RuleError)(nil); errors.As(err, &re) && (re.Rule == "tool_gated_out" || re.Rule == "tool_not_sent") {
			reason = "gated_tool"
		}
		p.refused(r, reason, err)
		wire.WriteError(w, string(shape), http.StatusBadRequest, "promptloom refused the request: "+err.Error())
	case errors.Is(err, promptloom.ErrTooLarge):
		p.refused(r, "over_limit", err)
		wire.WriteError(w, string(shape), http.StatusRequestEntityTooLarge, "promptloom: "+err.Error())
	case errors.Is(err, context.Canceled):
		// The client went away; nothing to answer.
	default:
		var pe *payload.Error
		if errors.As(err, &pe) {
			p.refused(r, "malformed", err)
			wire.WriteError(w, string(shape), http.StatusBadRequest, "promptloom: "+err.Error())
			return
		}
		p.log.Warn("promptloom proxy: upstream", "path", r.URL.Path, "err", err)
		wire.WriteError(w, string(shape), http.StatusBadGateway, "promptloom: the upstream failed: "+err.Error())
	}
}

// Close settles every session's transport (the failures held for a
// retry are recorded) and closes its journal (a signed journal writes its
// checkpoint). Requests after Close are refused.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if !p.closed {
		close(p.stop)
	}
	p.closed = true
	sessions := append([]*session(nil), p.order...)
	if p.refusing != nil {
		sessions = append(sessions, p.refusing)
	}
	clear(p.watchers) // their streams end on stop
	p.mu.Unlock()
	p.swept.Wait() // the sessions it is closing are closed
	var errs []error
	for _, s := range sessions {
		<-s.ready // a journal being opened is closed once it is open
		if s.err == nil && !s.idled {
			errs = append(errs, s.j.Close())
		}
	}
	return errors.Join(errs...)
}

// verifyState is Options.Verify's answer, redacted: a page that loads
// while a verification runs shares its answer instead of reading the
// transcript again.
func (p *Proxy) verifyState() string {
	p.vmu.Lock()
	v := p.verifying
	if v != nil {
		p.vmu.Unlock()
		if h := hooks.Load(); h != nil && h.joined != nil {
			h.joined()
		}
		<-v.done
		return v.state
	}
	v = &verification{done: make(chan struct{})}
	p.verifying = v
	p.vmu.Unlock()
	defer func() {
		p.vmu.Lock()
		p.verifying = nil
		p.vmu.Unlock()
		close(v.done)
	}()
	v.state = redact.String(p.o.Verify())
	return v.state
}

// isLoopback reports whether a request comes from this machine.
func isLoopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// shownUpstream is the upstream's URL as the page may show it: no user or
// password, and no query value, whatever the host. The redactor reads a
// URL's credentials only where its host is plain ASCII (Harn's rule), so
// a punycode or non-ASCII host would keep them; and a query, which the
// page has no need of, may carry a key.
func shownUpstream(u *url.URL) string {
	v := *u
	v.User = nil
	if v.RawQuery != "" {
		q := v.Query()
		for k := range q {
			q[k] = []string{"redacted"}
		}
		v.RawQuery = q.Encode()
	}
	return redact.String(v.String())
}
