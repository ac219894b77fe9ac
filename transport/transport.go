// Package transport records every provider call an official SDK makes:
// an http.RoundTripper, in the manner of otelhttp's NewTransport, that
// wraps the SDK's HTTP client.
//
// The harness puts the call's explanation (or manifest) on the request's
// context with With. RoundTrip reads the request body, finds the provider
// from the URL and the body (Anthropic Messages, OpenAI Chat Completions
// and Responses, Gemini generateContent and streamGenerateContent), holds
// the body's system channel to the manifest and the body's tool names to
// the tools the prompt was gated on, and fails closed before anything
// leaves: a stale prompt, a tool sent whose guidance was gated out, or
// guidance kept for a tool not sent, is an error from RoundTrip matching
// journal.ErrStaleManifest, whose *manifest.RuleError names the fragment
// (ID) and the tool (Got), and nothing is sent or journaled. The tools'
// rules are "tool_gated_out" and "tool_not_sent":
// errors.Is(err, manifest.Rule("tool_not_sent")) tells them apart. A request without a Call on its
// context is sent and recorded as unattributed (its whole body, redacted,
// and its digest).
//
// The response is journaled as it came: the raw body (JSON, or the server
// sent events as received, assembled when the stream ends) and a summary
// (stop reason, text, tool calls, usage with the cache tokens). The SDK
// reads the server's bytes as they arrive; nothing is buffered in front
// of it. A stream closed early, a cancelled context and a transport error
// are recorded as what they are. Each attempt is recorded as itself, a
// retry too: the transport keeps nothing from one request to the next,
// and a reader of the transcript ties an SDK's retries into one logical
// call (cache.Logical). docs/transport.md describes it.
package transport

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/request"

	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/harn/redact"
	"github.com/promptloom/promptloom/internal/relay"
	"github.com/promptloom/promptloom/internal/wire"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/payload"

	"go.opentelemetry.io/otel/trace"
)

// Options configure a transport. The zero value (or nil) is the default.
type Options struct {
	// TracerProvider, when set, gives each attempt a span following
	// the OpenTelemetry GenAI semantic conventions, with promptloom's own
	// attributes (the manifest's content hash, the whole-prompt digest,
	// the included fragments, the transcript line). Nil: no spans.
	TracerProvider trace.TracerProvider
	// CaptureContent puts the system prompt on the span as
	// gen_ai.system_instructions, one part per included fragment. Off by
	// default: span exporters are not redacted the way transcripts are.
	CaptureContent bool
	// MaxBodyBytes bounds the request body RoundTrip reads to check it (0:
	// promptloom.DefaultMaxBytes); a larger one is refused, matching
	// promptloom.ErrTooLarge.
	MaxBodyBytes int
}

// Call is what a harness says about one logical call: put it on the
// request's context with With. Each attempt the SDK makes with it (its
// retries) is recorded under its name; a reader ties them together by
// that name, the session and the request's bytes (cache.Logical).
type Call struct {
	// Name names the call in the transcript ("turn-2"); empty is the
	// manifest's call role.
	Name string
	// Explanation is the prompt the call was built from. Without one,
	// Manifest and System say what the prompt is.
	Explanation *explain.Explanation
	Manifest    *manifest.Manifest
	System      string
}

// attributed reports whether the call says what its prompt is; a Call
// with a Name alone is recorded unattributed, under that name.
func (c *Call) attributed() bool {
	return c.Explanation != nil || c.Manifest != nil
}

// With returns ctx carrying c, for the request RoundTrip is given.
func With(ctx context.Context, c *Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

type callKey struct{}

// New returns a Transport that sends each request through base (nil:
// http.DefaultTransport) and records the model calls among them in j. It
// is safe for concurrent use, as its base must be.
func New(base http.RoundTripper, j *journal.Journal, o *Options) *Transport {
	if base == nil {
		base = http.DefaultTransport
	}
	t := &Transport{base: base, j: j}
	if o != nil {
		t.opts = *o
	}
	if t.opts.MaxBodyBytes <= 0 {
		t.opts.MaxBodyBytes = promptloom.DefaultMaxBytes
	}
	return t
}

// Transport is the http.RoundTripper an SDK's client is given. Each
// request is recorded whole by the time its response body ends (or its
// RoundTrip fails): nothing is held from one request to the next.
type Transport struct {
	base http.RoundTripper
	j    *journal.Journal
	opts Options

	mu   sync.Mutex
	pred *cache.Predictor // the calls so far, for the spans' cache attributes
}

func (t *Transport) predictor() *cache.Predictor {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pred == nil {
		t.pred = cache.NewPredictor(nil)
	}
	return t.pred
}

// attempt is one request sent: its request recorded, its span, and how
// it ended.
type attempt struct {
	p  *journal.Pending
	ep endpoint
	rc *relay.Call // the proxy's part (nil: none)
	sc *spanCall
	sp *span

	mu   sync.Mutex
	done bool
}

// failure is a failed attempt: an error status (a redirect the client
// follows included), or a transport error.
type failure struct {
	status int
	err    error
	answer string // the start of an error status's body: the provider's words
}

// refusal wraps a request refused before it left: a broken rule, or a
// body that is not one request every reader reads alike, matches
// journal.ErrStaleManifest; any other failure to record the request (a
// closed journal, a sink that cannot write) is itself.
func refusal(call string, err error) error {
	var re *manifest.RuleError
	var pe *payload.Error
	switch {
	case errors.Is(err, journal.ErrStaleManifest):
		return fmt.Errorf("transport: %w", err)
	case errors.As(err, &re):
		return fmt.Errorf("transport: %w: call %s: %w", journal.ErrStaleManifest, call, err)
	case errors.As(err, &pe):
		return fmt.Errorf("transport: %w: call %s: request body: %w", journal.ErrStaleManifest, call, err)
	}
	return fmt.Errorf("transport: call %s: not sent: %w", call, err)
}

// RoundTrip implements http.RoundTripper: it checks the request, records
// it, sends it, and records the response as the caller reads it.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req == nil || req.URL == nil {
		return nil, errors.New("transport: nil request")
	}
	ctx := req.Context()
	c, _ := ctx.Value(callKey{}).(*Call)
	rc := relay.From(ctx)
	shape, model, stream, routed := payload.Route(req.URL.Path)
	if req.Method != "POST" || c == nil && !routed {
		// Not a model call (a GET, a file upload): passed on as it is,
		// its body unread.
		return t.base.RoundTrip(req)
	}
	var body []byte
	var err error
	if req.Body != nil && req.Body != http.NoBody {
		var known []byte
		if rc != nil && rc.Payload != nil {
			known = wire.Body(rc.Payload)
		}
		body, err = readBody(io.LimitReader(req.Body, int64(t.opts.MaxBodyBytes)+1), req.ContentLength, known, t.opts.MaxBodyBytes)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("transport: reading the request body: %w", err)
		}
		if len(body) > t.opts.MaxBodyBytes {
			return nil, fmt.Errorf("transport: the request body is over %d bytes: %w", t.opts.MaxBodyBytes, promptloom.ErrTooLarge)
		}
	}
	out := req.Clone(ctx)
	if req.Body != nil && req.Body != http.NoBody {
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		out.ContentLength = int64(len(body))
	}
	// The body is read here once, for the gate, the journal and the span.
	var pr *payload.Request
	if rc != nil && rc.Payload != nil && bytes.Equal(wire.Body(rc.Payload), body) {
		pr = rc.Payload
	} else {
		pr, err = payload.Read(body, shape)
	}
	switch {
	case err != nil && (c != nil || routed):
		// A model call (the harness says so, or its URL does) whose body
		// is not one request every reader reads alike: refused, never
		// passed by unchecked and unrecorded.
		name := "(unattributed)"
		if c != nil {
			name = c.Name
		}
		return nil, refusal(name, err)
	case err != nil, pr.Provider == payload.Auto, t.j == nil:
		return t.base.RoundTrip(out)
	}
	ep := endpoint{req: pr, body: body, model: pr.Model, stream: stream || pr.Stream, server: req.URL}
	if model != "" {
		ep.model = model
	}
	lg, sctx, err := t.begin(ctx, c, ep)
	if err != nil {
		return nil, err
	}
	out = out.WithContext(sctx)
	resp, err := t.base.RoundTrip(out)
	// The request travelled while its lines were synced: nothing of the
	// answer reaches the caller before they are on stable storage.
	if serr := lg.p.Sync(); serr != nil {
		if err == nil {
			resp.Body.Close()
		}
		lg.finish(journal.Response{}, serr, 0)
		return nil, fmt.Errorf("transport: call %s: sent, but its record did not reach stable storage: %w", lg.sc.Call, serr)
	}
	if err != nil {
		if ctx.Err() != nil {
			lg.finish(journal.Response{}, fmt.Errorf("cancelled before the response: %w", err), 0)
		} else {
			lg.fail(&failure{err: err})
		}
		return nil, err
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		// The connection became another protocol's: no model answer comes
		// on it, and whoever gets this response cannot read one as a body
		// (httputil.ReverseProxy neither reads nor closes it). The call is
		// recorded as what it was, and the connection let go.
		if resp.Body != nil {
			resp.Body.Close()
		}
		up := resp.Header.Get("Upgrade")
		lg.finish(journal.Response{Status: resp.StatusCode}, fmt.Errorf("HTTP 101 Switching Protocols (to %q): a model call has no answer on another protocol", up), resp.StatusCode)
		return nil, fmt.Errorf("transport: call %s: the upstream answered 101 Switching Protocols (to %q) to a model call", lg.sc.Call, up)
	}
	rec := &recorder{rc: resp.Body, lg: lg, ctx: ctx, status: resp.StatusCode, limit: t.opts.MaxBodyBytes, length: resp.ContentLength,
		stream: ep.stream || strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"),
		// A harness that asked for gzip itself gets the body as sent;
		// the transcript records it decoded.
		gzip: !resp.Uncompressed && strings.EqualFold(strings.TrimSpace(resp.Header.Get("Content-Encoding")), "gzip")}
	if resp.StatusCode >= 400 || (resp.StatusCode == 307 || resp.StatusCode == 308) && resp.Header.Get("Location") != "" {
		// A redirect the client follows sends the same body again: an
		// attempt with no answer of its own, recorded as one, which a
		// reader ties to the next as it ties a retry.
		rec.failed = &failure{status: resp.StatusCode}
	}
	if resp.Body == nil {
		rec.rc = http.NoBody
	}
	resp.Body = rec
	return resp, nil
}

// readBody reads a request body (r holds at most limit+1 bytes of it).
// When known is the body a caller read already (relay.Call.Payload's), the body
// is compared with it as it is read, and known itself is the body when
// they are the same bytes: a body the proxy read is not held twice.
func readBody(r io.Reader, declared int64, known []byte, limit int) ([]byte, error) {
	if known != nil {
		bp := scratch.Get().(*[]byte)
		defer scratch.Put(bp)
		buf := *bp
		off := 0
		for {
			n, err := r.Read(buf)
			if n > 0 && (off+n > len(known) || !bytes.Equal(buf[:n], known[off:off+n])) {
				// Not the caller's bytes: read as any body is, from here.
				out := make([]byte, 0, max(len(known), off+n)+bytes.MinRead)
				out = append(append(out, known[:off]...), buf[:n]...)
				if err != nil {
					return out, ignoreEOF(err)
				}
				b := bytes.NewBuffer(out)
				_, err = b.ReadFrom(r)
				return b.Bytes(), err
			}
			off += n
			switch {
			case err == io.EOF && off == len(known):
				return known, nil
			case err != nil:
				return bytes.Clone(known[:off]), ignoreEOF(err)
			}
		}
	}
	buf := bytes.NewBuffer(make([]byte, 0, min(max(declared, 0), int64(limit))+bytes.MinRead))
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}

func ignoreEOF(err error) error {
	if err == io.EOF {
		return nil
	}
	return err
}

// scratch is the buffer a body is compared through, 32 KiB at a time.
var scratch = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// begin checks a request and records it, as an attempt of its own. A
// refused request is an error, and nothing is recorded.
func (t *Transport) begin(ctx context.Context, c *Call, ep endpoint) (*attempt, context.Context, error) {
	body := ep.body
	wctx := context.WithoutCancel(ctx)
	pr := ep.req
	req := journal.Request{Body: body, Provider: pr.Provider, Payload: pr, Messages: pr.Messages, Tools: pr.Tools, Parameters: pr.Parameters}
	sc := &spanCall{Request: pr, Model: ep.model, Stream: ep.stream, Server: ep.server}
	rc := relay.From(ctx)
	if rc != nil {
		req.Received, req.Changed = rc.Received, rc.Changed
	}
	var e *explain.Explanation
	if c == nil || !c.attributed() {
		req.Unattributed = true
		if c != nil {
			req.Call = c.Name
		}
	} else {
		e = c.Explanation
		req.Manifest, req.System = c.Manifest, c.System
		if e != nil {
			req.Manifest, req.System = e.Manifest, e.System
		}
		req.Call = c.Name
		if req.Call == "" && req.Manifest != nil {
			req.Call = req.Manifest.CallRole
		}
		if req.Manifest != nil {
			if rerr := checkTools(gatedRows(e, req.Manifest), pr.ToolNames); rerr != nil {
				return nil, nil, refusal(req.Call, rerr)
			}
		}
	}
	p, err := t.j.Begin(wctx, req)
	if err != nil {
		return nil, nil, refusal(req.Call, err)
	}
	sc.Call, sc.RequestSeq = req.Call, p.Seq
	if t.opts.TracerProvider != nil {
		// The cache's prediction, for the span: only when there is one,
		// as it reads the whole request again into its manifest.
		if m, err := request.FromPayload(pr, nil); err == nil {
			v := t.predictor().Predict(cache.Call{Name: req.Call, At: time.Now(), Request: m})
			sc.Verdict = &v
		}
	}
	if m := req.Manifest; m != nil {
		sc.Manifest, sc.WholePromptDigest = m, m.WholePromptDigest.String()
		sc.ManifestHash = p.ManifestContentHash // the manifest recorded, as its request line names it
		sc.Included, sc.Parts = includedParts(m, req.System)
	}
	lg := &attempt{p: p, ep: ep, sc: sc, rc: rc}
	sctx, sp := startSpan(ctx, &t.opts, sc)
	lg.sp = sp
	return lg, sctx, nil
}

// includedParts are the ids of a manifest's included segments and their
// text, cut out of the prompt where the manifest's layout places them.
func includedParts(m *manifest.Manifest, system string) (ids, texts []string) {
	for at, s := range m.Layout() {
		ids = append(ids, s.ID)
		if at+s.Bytes <= len(system) && s.Bytes >= 0 {
			texts = append(texts, system[at:at+s.Bytes])
		} else {
			texts = append(texts, "")
		}
	}
	return ids, texts
}

// fail records a failed attempt as its outcome.
func (lg *attempt) fail(f *failure) {
	lg.finish(journal.Response{Status: f.status}, f.outcome(), f.status)
}

func (f *failure) outcome() error {
	if f.err != nil {
		return fmt.Errorf("transport error: %w", f.err)
	}
	if f.answer != "" {
		return fmt.Errorf("HTTP %d %s: %s", f.status, http.StatusText(f.status), f.answer)
	}
	return fmt.Errorf("HTTP %d %s", f.status, http.StatusText(f.status))
}

// finish records the attempt's outcome, once, and ends its span.
func (lg *attempt) finish(resp journal.Response, callErr error, status int) error {
	lg.mu.Lock()
	if lg.done {
		lg.mu.Unlock()
		return nil
	}
	lg.done = true
	lg.mu.Unlock()
	// A journal that cannot take the outcome leaves the call incomplete,
	// which Verify reports; a response it refuses (not UTF-8) is recorded
	// as failed, and its error is the caller's to give the SDK.
	ferr := lg.p.Finish(context.Background(), resp, callErr)
	if lg.rc != nil && lg.rc.Done != nil {
		outErr := callErr
		if outErr == nil {
			outErr = ferr
		}
		lg.rc.Done(resp, outErr)
	}
	r := &spanResult{Status: status, Err: callErr}
	if callErr == nil {
		r.Response = &resp
	}
	endSpan(lg.sp, r)
	return ferr
}

// recorder is the response body the SDK reads: every Read is the
// server's bytes as they arrive, copied aside for the transcript; at the
// end of the body (or its early close, or a read error) the call's outcome
// is recorded.
type recorder struct {
	rc     io.ReadCloser
	lg     *attempt
	ctx    context.Context
	status int
	stream bool
	limit  int
	gzip   bool     // the body is gzip-encoded: decoded for the transcript
	failed *failure // an error status: the body is the failure's

	// reading is held through each Read, from the server's bytes to the
	// outcome they make, so a Close from another goroutine (after closing
	// the body, which ends a Read that waits) records its outcome only
	// once that Read is done: one outcome, the true one.
	reading sync.Mutex
	closing atomic.Bool

	// length is the body's declared length (-1: unknown), and got the
	// bytes read of it: the call is recorded as soon as the last declared
	// byte is read, before it is handed on, so that a client that has the
	// whole answer finds the call in the transcript.
	length, got int64
	// eof says the body's end came with its last bytes, which were handed
	// on first: the next Read (or a Close) records the call, so that the
	// bytes are not held while the outcome is written. A stream that
	// arrives whole in one read gives the caller its first byte at once.
	eof bool

	mu     sync.Mutex
	chunks [][]byte // the bytes read, in blocks of chunkSize
	n      int      // their count
	over   bool     // more than limit bytes came: not retained
	end    bool
}

// chunkSize is the largest block the bytes read are kept in: blocks
// filled one after another and joined once at the end, so a stream is
// copied twice, not once per doubling of a buffer.
const chunkSize = 64 << 10

// chunks are blocks of chunkSize, kept from one answer to the next once
// their bytes are joined into the body.
var chunks = sync.Pool{New: func() any { b := make([]byte, 0, chunkSize); return &b }}

// newChunk is an empty block of capacity n.
func newChunk(n int) []byte {
	if n == chunkSize {
		return (*chunks.Get().(*[]byte))[:0]
	}
	return make([]byte, 0, n)
}

func (r *recorder) Read(p []byte) (int, error) {
	r.reading.Lock()
	defer r.reading.Unlock()
	if r.eof {
		if ferr := r.done(nil, false); ferr != nil {
			return 0, fmt.Errorf("transport: %w", ferr)
		}
		return 0, io.EOF
	}
	n, err := r.rc.Read(p)
	if err == io.EOF && n > 0 && r.got+int64(n) != r.length {
		r.eof, err = true, nil
	}
	r.mu.Lock()
	if n > 0 && !r.end {
		if r.n+n > r.limit {
			r.over, r.chunks = true, nil
		} else if !r.over {
			for b := p[:n]; len(b) > 0; {
				if len(r.chunks) == 0 || len(r.chunks[len(r.chunks)-1]) == cap(r.chunks[len(r.chunks)-1]) {
					// Small for a small answer, then blocks of chunkSize.
					r.chunks = append(r.chunks, newChunk(min(chunkSize, max(4<<10, r.n))))
				}
				last := &r.chunks[len(r.chunks)-1]
				k := copy((*last)[len(*last):cap(*last)], b)
				*last, b = (*last)[:len(*last)+k], b[k:]
			}
			r.n += n
		}
	}
	r.mu.Unlock()
	r.got += int64(n)
	switch {
	case err == io.EOF, err == nil && n > 0 && r.got == r.length:
		if ferr := r.done(nil, false); ferr != nil {
			// The transcript refused the reply (not UTF-8): the SDK gets
			// that error, not the reply, as a harness on Journal.Call does.
			return n, fmt.Errorf("transport: %w", ferr)
		}
	case err != nil && r.closing.Load():
		r.done(nil, true) // the Read our Close ended
	case err != nil:
		r.done(err, false)
	}
	return n, err
}

func (r *recorder) Close() error {
	r.closing.Store(true)
	err := r.rc.Close()
	r.reading.Lock()
	r.done(nil, !r.eof)
	r.reading.Unlock()
	return err
}

// done records the outcome once: readErr is a read's error, closed says
// the caller closed the body before its end. It returns the journal's
// refusal of the reply, if it refused it.
func (r *recorder) done(readErr error, closed bool) error {
	r.mu.Lock()
	if r.end {
		r.mu.Unlock()
		return nil
	}
	r.end = true
	var body []byte
	switch {
	case len(r.chunks) == 1:
		body = r.chunks[0]
	case len(r.chunks) > 1:
		body = make([]byte, 0, r.n)
		for _, c := range r.chunks {
			body = append(body, c...)
			if cap(c) == chunkSize {
				chunks.Put(&c) // copied into body: free for the next answer
			}
		}
	}
	over := r.over
	r.chunks = nil
	r.mu.Unlock()
	if r.gzip && !over && len(body) > 0 {
		if readErr == nil {
			var err error
			if body, over, err = gunzip(body, r.limit); err != nil {
				readErr = fmt.Errorf("the gzip-encoded response does not decode: %w", err)
			}
		}
	}
	lg := r.lg
	if r.failed != nil {
		// The provider's words, redacted as the transcript redacts them:
		// an error may echo the credential it refused, and this text goes
		// to relay.Call.Done and the span, not only to the transcript.
		// Redacted whole, then cut: a cut first can leave out a token's
		// recognisable start and keep the rest of it.
		r.failed.answer = cutText(redact.String(strings.ToValidUTF8(string(body), "\uFFFD")), 512)
		if readErr != nil && r.ctx.Err() != nil {
			lg.finish(journal.Response{Status: r.status}, fmt.Errorf("cancelled while reading the HTTP %d answer: %w", r.status, readErr), r.status)
			return nil
		}
		lg.fail(r.failed)
		return nil
	}
	sum, whole := payload.Summarize(lg.ep.req.Provider, body, r.stream)
	resp := journal.Response{Text: sum.Text, StopReason: sum.StopReason, ToolCalls: sum.ToolCalls, Usage: sum.Usage,
		ID: sum.ID, Model: sum.Model, Status: r.status}
	if !over && fitsQuoted(retainLimit, body, []byte(sum.Text)) {
		resp.Body = body
	}
	n := len(body)
	if over {
		n = int(r.got) // what came, though it is not kept
	}
	// How the answer ended comes first: a stream the caller cancelled or
	// closed before its end was cancelled or closed early, whether or not
	// it had passed the limit by then.
	switch {
	case readErr != nil && r.ctx.Err() != nil:
		lg.finish(journal.Response{Status: r.status}, fmt.Errorf("cancelled after %d bytes of the response: %w", n, r.ctx.Err()), r.status)
	case readErr != nil:
		lg.finish(journal.Response{Status: r.status}, fmt.Errorf("the response broke after %d bytes: %w", n, readErr), r.status)
	case closed && (over || !whole):
		lg.finish(journal.Response{Status: r.status}, fmt.Errorf("closed early by the caller after %d bytes of the response", n), r.status)
	case over:
		lg.finish(journal.Response{Status: r.status}, fmt.Errorf("the response is over %d bytes: not journaled", r.limit), r.status)
	default:
		if err := lg.finish(resp, nil, r.status); err != nil && !utf8.Valid(body) {
			return err // the journal's refusal of a reply it cannot hold
		}
	}
	return nil
}

// endpoint is a request RoundTrip recognised as a model call: its body
// read, and what its URL adds (Gemini's model, a streaming method).
type endpoint struct {
	req    *payload.Request
	body   []byte
	model  string
	stream bool
	server *url.URL // the request's URL, for its span
}

// spanCall describes one attempt to the span hooks (otel.go).
type spanCall struct {
	// Request is the request body read; Model the request's model;
	// Stream says the response is a stream of server sent events.
	Request *payload.Request
	Model   string
	Stream  bool
	// Server is the request's URL: server.address and server.port.
	Server *url.URL
	// Call is the call's name; Manifest is nil for an unattributed call.
	Call     string
	Manifest *manifest.Manifest
	// ManifestHash is the content hash of the manifest retained;
	// WholePromptDigest the manifest's whole-prompt digest; Included the
	// ids of the included fragments, in order, and Parts their text (the
	// system prompt split at the fragments' boundaries).
	ManifestHash, WholePromptDigest string
	Included, Parts                 []string
	// RequestSeq is the transcript line (seq) of the call's request.
	RequestSeq int64
	// Verdict is the cache's prediction for the call (nil without spans).
	Verdict *cache.Verdict
}

// spanResult is how an attempt ended, for endSpan. endSpan is called
// once, when the attempt's outcome is recorded: for a stream, when the SDK
// reads it to its end or closes it, after RoundTrip has returned and maybe
// from another goroutine.
type spanResult struct {
	// Response is the summary recorded (nil when the call failed).
	Response *journal.Response
	// Status is the HTTP status (0: none came); Err the attempt's
	// failure (a transport error, a cancelled context, a stream closed
	// early, an error status), nil when it succeeded. A span is one
	// attempt: the retries before it are a reader's to tie
	// (cache.Logical).
	Status int
	Err    error
}

// gunzip decodes a gzip body for the transcript, at most limit bytes of it
// (over says there were more).
func gunzip(body []byte, limit int) (out []byte, over bool, err error) {
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, false, err
	}
	out, err = io.ReadAll(io.LimitReader(zr, int64(limit)+1))
	if err != nil {
		return nil, false, err
	}
	if len(out) > limit {
		return nil, true, nil
	}
	return out, false, nil
}

// retainLimit bounds what a response line may hold of the answer: its
// body and its text, each quoted, leave room in a line the journal's
// reader takes back (promptloom.DefaultMaxBytes). An answer past it is
// recorded by its summary alone (text, tool calls, usage), whose bytes
// the line can always hold, so every reply accepted is in a transcript
// that verifies.
const retainLimit = promptloom.DefaultMaxBytes - 1<<20

// fitsQuoted reports whether the texts, each quoted as a JSON string, fit
// in limit bytes; the texts are read only when their worst case (six bytes
// a byte) would not fit.
func fitsQuoted(limit int, texts ...[]byte) bool {
	worst, n := 0, 0
	for _, t := range texts {
		worst += 6*len(t) + 2
	}
	if worst <= limit {
		return true
	}
	for _, t := range texts {
		n += quotedLen(t)
	}
	return n <= limit
}

// quotedLen bounds the length of b quoted as a JSON string: two bytes for
// a quote or a backslash, six for a control character or an HTML escape,
// two for any byte of a multi-byte character (U+2028 is three bytes and
// six quoted).
func quotedLen(b []byte) int {
	n := 2
	for _, c := range b {
		switch {
		case c == '"' || c == '\\' || c >= 0x80:
			n += 2
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			n += 6
		default:
			n++
		}
	}
	return n
}

// cutText is s trimmed and cut to at most n bytes, at a character's start.
func cutText(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.TrimSpace(s[:n])
}
