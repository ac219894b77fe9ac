package journal

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/harn/redact"
	"github.com/promptloom/promptloom/internal/chain"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/internal/wire"
	"github.com/promptloom/promptloom/journal/tiles"
	"github.com/promptloom/promptloom/payload"
)

// Journal records calls into a Sink: a file (Open), a writer (New), or a
// database (journal/postgres). Its methods are safe for concurrent use, and
// its zero value refuses every call with an error rather than panicking.
type Journal struct {
	mu      sync.Mutex
	sink    Sink
	clock   func() time.Time
	session string
	named   string // the session's id as given (restart's new ids build on it)
	follows string // Options.Follows
	keepRaw bool
	// deferOutcome is Options.DeferOutcomeSync.
	deferOutcome bool
	maxLine      int  // the longest line it writes: the one Verify reads
	opened       bool // the session's journal_open line is written
	closed       bool
	ended        bool  // journal_close is written and the sink closed
	endErr       error // why ending failed, for a Close after the session ended
	calls        int
	running      int               // calls begun and not finished
	epoch        int               // the sink's chain was cut back this many times
	last         map[string]string // kind -> content hash of the last line of it this journal wrote
	cp           *checkpointer     // the signer and the session's tree of calls; nil without Options.Signer
	segs         segmentWriter     // the session's pieces of request bodies kept as segments
	// redacted is the redaction of the last body's items, by their raw
	// digest: a body is redacted for its new items only.
	redacted redactions
	// wholeBody keeps unattributed bodies whole (request.body), as
	// transcripts before segments did: tests write that format, which
	// readers still read, and measure against it.
	wholeBody bool
	// repaired is the number of bytes of a torn last line cut off when the
	// file was opened.
	repaired int
}

// ErrClosed is a call on a closed Journal.
var ErrClosed = errors.New("journal: closed")

// ErrStaleManifest wraps a manifest that does not hold for the bytes about
// to be sent: the call is not made and nothing is written.
var ErrStaleManifest = errors.New("journal: manifest does not hold for the bytes to send")

// Open opens (creating it if need be) a transcript file for appending.
// Every append is one O_APPEND write of whole lines under an exclusive
// flock, fsynced, so any number of Journals, in this process or others,
// may append to one file: each reads the chain's end under the lock before
// it writes. A torn last line of a promptloom transcript (not complete
// JSON, and the start of the chain's next line: only a crash during a
// write leaves one) is cut off, and repaired says how many bytes; a
// complete last record that merely lacks its newline is given one. Both are
// checked before the file is changed: a file that is not a promptloom
// transcript, or whose unended last line is not its chain's next, is
// refused (ErrForeignTranscript) and left as it was. Open reads the tail
// of the file, never all of it. When the journal opens its session (with
// its first call), the ids the file opens are read, under the lock, once
// in the process for every Journal of the file and then only from where
// the last read stopped, so that the session gets an id the file does not
// open yet (Options.Session). A file cut back under the journal (a log
// rotation's copytruncate) is noticed at the next append: the session
// starts again in it.
func Open(path string, opts *Options) (*Journal, error) {
	f, cut, err := openFile(path, opts.maxLine())
	if err != nil {
		return nil, err
	}
	j := NewSink(f, opts)
	j.repaired = cut
	return j, nil
}

// New returns a journal writing to w, which it alone writes (no lock, no
// fsync: tests and in-memory runs).
func New(w io.Writer, opts *Options) *Journal {
	if chain.IsNil(w) {
		return NewSink(nil, opts)
	}
	return NewSink(&writerSink{w: w, t: Tail{Prev: chain.Genesis}}, opts)
}

// NewSink returns a journal appending to s. A nil s gives a journal that
// refuses every call, as a zero Journal does.
func NewSink(s Sink, opts *Options) *Journal {
	if chain.IsNil(s) {
		s = nil
	}
	j := &Journal{sink: s, clock: func() time.Time { return time.Now().UTC() }, last: map[string]string{}, maxLine: opts.maxLine()}
	if opts != nil {
		if opts.Clock != nil {
			j.clock = opts.Clock
		}
		j.session, j.keepRaw, j.follows = opts.Session, opts.KeepRaw, opts.Follows
		j.deferOutcome = opts.DeferOutcomeSync
	}
	j.cp = newCheckpointer(opts)
	if j.session == "" {
		var b [8]byte
		rand.Read(b[:])
		j.session = hex.EncodeToString(b[:])
	}
	j.named = j.session
	return j
}

// Pending is a call whose request is recorded and whose outcome is not
// yet: Finish records it. A harness that drives the provider itself (as
// package transport does) uses Begin and Finish; one that hands the
// journal a Model uses Call.
type Pending struct {
	// Seq is the seq of the call's request line: where the call is in
	// the transcript (its line number, in a file one journal wrote).
	Seq int64
	// ManifestContentHash is the manifest_content_hash the request line's
	// served context names: of the manifest as recorded (projected onto
	// the system channel the body holds), which a span or a log line can
	// carry to lead back to it; "" for an unattributed call.
	ManifestContentHash string

	j        *Journal
	synced   func() error
	call     string
	hash     string
	epoch    int
	attempts int
	done     bool
}

// Call validates, records and makes one call: Begin, then the model, then
// Finish. The response returned is the one recorded, byte for byte; a
// response holding a string that is not UTF-8 is not returned at all (see
// Finish): Call returns an error, and the transcript records the call as
// failed. A model that panics has its call recorded as an error, and the
// panic goes on.
func (j *Journal) Call(ctx context.Context, m Model, req Request) (Response, error) {
	if j == nil {
		return Response{}, errNoJournal(req.Call)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	pre, err := j.prepare(req)
	if err != nil {
		return Response{}, err
	}
	j.mu.Lock()
	err = j.usable(req.Call)
	j.mu.Unlock()
	if err != nil {
		return Response{}, err
	}
	if chain.IsNil(m) {
		return Response{}, fmt.Errorf("journal: call %s: no model", req.Call)
	}
	p, err := j.begin(ctx, pre)
	if err != nil {
		return Response{}, err
	}
	var resp Response
	var callErr error
	func() {
		defer func() {
			if r := recover(); r != nil {
				p.Finish(ctx, Response{}, fmt.Errorf("panic: %v", r))
				panic(r)
			}
		}()
		resp, callErr = m.Complete(ctx, req)
	}()
	if err := p.Finish(ctx, resp, callErr); err != nil && callErr == nil {
		return Response{}, err
	}
	if callErr != nil {
		return Response{}, fmt.Errorf("call %s: %w", req.Call, callErr)
	}
	return resp, nil
}

// Begin validates a call at the provider boundary and records its request:
// the manifest must hold for the assembled prompt (projected to the bytes
// actually sent when an adapter changed them; with a request body, the
// bytes sent are its system channel, and the receipt records their
// digest, length and shape); then the system prompt and manifest (each
// when it differs from the session's last) and the request go to the sink
// in one append, written when Begin returns and on stable storage when
// Sync does. Nothing is written for a call that fails validation, and
// a system prompt, call name or manifest string that is not UTF-8 fails it:
// the transcript could not hold it.
func (j *Journal) Begin(ctx context.Context, req Request) (*Pending, error) {
	if j == nil {
		return nil, errNoJournal(req.Call)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	pre, err := j.prepare(req)
	if err != nil {
		return nil, err
	}
	return j.begin(ctx, pre)
}

// prepared is a request validated, with the lines' parts it records.
type prepared struct {
	call, served   string
	mbytes, scJSON []byte
	reqJSON        []byte
	sc             servedContext
	unattributed   bool // no manifest: the request line alone, with its body and digest
	// A body kept as segments: the request object is head, then
	// body_segments (made under the lock, against the session's pieces),
	// then tail.
	seg        *segmented
	head, tail []byte
	// The body as it came (Request.Received): recvWhole is the request's
	// received object with that body whole; beside a sent body kept as
	// segments it is kept as segments too (recv, between recvHead and
	// recvTail), and tail then leaves the request object open.
	recv               *segmented
	recvWhole          []byte
	recvHead, recvTail []byte
}

// prepare validates a request and builds what its lines hold.
func (j *Journal) prepare(req Request) (*prepared, error) {
	if !utf8.ValidString(req.Call) {
		return nil, fmt.Errorf("journal: call %q: the call name is not UTF-8", req.Call)
	}
	if !utf8.ValidString(req.System) || req.Sent != nil && !utf8.ValidString(*req.Sent) {
		return nil, fmt.Errorf("journal: call %s: the system prompt is not UTF-8", req.Call)
	}
	if (req.Received == nil) != (req.Changed == "") {
		return nil, fmt.Errorf("journal: call %s: Request.Received and Request.Changed go together: a body changed is kept with how it was changed", req.Call)
	}
	if req.Unattributed {
		return j.prepareUnattributed(req)
	}
	if p := notUTF8(req.Manifest); p != "" {
		// Canonical JSON would write U+FFFD for the bad bytes: the manifest
		// recorded would not be the one given.
		return nil, fmt.Errorf("journal: call %s: the manifest's %s is not UTF-8", req.Call, p)
	}
	eg, err := req.egress()
	if err != nil {
		return nil, err
	}
	served, mf := eg.text, eg.manifest
	mbytes, err := mf.Canonical()
	if err != nil {
		return nil, err
	}
	sc := servedContext{
		Schema:                  chain.ServedContextSchema,
		ManifestContentHash:     digest.Bytes(mbytes).String(),
		SystemPromptContentHash: digest.Of(served).String(),
		SystemPromptBytes:       len(served),
	}
	request := map[string]json.RawMessage{}
	for _, part := range []struct {
		name string
		raw  json.RawMessage
		hash *string
	}{{"messages", req.Messages, &sc.MessagesContentHash}, {"tools", req.Tools, &sc.ToolsContentHash},
		{"parameters", req.Parameters, &sc.ParametersContentHash}} {
		kept, hash, err := j.retain(part.raw)
		if err != nil {
			return nil, fmt.Errorf("journal: call %s: %s: %w", req.Call, part.name, err)
		}
		request[part.name], *part.hash = kept, hash
	}
	if eg.channel != nil {
		// The body's system channel is the system prompt: retained as the
		// system prompt line is, redacted unless KeepRaw.
		n := len(eg.channel.Text)
		sc.PayloadSystemContentHash = digest.Of(eg.channel.Text).String()
		sc.PayloadSystemBytes, sc.PayloadProvider = &n, string(eg.channel.Provider)
		if request["payload"], sc.PayloadContentHash, err = j.retain(eg.retained); err != nil {
			return nil, fmt.Errorf("journal: call %s: payload: %w", req.Call, err)
		}
	}
	if req.Received != nil {
		if request["received"], sc.ReceivedContentHash, err = j.retain(j.receivedParts(req).whole); err != nil {
			return nil, fmt.Errorf("journal: call %s: received: %w", req.Call, err)
		}
	}
	scJSON, _ := json.Marshal(sc)
	return &prepared{call: req.Call, served: served, mbytes: mbytes, scJSON: scJSON, reqJSON: canonicalObject(request), sc: sc}, nil
}

// receivedParts is request.received, of a call whose body was changed
// before it was sent (Request.Received): the body as it came, kept as
// the body sent is (redacted, canonical; its text when it is not JSON),
// with its length, its digest and the change in words.
type receivedParts struct {
	kept  []byte // the body kept (nil: kept as its text)
	whole []byte // the object, with the body whole
	// The object up to its body_segments, and after them, when kept.
	head, tail []byte
}

func (j *Journal) receivedParts(req Request) receivedParts {
	var r receivedParts
	change := chain.Quote(j.retainText(strings.ToValidUTF8(req.Changed, "\uFFFD")))
	kept, hash, err := j.retain(req.Received)
	var text []byte
	if err != nil {
		t := j.retainText(strings.ToValidUTF8(string(req.Received), "\uFFFD"))
		text, hash = pjson.AppendString(nil, t), digest.Of(t).String()
		kept = nil
	}
	counts := strconv.AppendInt([]byte(`"body_bytes":`), int64(len(req.Received)), 10)
	counts = pjson.AppendString(append(counts, `,"body_content_hash":`...), hash)
	w := []byte{'{'}
	if kept != nil {
		w = append(append(append(w, `"body":`...), kept...), ',')
	}
	w = append(w, counts...)
	if text != nil {
		w = append(append(w, `,"body_text":`...), text...)
	}
	r.whole = append(append(append(w, `,"change":`...), change...), '}')
	if kept != nil {
		r.kept = kept
		r.head = append(append([]byte{'{'}, counts...), `,"body_segments":`...)
		r.tail = append(append([]byte(`,"change":`), change...), '}')
	}
	return r
}

// canonicalObject is the canonical JSON of an object whose values are
// canonical JSON already (what retain returns) and whose keys are ASCII:
// the members in key order, the values not encoded again (they are most
// of a request line).
func canonicalObject(members map[string]json.RawMessage) []byte {
	n := 2
	for k, v := range members {
		n += len(k) + len(v) + 4
	}
	b := make([]byte, 0, n)
	for _, k := range slices.Sorted(maps.Keys(members)) {
		if len(b) == 0 {
			b = append(b, '{')
		} else {
			b = append(b, ',')
		}
		b = append(append(pjson.AppendString(b, k), ':'), members[k]...)
	}
	if len(b) == 0 {
		b = append(b, '{')
	}
	return append(b, '}')
}

// prepareUnattributed builds the request line of a call made without a
// manifest: its body (redacted, as everything retained is, unless
// KeepRaw), the body's digest and its length. Nothing accounts for its
// prompt, but the whole request is kept, so it can still be explained,
// diffed and held to the cache's rules later. A JSON body is cut into
// pieces and hashed here, outside the lock; which pieces its line
// carries is worked out under it (begin), against the session's.
func (j *Journal) prepareUnattributed(req Request) (*prepared, error) {
	if req.Manifest != nil {
		return nil, fmt.Errorf("journal: call %s: an unattributed call has a manifest", req.Call)
	}
	// The members, each value canonical JSON already, written in key
	// order: the body is not encoded again (it is most of the line).
	var body, text []byte
	hash := ""
	if kept, h, err := j.retainBody(req.Body, req.Payload != nil && sameBytes(wire.Body(req.Payload), req.Body)); err == nil && req.Body != nil {
		body, hash = kept, h
	} else {
		// Not JSON: kept as text, redacted, its bytes that are not UTF-8
		// as U+FFFD (the digest is of the text as kept).
		t := j.retainText(strings.ToValidUTF8(string(req.Body), "\uFFFD"))
		text, hash = pjson.AppendString(nil, t), digest.Of(t).String()
	}
	reqJSON := make([]byte, 0, len(body)+len(text)+160)
	member := func(key string, v []byte) {
		if v == nil {
			return
		}
		if len(reqJSON) == 0 {
			reqJSON = append(reqJSON, '{')
		} else {
			reqJSON = append(reqJSON, ',')
		}
		reqJSON = append(append(pjson.AppendString(reqJSON, key), ':'), v...)
	}
	pre := &prepared{call: req.Call, scJSON: []byte("null"), unattributed: true}
	if body != nil && !j.wholeBody {
		if len(body) > j.maxLine {
			// Verify rebuilds no body longer than a line: one it would
			// refuse is not written.
			return nil, &lineTooLarge{call: req.Call, what: "request body", n: len(body), limit: j.maxLine}
		}
		shape := req.Provider
		if req.Payload != nil {
			shape = req.Payload.Provider
		}
		j.mu.Lock()
		last := j.segs.last
		j.mu.Unlock()
		pre.seg = cutBody(body, shape, last)
		// The members around body_segments, in key order.
		member("body_bytes", strconv.AppendInt(nil, int64(len(req.Body)), 10))
		member("body_content_hash", pjson.AppendString(nil, hash))
		pre.head = append(reqJSON, `,"body_segments":`...)
		pre.tail = []byte{'}'}
		if req.Provider != payload.Auto {
			pre.tail = append(pjson.AppendString([]byte(`,"provider":`), string(req.Provider)), '}')
		}
		if req.Received != nil {
			rp := j.receivedParts(req)
			pre.tail, pre.recvWhole = pre.tail[:len(pre.tail)-1], rp.whole
			if rp.kept != nil && len(rp.kept) <= j.maxLine {
				// Cut beside the body sent, whose pieces it mostly shares.
				pre.recv, pre.recvHead, pre.recvTail = cutBody(rp.kept, shape, pre.seg), rp.head, rp.tail
			}
		}
		return pre, nil
	}
	member("body", body)
	member("body_bytes", strconv.AppendInt(nil, int64(len(req.Body)), 10))
	member("body_content_hash", pjson.AppendString(nil, hash))
	member("body_text", text)
	if req.Provider != payload.Auto {
		member("provider", pjson.AppendString(nil, string(req.Provider)))
	}
	if req.Received != nil {
		member("received", j.receivedParts(req).whole)
	}
	pre.reqJSON = append(reqJSON, '}')
	return pre, nil
}

// whole is the request object of a body kept as segments, with the body
// kept whole instead (request.body).
func (pre *prepared) whole() []byte {
	const segs = `,"body_segments":`
	b := append([]byte(`{"body":`), pre.seg.body...)
	b = append(append(b, ','), pre.head[1:len(pre.head)-len(segs)]...)
	b = append(b, pre.tail...)
	if pre.recvWhole != nil {
		b = append(append(append(b, `,"received":`...), pre.recvWhole...), '}')
	}
	return b
}

// begin writes a prepared request's lines.
func (j *Journal) begin(ctx context.Context, pre *prepared) (*Pending, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.usable(pre.call); err != nil {
		return nil, err
	}
	sc, served, mbytes := pre.sc, pre.served, pre.mbytes
	p := &Pending{j: j, call: pre.call, ManifestContentHash: pre.sc.ManifestContentHash}
	var openHash string
	var segs *segmentsWritten
	var segsAt Tail
	synced, err := j.appendLater(ctx, false, func(t Tail) (*lineBuilder, error) {
		b, err := j.startLines(t, &openHash)
		if err != nil {
			return nil, err
		}
		if !pre.unattributed && j.last[chain.KindSystemPrompt] != sc.SystemPromptContentHash {
			b.line(chain.KindSystemPrompt, "content", chain.Quote(j.retainText(served)), "content_hash", chain.Quote(sc.SystemPromptContentHash))
		}
		if !pre.unattributed && j.last[chain.KindContextManifest] != sc.ManifestContentHash {
			b.line(chain.KindContextManifest, "content_hash", chain.Quote(sc.ManifestContentHash), "manifest", string(mbytes))
		}
		reqJSON := pre.reqJSON
		if pre.seg != nil {
			reqJSON, segs = j.segs.encode(append(make([]byte, 0, len(pre.head)+len(pre.tail)+256), pre.head...), pre.seg)
			reqJSON = append(reqJSON, pre.tail...)
			if pre.recvWhole != nil {
				reqJSON = append(reqJSON, `,"received":`...)
				if pre.recv != nil {
					reqJSON, _ = j.segs.encodeReceived(append(reqJSON, pre.recvHead...), pre.recv, segs)
					reqJSON = append(reqJSON, pre.recvTail...)
				} else {
					reqJSON = append(reqJSON, pre.recvWhole...)
				}
				reqJSON = append(reqJSON, '}')
			}
			if len(reqJSON) > j.maxLine-1024 {
				// Its new pieces, quoted, would make a line Verify refuses:
				// the body is kept whole (it is JSON, not quoted), as
				// before segments, and stores no piece.
				reqJSON, segs = pre.whole(), nil
			}
		}
		b.line(chain.KindRequest, "session", chain.Quote(j.session), "call", chain.Quote(pre.call),
			// Read in place: the line copies it.
			"served_context", string(pre.scJSON), "request", unsafe.String(unsafe.SliceData(reqJSON), len(reqJSON)))
		if b.longest > j.maxLine {
			// A line Verify would refuse is not written: the call is
			// refused before it is made, not recorded unverifiably.
			return nil, &lineTooLarge{call: pre.call, what: b.longestKind, n: b.longest, limit: j.maxLine}
		}
		p.Seq, p.hash = b.t.Seq, b.t.Prev
		segsAt = Tail{Prev: b.t.Prev, Seq: b.t.Seq}
		return b, nil
	})
	if err != nil {
		if segs != nil {
			j.segs.unsure, j.segs.unsureAt = segs, segsAt
		}
		return nil, err
	}
	j.markOpened(openHash)
	j.segs.commit(segs)
	j.calls++
	j.running++
	p.epoch, p.synced = j.epoch, synced
	if !pre.unattributed {
		j.last[chain.KindSystemPrompt], j.last[chain.KindContextManifest] = sc.SystemPromptContentHash, sc.ManifestContentHash
	}
	return p, nil
}

// startLines begins lines at t for the session: a file found fresh (new,
// or cut back under the journal) starts the session again, and a session
// with no line yet claims its id and takes its journal_open line, whose
// hash goes to *openHash for markOpened once the lines are written.
func (j *Journal) startLines(t Tail, openHash *string) (*lineBuilder, error) {
	if t.Fresh {
		j.restart(t)
	}
	if !j.opened {
		if err := j.claimSession(t); err != nil {
			return nil, err
		}
	}
	b := newLineBuilder(t, j.clock().Format(time.RFC3339Nano))
	if !j.opened {
		*openHash = j.openLine(b)
	}
	return b, nil
}

// markOpened records, once the lines startLines began are written, that
// the session is open, and its journal_open line for the checkpoints.
func (j *Journal) markOpened(openHash string) {
	if !j.opened {
		j.opened = true
		j.cp.opened(openHash)
	}
}

// openLine writes the session's journal_open line to b and returns its
// hash. j.mu is held.
func (j *Journal) openLine(b *lineBuilder) string {
	if j.follows != "" {
		b.line(chain.KindOpen, "session", chain.Quote(j.session), "follows", chain.Quote(strings.ToValidUTF8(j.follows, "\uFFFD")))
	} else {
		b.line(chain.KindOpen, "session", chain.Quote(j.session))
	}
	return b.t.Prev
}

// Refuse records a request the caller refused rather than made (a body
// that does not read, a stale prompt, a gated tool, one over a limit): a
// provider_call_refused line of the journal's session, opening it if need
// be, with reason (a code of lowercase letters, digits and _, as a rule
// is), message (redacted, bounded), and the length and digest of body, the
// bytes received. The body itself is not kept: it may not read, or be
// over the limit it was refused for. call is the call's name, "" when
// unknown. A refusal is no call: journal_close does not count it, and no
// checkpoint has it as a leaf.
func (j *Journal) Refuse(ctx context.Context, call, reason, message string, body []byte) error {
	if j == nil {
		return errNoJournal(call)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if !chain.RuleLike(reason) {
		return fmt.Errorf("journal: call %s: refusal reason %q is not a code (lowercase letters, digits and _)", call, reason)
	}
	// A name or message from the request refused is bounded and redacted:
	// the refusal must fit a line, and keep no secret the body carried.
	call = redact.String(strings.ToValidUTF8(cut(call, 1<<10), "\uFFFD"))
	message = redact.String(strings.ToValidUTF8(cut(message, min(maxAttemptMessage, j.maxLine/8)), "\uFFFD"))
	fields := []string{"session", "", "reason", chain.Quote(reason), "message", chain.Quote(message),
		"body_bytes", strconv.Itoa(len(body)), "body_content_hash", chain.Quote(digest.Bytes(body).String())}
	if call != "" {
		fields = append(fields, "call", chain.Quote(call))
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.usable(call); err != nil {
		return err
	}
	var openHash string
	err := j.appendLines(ctx, func(t Tail) (*lineBuilder, error) {
		b, err := j.startLines(t, &openHash)
		if err != nil {
			return nil, err
		}
		fields[1] = chain.Quote(j.session)
		b.line(chain.KindRefused, fields...)
		return b, nil
	})
	if err != nil {
		return err
	}
	j.markOpened(openHash)
	return nil
}

// cut is s cut to at most n bytes, saying how long it was.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("%s… (%d bytes in all)", strings.ToValidUTF8(s[:n], ""), len(s))
}

// retainText is what the transcript keeps of the system prompt: the text
// with each secret of the catalog replaced by its placeholder (Harn
// redacts its system_prompt lines too), or with KeepRaw the text itself.
// Its content hash is the same either way (digest.Of redacts first), and
// the verifier holds the manifest to it with each placeholder standing for
// the bytes it replaced.
func (j *Journal) retainText(s string) string {
	if j.keepRaw {
		return s
	}
	return redact.String(s)
}

// retain is what the transcript keeps of a JSON value and its content
// hash: Harn's redact_json of it, canonical (the hash is over exactly
// that), or with KeepRaw the value itself, canonical.
func (j *Journal) retain(raw json.RawMessage) (json.RawMessage, string, error) {
	if len(raw) == 0 {
		raw = json.RawMessage("null")
	}
	redacted, err := redact.JSON(raw)
	if err != nil {
		return nil, "", err
	}
	hash := digest.Bytes(redacted).String()
	if j.keepRaw {
		canonical, err := pjson.Encode(raw)
		return canonical, hash, err
	}
	return redacted, hash, nil
}

// marshalResponse is json.Marshal(r), its text (most of it, as a rule)
// encoded eight bytes at a time: the rest is marshalled with the text
// empty, and the text encoded as encoding/json does put in its place.
func marshalResponse(r Response) ([]byte, error) { return appendResponse(nil, r) }

// appendResponse is marshalResponse appending to dst (in place, when it
// has room).
func appendResponse(dst []byte, r Response) ([]byte, error) {
	text := r.Text
	r.Text = ""
	rest, err := json.Marshal(r)
	const head = `{"text":""`
	if err != nil || !bytes.HasPrefix(rest, []byte(head)) {
		r.Text = text
		return json.Marshal(r)
	}
	b := slices.Grow(dst[:0], len(rest)+len(text)+len(text)/16+2)
	b = append(pjson.AppendStdString(append(b, `{"text":`...), text), rest[len(head):]...)
	// Three IndexByte (vectorised) are much quicker than ContainsAny.
	if strings.IndexByte(text, '<') >= 0 || strings.IndexByte(text, '>') >= 0 || strings.IndexByte(text, '&') >= 0 {
		// encoding/json escapes these too, as HTMLEscape does.
		var h bytes.Buffer
		h.Grow(len(b) + len(b)/8)
		json.HTMLEscape(&h, b)
		b = h.Bytes()
	}
	return b, nil
}

// retainOutcome is retain for an outcome (its encoding/json bytes), but
// the line keeps those bytes as it always had when redaction changes
// nothing in them (when the redacted canonical encoding is the canonical
// one). That is found as the outcome is encoded, once: a string the
// catalog changes, or a credential-like key, whose value is compared the
// long way (it may be the placeholder already).
func (j *Journal) retainOutcome(outcome []byte) ([]byte, string, error) {
	changed, sensitive := false, false
	redacted, err := pjson.EncodeRedacted(outcome, func(s string) string {
		r := redact.String(s)
		changed = changed || r != s
		return r
	}, func(key string) bool {
		if sensitiveKey(key) {
			sensitive = true
			return true
		}
		return false
	})
	if err != nil {
		return nil, "", err
	}
	hash := digest.Bytes(redacted).String()
	switch {
	case j.keepRaw || !changed && !sensitive:
		return outcome, hash, nil
	case changed:
		return redacted, hash, nil
	}
	if canonical, err := pjson.Encode(outcome); err == nil && string(canonical) == string(redacted) {
		return outcome, hash, nil
	}
	return redacted, hash, nil
}

// retainResponse is retainOutcome for a response, outcome its
// marshalResponse bytes, without reading its text (most of it, as a rule)
// back out of them: the rest of the response goes through the canonical
// redacted encoding with its text empty, and the text, redacted and
// escaped as that encoding escapes it, takes the empty text's place. The
// bytes and the hash are retainOutcome's.
func (j *Journal) retainResponse(r Response, outcome []byte) ([]byte, string, error) {
	if len(r.Text) < 4<<10 || sensitiveKey("text") {
		return j.retainOutcome(outcome)
	}
	text := r.Text
	r.Text = ""
	rest, err := json.Marshal(r)
	if err != nil {
		return nil, "", err
	}
	changed, sensitive := false, false
	canon, err := pjson.EncodeRedacted(rest, func(s string) string {
		r := redact.String(s)
		changed = changed || r != s
		return r
	}, func(key string) bool {
		if sensitiveKey(key) {
			sensitive = true
			return true
		}
		return false
	})
	if err != nil {
		return nil, "", err
	}
	// The members are sorted and a quote inside a string is escaped, so
	// the first "text":"" is the response's own member.
	const empty = `"text":""`
	i := bytes.Index(canon, []byte(empty))
	if i < 0 {
		return j.retainOutcome(outcome)
	}
	red := redact.String(text)
	changed = changed || red != text
	var redacted []byte
	if !changed {
		// Only hashed: built in a buffer kept for the next reply.
		buf := hashBuffers.Get().(*[]byte)
		defer func() {
			if cap(redacted) <= maxPooledLine {
				*buf = redacted[:0]
				hashBuffers.Put(buf)
			}
		}()
		redacted = (*buf)[:0]
	}
	redacted = append(redacted, canon[:i+len(`"text":`)]...)
	if q, ok := quotedText(outcome, rest, text); ok && red == text {
		redacted = append(redacted, q...) // the text as outcome quotes it: the same bytes
	} else {
		redacted = pjson.AppendString(redacted, red)
	}
	redacted = append(redacted, canon[i+len(empty):]...)
	hash := digest.Bytes(redacted).String()
	switch {
	case j.keepRaw || !changed && !sensitive:
		return outcome, hash, nil
	case changed:
		return redacted, hash, nil
	}
	if canonical, err := pjson.Encode(outcome); err == nil && string(canonical) == string(redacted) {
		return outcome, hash, nil
	}
	return redacted, hash, nil
}

// hashBuffers are buffers a reply's canonical bytes are built in to be
// hashed, when the line keeps the reply's own bytes instead.
var hashBuffers = sync.Pool{New: func() any { return new([]byte) }}

// quotedText is text quoted as marshalResponse quoted it into outcome,
// rest the marshalled response with its text empty, when that quoting is
// the canonical one: no <, > or & (which encoding/json escapes, and
// marshalResponse with it) and no U+2028 or U+2029 (which it escapes and
// the canonical encoding does not). The text is UTF-8 (Finish refuses a
// response that is not).
func quotedText(outcome, rest []byte, text string) ([]byte, bool) {
	const head = `{"text":""`
	n := len(outcome) - (len(rest) - len(head)) - len(`{"text":`)
	if n < 2 || !bytes.HasPrefix(rest, []byte(head)) || strings.IndexByte(text, '<') >= 0 || strings.IndexByte(text, '>') >= 0 ||
		strings.IndexByte(text, '&') >= 0 || strings.Contains(text, "\u2028") || strings.Contains(text, "\u2029") {
		return nil, false
	}
	return outcome[len(`{"text":`) : len(`{"text":`)+n], true
}

// sensitiveKey reports whether redact.JSON replaces the value of an object
// member named key (Harn's field_is_sensitive), by asking it. A response
// names the same few keys call after call, so short keys' answers are kept.
func sensitiveKey(key string) bool {
	if v, ok := sensitiveKeys.Load(key); ok {
		return v.(bool)
	}
	out, err := redact.JSON([]byte("{" + chain.Quote(key) + ":0}"))
	sensitive := err != nil || !bytes.HasSuffix(out, []byte(":0}"))
	if len(key) <= 64 && sensitiveKeysKept.Add(1) <= 4096 {
		sensitiveKeys.Store(key, sensitive)
	}
	return sensitive
}

// sensitiveKeys is sensitiveKey's answers, up to 4,096 keys of at most 64
// bytes, so that hostile responses with ever new keys cannot grow it.
var (
	sensitiveKeys     sync.Map
	sensitiveKeysKept atomic.Int64
)

// errNoPending is a Finish or Attempt on a Pending that Begin did not
// return (a zero Pending, or nil).
var errNoPending = errors.New("journal: the call was not begun (a Pending comes from Journal.Begin)")

// errNoJournal is a call on a nil *Journal.
func errNoJournal(call string) error {
	return fmt.Errorf("journal: call %s: no journal (make it with Open, New or NewSink)", call)
}

// usable says why the journal takes no call, or nil. j.mu is held.
func (j *Journal) usable(call string) error {
	switch {
	case j.sink == nil:
		return fmt.Errorf("journal: call %s: the journal has nowhere to write (make it with Open, New or NewSink)", call)
	case j.closed:
		return fmt.Errorf("call %s: %w", call, ErrClosed)
	}
	return nil
}

// restart forgets the session's lines after the sink's chain was cut back
// to t: the next lines open the session again, under the id it was given
// when what is left of the chain does not open it, else under a fresh one
// (claimSession), so no id is opened twice in one chain. A sink that
// cannot tell which ids its chain opens, cut to a part (the session's
// journal_open may be in it), gets the id with "~N" after it for its N-th
// cut. Calls begun before cannot record their outcome (their request is
// gone). j.mu is held.
func (j *Journal) restart(t Tail) {
	j.opened, j.calls = false, 0
	j.epoch++
	j.session = j.named
	if t.sessions == nil && t.Seq > 0 {
		j.session = j.named + "~" + strconv.Itoa(j.epoch)
	}
	clear(j.last)
	j.segs.reset()
	j.redacted.mu.Lock()
	j.redacted.last = nil
	j.redacted.mu.Unlock()
	j.cp.reset()
}

// Sync returns once the call's request lines are on stable storage, or
// the error that kept them off it. Begin returns as soon as they are
// written, before a file's fsync ends, so that the request can travel
// while they are synced: a process that dies after Begin keeps them, a
// machine that loses power within that fsync may not. A harness calls Sync
// before it acts on the answer (package transport does, before the caller
// sees the response) or, to hold the stronger line, before it sends.
// Finish and Attempt sync what they write, and these lines with it;
// with Options.DeferOutcomeSync, Finish returns once its lines are written,
// and Sync after it waits for them (and all before them) to be synced.
func (p *Pending) Sync() error {
	if p == nil || p.j == nil {
		return errNoPending
	}
	p.j.mu.Lock()
	synced := p.synced
	p.j.mu.Unlock()
	if synced == nil {
		return nil
	}
	return synced()
}

// Attempt records a failed attempt of the call (an HTTP status, a
// transport error), when the call is retried as one logical call: the
// outcome Finish records is the last attempt's.
func (p *Pending) Attempt(ctx context.Context, status int, err error) error {
	if p == nil || p.j == nil {
		return errNoPending
	}
	if ctx == nil {
		ctx = context.Background()
	}
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if limit := min(maxAttemptMessage, p.j.maxLine/8); len(msg) > limit {
		// An attempt's failure is for a reader to see why it was
		// retried; a reply body quoted in it whole could outgrow a line
		// (an eighth of one leaves room for any escaping).
		msg = fmt.Sprintf("%s… (%d bytes in all)", strings.ToValidUTF8(msg[:limit], ""), len(msg))
	}
	rec, _ := json.Marshal(struct {
		Status  int    `json:"status,omitempty"`
		Message string `json:"message,omitempty"`
	}{status, redact.String(strings.ToValidUTF8(msg, "\uFFFD"))})
	p.j.mu.Lock()
	defer p.j.mu.Unlock()
	if p.done {
		return fmt.Errorf("journal: call %s: an attempt after the outcome", p.call)
	}
	p.attempts++
	return p.append(ctx, chain.KindAttempt, "attempt", strconv.Itoa(p.attempts), "failure", string(rec))
}

// Finish records the call's outcome: the response, or callErr (recorded
// as its message, redacted, its bytes that are not UTF-8 as U+FFFD: the
// error itself is the caller's). It is to be called once; a later call is
// an error. It returns once the outcome's lines are on stable storage, or
// with Options.DeferOutcomeSync once they are written (Sync then waits
// for them).
//
// A response holding a string (or a Body) that is not UTF-8 is refused: a
// JSON line cannot hold those bytes, and writing them as U+FFFD would
// record a reply other than the one the harness acts on ("caf\uFFFD" for
// "caf\xc3", a reply cut inside a character). The call is recorded as a
// provider_call_error naming the field and byte, and Finish returns that
// error, so the harness does not act on a reply the transcript does not
// hold. Refusing keeps the format as it is: a reader in any language reads
// a response as the JSON it is.
func (p *Pending) Finish(ctx context.Context, resp Response, callErr error) error {
	if p == nil || p.j == nil {
		return errNoPending
	}
	if ctx == nil {
		ctx = context.Background()
	}
	j := p.j
	kind, field, hashField := chain.KindResponse, "response", "response_content_hash"
	var outcome []byte
	var extra []string
	var refused error
	if callErr == nil {
		if bad := notUTF8(resp); bad != "" {
			refused = fmt.Errorf("journal: call %s: the response's %s is not UTF-8: recorded as a failed call, not as this reply", p.call, bad)
			callErr = refused
		}
	}
	if callErr != nil {
		kind, field, hashField = chain.KindError, "error", "error_content_hash"
		outcome, _ = json.Marshal(callError{Message: redact.String(strings.ToValidUTF8(callErr.Error(), "\uFFFD"))})
	} else {
		var err error
		// The outcome is built in a kept buffer: the line copies it.
		buf := hashBuffers.Get().(*[]byte)
		defer func() {
			if cap(outcome) <= maxPooledLine {
				*buf = outcome[:0]
				hashBuffers.Put(buf)
			}
		}()
		if outcome, err = appendResponse(*buf, resp); err != nil {
			return p.abandon(fmt.Errorf("journal: call %s: response: %w", p.call, err))
		}
		if resp.Body != nil {
			// Read in place, not copied: Finish keeps nothing of it but
			// its quoted (redacted) copy.
			body := unsafe.String(unsafe.SliceData(resp.Body), len(resp.Body))
			if !j.keepRaw {
				body = redact.String(body)
			}
			// Quoted as the line is written (quoteAt).
			extra = []string{"body", body, "body_content_hash", chain.Quote(digest.String(body).String())}
		}
	}
	var written []byte
	var ohash string
	var err error
	if callErr == nil {
		written, ohash, err = j.retainResponse(resp, outcome)
	} else {
		written, ohash, err = j.retainOutcome(outcome)
	}
	if err != nil {
		return p.abandon(fmt.Errorf("journal: call %s: %s: %w", p.call, field, err))
	}
	var synced func() error
	again := false
	err = func() error {
		j.mu.Lock()
		defer j.mu.Unlock()
		if p.done {
			again = true
			return fmt.Errorf("journal: call %s: its outcome is recorded already", p.call)
		}
		p.done = true
		defer j.finished()
		// written is not changed again: the line takes it without a copy.
		fields := append([]string{field, unsafe.String(unsafe.SliceData(written), len(written)), hashField, chain.Quote(ohash)}, extra...)
		quoteAt := -1
		if extra != nil {
			quoteAt = 5 // the body
		}
		var err error
		synced, err = p.appendQuoting(ctx, kind, quoteAt, fields...)
		return err
	}()
	if again {
		return err
	}
	if synced != nil && !j.deferOutcome {
		// The fsync is waited for outside the session's lock: the
		// session's other calls write their lines meanwhile, and share it.
		if serr := synced(); serr != nil {
			err = errors.Join(err, serr)
		}
	}
	if err != nil {
		return errors.Join(refused, err)
	}
	return refused
}

// maxAttemptMessage bounds the failure message an attempt line keeps.
const maxAttemptMessage = 64 << 10

// lineTooLarge is a line the journal will not write: longer than the
// longest line Verify reads (Options.MaxLineBytes). It matches
// promptloom.ErrTooLarge.
type lineTooLarge struct {
	call, what string
	n, limit   int
}

func (e *lineTooLarge) Error() string {
	after := "not recorded, and the call not made"
	if e.what == "request body" {
		return fmt.Sprintf("journal: call %s: its request body would be %d bytes as the transcript keeps it, over the transcript's limit of %d (Options.MaxLineBytes), which Verify would refuse: %s", e.call, e.n, e.limit, after)
	}
	switch e.what {
	case chain.KindResponse, chain.KindError:
		after = "the call is recorded as failed"
	case chain.KindAttempt:
		after = "the attempt is not recorded"
	}
	return fmt.Sprintf("journal: call %s: its %s line would be %d bytes, over the transcript's limit of %d (Options.MaxLineBytes), which Verify would refuse: %s", e.call, e.what, e.n, e.limit, after)
}

func (e *lineTooLarge) Is(t error) bool { return t == promptloom.ErrTooLarge }

// abandon ends a call whose outcome cannot be recorded.
func (p *Pending) abandon(err error) error {
	p.j.mu.Lock()
	defer p.j.mu.Unlock()
	if !p.done {
		p.done = true
		p.j.finished()
	}
	return err
}

// append writes one line about the call, naming its request. j.mu is held.
func (p *Pending) append(ctx context.Context, kind string, fields ...string) error {
	_, err := p.appendQuoting(ctx, kind, -1, fields...)
	return err
}

// appendQuoting is append with fields[q] a text the line quotes (q < 0:
// none). An outcome's line is written and not yet synced when it returns
// (the session's lock is not held through an fsync): synced waits for
// that, and is kept as the call's Sync; nil when nothing was written.
func (p *Pending) appendQuoting(ctx context.Context, kind string, q int, fields ...string) (synced func() error, err error) {
	j := p.j
	if p.epoch != j.epoch {
		return nil, fmt.Errorf("journal: call %s: the transcript was cut back under the journal (a log rotation?) after its request; this line is not recorded", p.call)
	}
	var next *pending  // the session's tree of calls with this one
	var degraded error // the outcome recorded as a failure, its line being too long
	outcome := kind == chain.KindResponse || kind == chain.KindError
	appendLines := j.appendLines
	var later func() error
	if outcome {
		// Written now, synced once the session's lock is let go (Finish),
		// or behind (Options.DeferOutcomeSync): Sync waits for it.
		appendLines = func(ctx context.Context, build func(Tail) (*lineBuilder, error)) (err error) {
			later, err = j.appendLater(ctx, j.deferOutcome, build)
			return err
		}
	}
	err = appendLines(ctx, func(t Tail) (*lineBuilder, error) {
		if t.Fresh {
			j.restart(t)
			return nil, fmt.Errorf("journal: call %s: the transcript was cut back under the journal (a log rotation?) after its request; this line is not recorded", p.call)
		}
		b := newLineBuilder(t, j.clock().Format(time.RFC3339Nano))
		head := []string{"session", chain.Quote(j.session), "call", chain.Quote(p.call),
			"request_seq", strconv.FormatInt(p.Seq, 10), "request_hash", chain.Quote(p.hash)}
		all := append(head, fields...)
		at := q // fields[q] is all[at]
		if at >= 0 {
			at += len(head)
		}
		b.lineQuoting(kind, at, all)
		if b.longest > j.maxLine && at >= 0 {
			// The reply's body (the last fields: body, body_content_hash)
			// would make a line Verify refuses: the line keeps the
			// reply's summary, as for a body too large to keep.
			b.restart(t)
			b.lineQuoting(kind, -1, all[:at-1])
		}
		if b.longest > j.maxLine {
			tooLarge := &lineTooLarge{call: p.call, what: kind, n: b.longest, limit: j.maxLine}
			if !outcome {
				return nil, tooLarge
			}
			// Not even the summary fits: the call is recorded as failed,
			// saying why, so that its request has an outcome that verifies,
			// and the caller is told, as for a reply refused.
			b.restart(t)
			msg, _ := json.Marshal(callError{Message: tooLarge.Error()})
			written, ohash, err := j.retainOutcome(msg)
			if err != nil {
				return nil, err
			}
			b.line(chain.KindError, append(head, "error", string(written), "error_content_hash", chain.Quote(ohash))...)
			degraded = tooLarge
		}
		if outcome {
			var err error
			if next, err = j.cp.outcome(ctx, b, j.session, p.hash); err != nil {
				return nil, err
			}
		}
		return b, nil
	})
	j.cp.commit(next, err == nil)
	if err != nil {
		return nil, err
	}
	if later != nil {
		p.synced = later
	}
	return later, degraded
}

// finished counts a call done, and ends the session when the journal was
// closed meanwhile and this was the last call. j.mu is held.
func (j *Journal) finished() {
	if j.running--; j.closed && j.running == 0 {
		j.end()
	}
}

// Close ends the journal's session with a journal_close line counting its
// calls (when it wrote any), then closes the sink. Calls begun after Close
// are ErrClosed. A call begun before still records its outcome, and the
// session's close follows it: Close does not wait for it (so a model may
// close its own journal), and the last such call ends the session; a
// Close after that returns the error of ending it, if any, as a second
// Close does.
func (j *Journal) Close() error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.ended {
		return j.endErr
	}
	if j.closed || j.sink == nil {
		j.closed = true
		return nil
	}
	j.closed = true
	if j.running > 0 {
		return nil
	}
	return j.end()
}

// end writes journal_close and closes the sink, even when writing panics
// (a Clock's, a Signer's, a Sink's panic). j.mu is held.
func (j *Journal) end() (err error) {
	if j.ended {
		return nil
	}
	j.ended = true
	defer func() {
		if cerr := j.sink.Close(); err == nil {
			err = cerr
		}
		j.endErr = err
	}()
	if j.opened {
		var closing *tiles.Log
		err = j.appendLines(context.Background(), func(t Tail) (*lineBuilder, error) {
			if t.Fresh {
				return nil, nil // a new file: this session has no line in it
			}
			b := newLineBuilder(t, j.clock().Format(time.RFC3339Nano))
			b.line(chain.KindClose, "session", chain.Quote(j.session), "calls", strconv.Itoa(j.calls))
			cp, err := j.cp.close(context.Background(), b, j.session)
			if err != nil {
				return nil, err
			}
			closing = cp
			return b, nil
		})
		if err == nil && closing != nil {
			j.cp.last = *closing
		}
	}
	if j.cp != nil && err == nil && len(j.cp.errs) > 0 {
		// One line, each failure after a semicolon; errors.Is finds each.
		args := make([]any, len(j.cp.errs))
		for i, e := range j.cp.errs {
			args[i] = e
		}
		err = fmt.Errorf(strings.TrimSuffix(strings.Repeat("%w; ", len(args)), "; "), args...)
	}
	return err
}

// appendLines appends the lines build makes (none when it returns nil) to
// the journal's sink; a sink of this package takes the chain's tail after
// them from the builder, which hashed each line as it built it.
func (j *Journal) appendLines(ctx context.Context, build func(Tail) (*lineBuilder, error)) error {
	build = j.settling(build)
	if s, ok := j.sink.(builderSink); ok {
		bt, release := builtLines(build)
		defer release()
		return s.appendBuilt(ctx, bt)
	}
	return j.sink.Append(ctx, func(t Tail) ([]byte, error) {
		b, err := build(t)
		if err != nil || b == nil {
			return nil, err
		}
		return b.Bytes(), nil
	})
}

// appendLater is appendLines returning, where the sink can, once the lines
// are written and before they are on stable storage; synced waits for that.
// lazy leaves their fsync to the sink's next one (a file's appendLater).
func (j *Journal) appendLater(ctx context.Context, lazy bool, build func(Tail) (*lineBuilder, error)) (synced func() error, err error) {
	build = j.settling(build)
	if s, ok := j.sink.(laterSink); ok {
		bt, release := builtLines(build)
		defer release()
		return s.appendLater(ctx, bt, lazy)
	}
	return func() error { return nil }, j.appendLines(ctx, build)
}

// settling is build, first settling (from the chain's tail) whether a
// body's segments whose append failed were written after all. j.mu is
// held.
func (j *Journal) settling(build func(Tail) (*lineBuilder, error)) func(Tail) (*lineBuilder, error) {
	return func(t Tail) (*lineBuilder, error) {
		j.segs.settle(t)
		return build(t)
	}
}

// builtLines is a line builder's build as a sink of this package takes
// it, and release, which gives the builder's buffer back for the next
// lines once that sink is done with them (it keeps nothing of them; a
// Sink of another package may, so its lines are never reused).
func builtLines(build func(Tail) (*lineBuilder, error)) (bt func(Tail) ([]byte, *Tail, error), release func()) {
	var last *lineBuilder
	bt = func(t Tail) ([]byte, *Tail, error) {
		b, err := build(t)
		if err != nil || b == nil {
			return nil, nil, err
		}
		last = b
		return b.Bytes(), &b.t, nil
	}
	release = func() {
		if last != nil && last.Cap() <= maxPooledLine {
			last.Reset()
			lineBuilders.Put(last)
		}
	}
	return bt, release
}

// lineBuilders are builders whose buffers lines are built in, kept from
// one append to the next: a reply's line is most of what a call
// allocates. A buffer grown past maxPooledLine is left to the collector.
var lineBuilders = sync.Pool{New: func() any { return new(lineBuilder) }}

const maxPooledLine = 16 << 20

// newLineBuilder is a builder for lines after t, stamped at.
func newLineBuilder(t Tail, at string) *lineBuilder {
	b := lineBuilders.Get().(*lineBuilder)
	b.at = at
	b.restart(t)
	return b
}

// restart empties b for lines after t.
func (b *lineBuilder) restart(t Tail) {
	b.Reset()
	b.t, b.longest, b.longestKind = t, 0, ""
}

// lineBuilder builds a group of lines, chaining each to the one before.
type lineBuilder struct {
	bytes.Buffer
	t           Tail
	at          string
	longest     int    // the longest line built, its newline not counted
	longestKind string // and its kind
}

// line appends one line: prev, seq, kind, at, then fields (name, raw JSON
// pairs), and moves the chain on.
func (b *lineBuilder) line(kind string, fields ...string) { b.lineQuoting(kind, -1, fields) }

// lineQuoting is line with fields[q] a text to quote, not raw JSON: it is
// quoted straight into the line (a long body is not quoted into a copy of
// its own first). q < 0 quotes nothing.
func (b *lineBuilder) lineQuoting(kind string, q int, fields []string) {
	start := b.Len()
	n := 128 // the line's size, to grow the buffer once
	for i, f := range fields {
		n += len(f) + 4
		if i == q {
			n += len(f)/16 + 2
		}
	}
	b.Grow(n)
	b.t.Seq++
	fmt.Fprintf(b, `{"prev":%s,"seq":%d,"kind":%s,"at":%s`, chain.Quote(b.t.Prev), b.t.Seq, chain.Quote(kind), chain.Quote(b.at))
	for i := 0; i < len(fields); i += 2 {
		b.WriteByte(',')
		b.WriteString(chain.Quote(fields[i]))
		b.WriteByte(':')
		if i+1 == q {
			b.Write(pjson.AppendString(b.AvailableBuffer(), fields[i+1]))
			continue
		}
		b.WriteString(fields[i+1])
	}
	b.WriteByte('}')
	b.t.Prev = digest.Bytes(b.Bytes()[start:]).String()
	if n := b.Len() - start; n > b.longest {
		b.longest, b.longestKind = n, kind
	}
	b.WriteByte('\n')
}
