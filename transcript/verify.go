package transcript

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"
	"unsafe"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/internal/chain"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/payload"

	"golang.org/x/mod/sumdb/note"
)

// Verify checks a transcript, reading it a line at a time (no line longer
// than o.MaxLineBytes: past it, Verify stops with an error matching
// promptloom.ErrTooLarge).
//
// The first line decides the format. A line with "kind" starts a
// promptloom transcript: every line must then carry "prev", the hash of the
// line before (chain.Genesis first), and "seq", one more than the line before;
// every kind must be known; sessions must open and close; each request's
// receipts must resolve to retained lines whose bytes re-derive them (see
// checkReceipts), and its outcome line must name it by seq and hash and
// hash to its own receipt. A line with "type" starts a Harn transcript,
// which has no chain: each provider_call_request's receipts are checked,
// and other event types are skipped. No line of either may repeat a JSON
// key. A transcript with no call checked fails.
//
// A proof of one call (Prove) is not a transcript: Verify fails it on its
// first line, and CheckProof checks it.
func Verify(r io.Reader, o *Options) (*Report, error) {
	if chain.IsNil(r) {
		return &Report{}, errors.New("transcript: Verify: no reader")
	}
	return NewVerifier(o).v.read1(r)
}

// newVerifier is a verifier holding checkpoints to key (none: nil).
func newVerifier(key note.Verifier) *verifier {
	return &verifier{rep: &Report{}, systems: map[string]retained{}, manifests: map[string]retained{},
		schemas: map[string]retained{}, messages: map[string]retained{}, sessions: map[string]*session{},
		pending: map[int64]pendingRequest{}, reads: map[int]manifestRead{}, sysHashed: map[int]sysCheck{}, rederived: map[int]bool{}, holds: map[holdKey]holdVerdict{},
		texts: map[string]string{}, answered: map[int64]uint64{},
		prev: chain.Genesis,
		ck:   checkpoints{key: key}}
}

// configure holds v to o: its witnesses, its longest line, the calls its
// report lists.
func (v *verifier) configure(o *Options) *verifier {
	if o != nil && v.rep.Format != formatProof {
		v.ck.cosigners, v.ck.quorum = o.Cosigners, o.Quorum
	}
	if o != nil && o.KeepCalls > 0 {
		v.keep = o.KeepCalls
	}
	v.maxLine = o.maxLine()
	v.rep.maxLine = v.maxLine
	return v
}

// read judges r a line at a time (no line longer than o.MaxLineBytes),
// then the whole.
func (v *verifier) read(r io.Reader, o *Options) (*Report, error) {
	v.configure(o)
	return v.read1(r)
}

// read1 is read, v configured.
func (v *verifier) read1(r io.Reader) (*Report, error) {
	lr := newLineReader(r, v.maxLine)
	for {
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			v.finish(err)
			return v.rep, err
		}
		if lr.torn && v.rep.Format == formatPromptloom {
			v.tornLine(lr.n, len(line))
			break
		}
		v.line(lr.n, unsafe.Slice(unsafe.StringData(line), len(line)), line, lr.torn)
	}
	v.finish(nil)
	return v.rep, nil
}

// tornLine notes line n, of size bytes and no newline, as not read: a
// promptloom writer's line, written in one append, is whole only with its
// newline, so this one is still being written (or the file was cut
// there), and the transcript is verified through the line before. (A Harn
// writer promises no such thing: its last line is read.)
func (v *verifier) tornLine(n, size int) {
	v.rep.pend(RuleTornLine, n, "line %d is not whole yet (%d bytes, no final newline): a line still being written, not read; a finished transcript cut there fails verify --closed", n, size)
	v.unfinished++
}

// retained is a line holding bytes a receipt names: a system prompt, a
// manifest, tool schemas or a served message.
type retained struct {
	line int
	raw  string // the content (system prompt) or the value's exact bytes
	// hashed says raw hashes to the hash it is retained under, as checked
	// where its line was read (a promptloom context_manifest's).
	hashed bool
}

type session struct {
	line, calls int
	closed      bool
	follows     string // the session its journal_open says it continues
}

// pendingRequest is a request not answered yet.
type pendingRequest struct {
	call          int    // its index among the calls read (v.call)
	hash, session string // its line's chain hash, and its session
}

type verifier struct {
	rep                                   *Report
	systems, manifests, schemas, messages map[string]retained
	sessions                              map[string]*session
	pending                               map[int64]pendingRequest // by request seq
	answered                              map[int64]uint64         // the requests answered, by seq: a bit each, 64 seqs an entry
	reads                                 map[int]manifestRead     // by manifest line
	sysHashed                             map[int]sysCheck         // by system_prompt line
	rederived                             map[int]bool             // by tool_schemas or served_message line
	holds                                 map[holdKey]holdVerdict
	// texts holds each distinct reply text once (intern).
	texts     map[string]string
	prev, cur string // the chain hashes of the last line and this one
	// seq is the seq the last line gave (counted on from there when it
	// was not the next), count the lines read: a checkpoint signs a count.
	seq, count int64
	// Checkpoints, the call to prove (Prove), the proof being read
	// (CheckProof), and this line's bytes.
	ck checkpoints
	// unfinished counts the problems that say only that a run is not
	// finished (a session not closed, lines after the last checkpoint),
	// which a run still being written has (holdsSoFar).
	unfinished int
	pf         *prover
	proof      *proofCheck
	raw        []byte
	// The bodies kept as segments, session by session (made with the
	// first), and the longest line read: the longest body rebuilt.
	bodies  *bodies
	maxLine int
	// keep is Options.KeepCalls; base is how many calls were read before
	// rep.Calls[0], and early the calls among them still waiting for
	// their outcome (by index), which the report lists first.
	keep, base int
	early      map[int]*CallReport
	// This line's members, its served context's and its request's, room
	// reused line after line.
	obj, served, req, resp object
}

// object is a line's members (or its served context's): each found once,
// as internal/json checked the line, each value read only when asked for.
type object struct {
	value
	m pjson.Members
}

// index finds r's members, in the room o had.
func (o *object) index(r value) *object {
	o.value = r
	if r.IsObject() {
		o.m.Index(r.Raw)
	} else {
		o.m.Index("")
	}
	return o
}

// Get is the value at a path of plain member names: its first name found
// among the members, the rest read inside that member.
func (o *object) Get(path string) value {
	key, rest, nested := strings.Cut(path, ".")
	raw, ok := o.m.Lookup(key)
	if !ok {
		return value{}
	}
	if nested {
		return parse(raw).Get(rest)
	}
	return parse(raw)
}

// getter reads a JSON object's members: a value, or an object.
type getter interface {
	Get(path string) value
}

// line judges one line: its bytes (read only: they are text's) and text.
func (v *verifier) line(n int, line []byte, text string, torn bool) {
	v.rep.Lines = n
	v.cur, v.raw = chain.LineHash(line), line
	defer func() { v.prev = v.cur }()
	if blank(line) {
		// Harn skips blank lines; in a promptloom transcript every line is
		// chained, and a blank one (before the first line too: the next
		// line's prev then fails) is a problem.
		if v.rep.Format == formatPromptloom {
			v.rep.broke(RuleWhitespace, n, "line %d: blank line", n)
		}
		return
	}
	if torn {
		v.rep.broke(RuleTornLine, n, "line %d: no final newline (torn by a crash, or cut)", n)
	}
	if msg := unreadableIn(line, &v.obj.m); msg != "" {
		v.rep.broke(RuleUnreadable, n, "line %d: %s", n, msg)
		return
	}
	l := parse(text) // what is kept of the line shares its bytes
	if !l.IsObject() {
		v.rep.broke(RuleUnreadable, n, "line %d: not a JSON object", n)
		return
	}
	o := &v.obj // its members found as the line was checked
	o.value = l
	if v.rep.Format == "" {
		switch {
		case o.Get("kind").Exists():
			v.rep.Format = formatPromptloom
		case o.Get("type").Exists():
			v.rep.Format = formatHarn
		case o.Get("proof").Exists():
			v.rep.broke(RuleProofAsTranscript, n, "line %d: a proof of one call, not a transcript: check it as a proof (verify --proof, transcript.CheckProof)", n)
			return
		default:
			v.rep.broke(RuleFormat, n, "line %d: unknown format: neither a promptloom line (\"kind\") nor a Harn event (\"type\")", n)
			return
		}
	}
	if v.rep.Format == formatHarn {
		v.harnLine(n, l)
		return
	}
	if v.rep.Format == formatProof {
		v.proofLine(n, line, l)
		return
	}
	if line[0] != '{' || line[len(line)-1] != '}' {
		// The writer never puts white space around a line, and the chain
		// hashes every byte: say why the chain breaks, and catch it on the
		// last line too, which no later prev covers.
		what := "white space around the JSON object"
		if line[len(line)-1] == '\r' {
			what = "a carriage return before the newline (CRLF line endings)"
		}
		v.rep.broke(RuleWhitespace, n, "line %d: %s: a promptloom line is the object's bytes and nothing else", n, what)
	}
	v.promptloomLine(n, o)
}

// unreadable says why a line is not one JSON text every reader reads alike,
// or "" when it is: it must be UTF-8 (readers replace bad bytes, or fail,
// each their own way), valid JSON, with no key twice in one object and no
// \u escape of half a surrogate pair.
func unreadable(line []byte) string { return unreadableIn(line, new(pjson.Members)) }

// unreadableIn is unreadable, finding the line's members into m on the
// way: the one reading of the line.
func unreadableIn(line []byte, m *pjson.Members) string {
	if bytes.HasPrefix(line, []byte("\xef\xbb\xbf")) {
		return "starts with a byte order mark (U+FEFF): not JSON"
	}
	// The JSON reader is iterative (gjson's validator recurses, and deep
	// nesting overflows the stack) and refuses what readers disagree on.
	var bad *pjson.Error
	switch err := m.Check(line, nil); {
	case err == nil:
		return ""
	case !errors.As(err, &bad):
	case errors.Is(err, pjson.ErrInvalidUTF8):
		return fmt.Sprintf("not UTF-8 (byte %d)", bad.Offset)
	case errors.Is(err, pjson.ErrDuplicateKey):
		return "duplicate JSON key " + bad.Path
	case errors.Is(err, pjson.ErrLoneSurrogate):
		return "a \\u escape of half a UTF-16 surrogate pair, which readers decode differently"
	case errors.Is(err, pjson.ErrRange):
		return fmt.Sprintf("not JSON every reader reads alike: a number past the range of a double (byte %d)", bad.Offset)
	case bad.Detail != "":
		// The reader's own words: a nesting past its depth says so, where
		// "not JSON" alone would send a reader looking for a typo.
		return fmt.Sprintf("not JSON: %s (byte %d)", bad.Detail, bad.Offset)
	}
	return "not JSON"
}

func (v *verifier) promptloomLine(n int, l *object) {
	if p := l.Get("prev"); p.Type != jString {
		v.rep.broke(RuleChain, n, "line %d: chain broken: no prev", n)
	} else if p.Str != v.prev {
		v.rep.broke(RuleChain, n, "line %d: chain broken: prev is %s, but line %d hashes to %s", n, p.Str, n-1, v.prev)
	}
	v.count++
	switch s, ok := intField(l.Get("seq")); {
	case !ok && !l.Get("seq").Exists():
		v.rep.broke(RuleSeq, n, "line %d: no seq, want %d", n, v.seq+1)
		v.seq++
	case !ok:
		v.rep.broke(RuleSeq, n, "line %d: seq %s, want %d", n, l.Get("seq").Raw, v.seq+1)
		v.seq++
	case s != v.seq+1:
		// Counted on from the line's own seq: a line cut out or repeated
		// is one problem where it happened, not one at every line after.
		v.rep.broke(RuleSeq, n, "line %d: seq %d, want %d", n, s, v.seq+1)
		v.seq = s
	default:
		v.seq++
	}
	if at := l.Get("at"); at.Type != jString || !validTime(at.Str) {
		v.rep.broke(RuleAt, n, "line %d: at %s is not an RFC 3339 time", n, orRawNull(at.Raw))
	}
	kind := l.Get("kind")
	if kind.Type != jString {
		v.rep.broke(RuleKind, n, "line %d: kind %s is not a string", n, orRawNull(kind.Raw))
		return
	}
	sess, sessOK := stringField(l, "session")
	if sessOK {
		v.ck.touch(sess, n)
	}
	switch kind.Str {
	case chain.KindOpen:
		if _, dup := v.sessions[sess]; dup || !sessOK || sess == "" {
			rule := RuleSessionReopened
			if !sessOK || sess == "" {
				rule = RuleSessionID
			}
			v.rep.broke(rule, n, "line %d: session %s opened twice, or without an id", n, orRawNull(l.Get("session").Raw))
			return
		}
		v.sessions[strings.Clone(sess)] = &session{line: n, follows: v.follows(n, l, sess)}
		v.ck.session(sess).open = v.cur
	case chain.KindClose:
		s, ok := v.sessions[sess]
		calls, countOK := intField(l.Get("calls"))
		switch {
		case !ok || !sessOK || s.closed:
			v.rep.broke(RuleSessionNotOpen, n, "line %d: journal_close of session %s, which is not open", n, orRawNull(l.Get("session").Raw))
		case !countOK || calls != int64(s.calls):
			v.rep.broke(RuleCloseCount, n, "line %d: session %q closes with %s call(s), but %d are in the transcript", n, sess, orRawNull(l.Get("calls").Raw), s.calls)
		}
		if ok && !s.closed {
			s.closed = true
			// A request of a closed session fails whatever its body, so
			// the pieces its bodies were made of are let go.
			if v.bodies != nil {
				delete(v.bodies.sessions, sess)
			}
		}
	case chain.KindSystemPrompt:
		content, okC := stringField(l, "content")
		hash, okH := stringField(l, "content_hash")
		// Hashed here once: a receipt that cites this line reads the verdict.
		switch {
		case !okC:
			v.rep.broke(RuleContentHash, n, "line %d: the system_prompt has no content string", n)
		case !okH:
			v.rep.broke(RuleContentHash, n, "line %d: the system_prompt has no content_hash string", n)
		case !v.systemHashes(retained{line: n, raw: content}, hash):
			v.rep.broke(RuleContentHash, n, "line %d: the system_prompt's content hashes to %s, but its content_hash is %s", n, digest.Of(content), hash)
		}
		v.retainSystem(n, hash, content)
	case chain.KindContextManifest:
		hash, okH := stringField(l, "content_hash")
		raw := l.Get("manifest").Raw
		got := digest.String(raw).String()
		if !okH || got != hash {
			said := hash
			if !okH {
				said = orRawNull(l.Get("content_hash").Raw)
			}
			v.rep.broke(RuleContentHash, n, "line %d: the context_manifest's manifest hashes to %s, but its content_hash is %s", n, got, said)
		}
		// Hashed here once: a receipt that cites this line reads the verdict.
		v.manifests[strings.Clone(hash)] = retained{line: n, raw: raw, hashed: okH && got == hash}
	case chain.KindRequest:
		// What the report keeps of the line is copied out of it: a
		// substring would keep the whole line, its request body too, alive
		// as long as the report.
		call, _ := stringField(l, "call")
		call, sess = strings.Clone(call), strings.Clone(sess)
		seq, _ := intField(l.Get("seq"))
		c := CallReport{Line: n, Seq: seq, Call: call, Status: incomplete,
			Problem: &manifest.RuleError{Rule: RuleUnanswered, Line: n, Offset: -1, Detail: "no provider_call_response or provider_call_error answers it"}}
		if sc := l.Get("served_context"); sc.Exists() && sc.Type == jNull {
			// A call made without a manifest (Request.Unattributed): no
			// receipt to check, only its body and its digest.
			c.Unattributed = true
			v.rep.Unattributed++
			if p := v.unattributedBody(sess); p != nil {
				c.Status, c.Problem = failed, p
			}
		} else if err := v.checkReceipts(l, false, &c); err != nil {
			c.Status, c.Problem = failed, err
		} else if p := v.receivedBody(sess, l.Get("request").Raw); p != nil {
			c.Status, c.Problem = failed, p
		}
		if _, ok := stringField(l, "call"); !ok && c.Status != failed {
			c.Status, c.Problem = failed, callFailed(RuleRequest, "call %s is not a string", orRawNull(l.Get("call").Raw))
		}
		if s, ok := v.sessions[sess]; !ok || !sessOK || s.closed {
			c.Status, c.Problem = failed, &manifest.RuleError{Rule: RuleSessionNotOpen, Offset: -1,
				Detail: fmt.Sprintf("session %s is not open at this line", orRawNull(l.Get("session").Raw))}
		} else {
			s.calls++
		}
		v.pending[c.Seq] = pendingRequest{call: v.base + len(v.rep.Calls), hash: v.cur, session: sess}
		v.proveRequest(n, call, sess, seq)
		v.addCall(c)
	case chain.KindResponse, chain.KindError:
		v.outcome(n, l)
	case chain.KindAttempt:
		v.attempt(n, l)
	case chain.KindCheckpoint:
		v.checkpoint(n, l, sess, sessOK)
	case chain.KindRefused:
		v.refused(n, l, sess, sessOK)
	default:
		v.rep.broke(RuleKind, n, "line %d: unknown kind %s", n, kind.Raw)
	}
}

// follows checks a journal_open's follows, the session it continues
// (Options.Follows), and returns it ("" when none): a non-empty string,
// not its own session, and when the transcript opens that session, closed
// before this line. A session of another chain (a store keeps one a
// session) is named, not checked.
func (v *verifier) follows(n int, l *object, sess string) string {
	f := l.Get("follows")
	if !f.Exists() {
		return ""
	}
	prev, known := v.sessions[f.Str]
	switch {
	case f.Type != jString || f.Str == "" || f.Str == sess:
		v.rep.broke(RuleFollows, n, "line %d: session %q follows %s, which is not another session's id", n, sess, orRawNull(f.Raw))
	case known && !prev.closed:
		v.rep.broke(RuleFollows, n, "line %d: session %q follows session %q (line %d), which is not closed at this line", n, sess, f.Str, prev.line)
	default:
		return strings.Clone(f.Str)
	}
	return ""
}

// refused checks a provider_call_refused line, a request refused rather
// than made, and lists it (Report.Refused).
func (v *verifier) refused(n int, l *object, sess string, sessOK bool) {
	r, p := refusalOf(l) // as Decode reads it
	reason, msg, size, hash, call := r.Reason, r.Message, r.BodyBytes, r.BodyContentHash, r.Call
	switch {
	case p != nil:
		v.rep.broke(p.Rule, n, "line %d: %s", n, p.Detail)
	default:
		if s, ok := v.sessions[sess]; !ok || !sessOK || s.closed {
			v.rep.broke(RuleSessionNotOpen, n, "line %d: a refusal of session %s, which is not open at this line", n, orRawNull(l.Get("session").Raw))
			return
		}
		if len(msg) > maxRefusalMessage {
			msg = strings.ToValidUTF8(msg[:maxRefusalMessage], "") + "…"
		}
		v.rep.Refused = append(v.rep.Refused, Refusal{Line: n, Session: strings.Clone(sess), Call: strings.Clone(call),
			Reason: v.intern(reason), Message: v.intern(msg), BodyBytes: size, BodyContentHash: strings.Clone(hash)})
		if v.keep > 0 && len(v.rep.Refused) >= 2*v.keep {
			v.letGoRefused()
		}
	}
}

// maxRefusalMessage bounds the message a report keeps of a refusal.
const maxRefusalMessage = 4 << 10

// intern is s held apart from the line it was read from, one copy for
// each distinct s: a transcript that repeats a reply holds it once.
func (v *verifier) intern(s string) string {
	if s == "" {
		return ""
	}
	if v.keep > 0 {
		// A report that lets calls go keeps no text for them.
		return strings.Clone(s)
	}
	if k, ok := v.texts[s]; ok {
		return k
	}
	s = strings.Clone(s)
	v.texts[s] = s
	return s
}

// retainSystem retains a system prompt line's content under its hash. The
// same content retained again (a session opened anew writes it again)
// keeps the bytes held already, so the later line is let go once read.
func (v *verifier) retainSystem(n int, hash, content string) {
	if old, ok := v.systems[hash]; ok && old.raw == content {
		content = old.raw
	}
	v.systems[strings.Clone(hash)] = retained{line: n, raw: content}
}

// stringField reads a field that must be a JSON string.
func stringField(l getter, field string) (string, bool) {
	r := l.Get(field)
	return r.Str, r.Type == jString
}

func validTime(s string) bool {
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

// outcome checks a response or error line against its request.
func (v *verifier) outcome(n int, l *object) {
	rs, ok := intField(l.Get("request_seq"))
	p, pending := v.pending[rs]
	if !ok || !pending {
		v.unknownRequest(n, l, rs, ok)
		return
	}
	delete(v.pending, rs)
	v.answered[rs>>6] |= 1 << (rs & 63)
	v.proveOutcome(p.session, rs)
	v.ck.leaf(p.session, p.hash, v.cur)
	c := v.call(p.call)
	defer v.settled(p.call)
	c.OutcomeLine = n
	field, hashField := "response", "response_content_hash"
	if l.Get("kind").Str == chain.KindError {
		field, hashField = "error", "error_content_hash"
	}
	call, callOK := stringField(l, "call")
	sess, sessOK := stringField(l, "session")
	problem, rule := "", RuleOutcome
	switch {
	case !callOK || call != c.Call:
		problem = fmt.Sprintf("the %s at line %d names call %s", field, n, orRawNull(l.Get("call").Raw))
	case !sessOK || sess != p.session:
		problem = fmt.Sprintf("the %s at line %d names session %s, but the request is in session %q", field, n, orRawNull(l.Get("session").Raw), p.session)
	case l.Get("request_hash").Type != jString || l.Get("request_hash").Str != p.hash:
		problem = fmt.Sprintf("the %s at line %d names request hash %s, but the request hashes to %s", field, n, orRawNull(l.Get("request_hash").Raw), p.hash)
	default:
		want := l.Get(hashField)
		raw := orRawNull(l.Get(field).Raw)
		body := l.Get("body")
		hasBody := body.Exists()
		switch {
		case want.Type != jString || !rederives(raw, want.Str):
			got, _ := chain.JSONHash([]byte(raw))
			rule = RuleOutcomeContentHash
			problem = fmt.Sprintf("the %s at line %d does not hash to its %s (it hashes to %s)", field, n, hashField, got)
		case hasBody && (body.Type != jString || l.Get("body_content_hash").Str != digest.String(body.Str).String()):
			rule = RuleOutcomeContentHash
			problem = fmt.Sprintf("the body at line %d does not hash to its body_content_hash (it hashes to %s)", n, digest.String(body.Str))
		}
	}
	if field == "response" {
		r := v.resp.index(l.Get("response")) // its members found once, not once a field
		c.Outcome = v.intern(r.Get("text").String())
		c.Usage = usageOf(r.Get("usage"))
		r.Get("tool_calls").ForEach(func(_, t value) bool {
			tc := payload.ToolCall{ID: strings.Clone(t.Get("id").String()), Name: strings.Clone(t.Get("name").String())}
			tc.ArgumentsHash, _ = digest.Parse(t.Get("arguments_hash").String())
			c.ToolCalls = append(c.ToolCalls, tc)
			return true
		})
	} else {
		c.Outcome = "error: " + l.Get("error.message").String()
	}
	if c.Status == failed {
		return
	}
	if problem != "" {
		c.Status, c.Problem = failed, callFailed(rule, "%s", problem)
		return
	}
	c.Status, c.Problem = verified, nil
}

// unknownRequest reports an outcome or attempt line whose request_seq
// (rs, when ok) names no request waiting for its outcome.
func (v *verifier) unknownRequest(n int, l *object, rs int64, ok bool) {
	rule := RuleOutcome
	if ok && v.answered[rs>>6]&(1<<(rs&63)) != 0 {
		rule = RuleAnsweredTwice
	}
	v.rep.broke(rule, n, "line %d: %s names request seq %s, which no earlier request has, or which is answered already", n, l.Get("kind").Str, orRawNull(l.Get("request_seq").Raw))
}

// attempt checks a failed attempt's line against its request, which stays
// open for its outcome.
func (v *verifier) attempt(n int, l *object) {
	rs, ok := intField(l.Get("request_seq"))
	p, pending := v.pending[rs]
	if !ok || !pending {
		v.unknownRequest(n, l, rs, ok)
		return
	}
	c := v.call(p.call)
	call, callOK := stringField(l, "call")
	sess, sessOK := stringField(l, "session")
	problem := ""
	switch {
	case !callOK || call != c.Call:
		problem = fmt.Sprintf("the attempt at line %d names call %s", n, orRawNull(l.Get("call").Raw))
	case !sessOK || sess != p.session:
		problem = fmt.Sprintf("the attempt at line %d names session %s, but the request is in session %q", n, orRawNull(l.Get("session").Raw), p.session)
	case l.Get("request_hash").Str != p.hash:
		problem = fmt.Sprintf("the attempt at line %d names request hash %s, but the request hashes to %s", n, orRawNull(l.Get("request_hash").Raw), p.hash)
	}
	if problem != "" && c.Status != failed {
		c.Status, c.Problem = failed, callFailed(RuleOutcome, "%s", problem)
	}
	c.Attempts++
}

// addCall adds a request's report.
func (v *verifier) addCall(c CallReport) {
	if c.Problem != nil && c.Problem.Line == 0 {
		c.Problem.Line = c.Line
	}
	v.rep.Calls = append(v.rep.Calls, c)
	if v.keep > 0 && len(v.rep.Calls) >= 2*v.keep {
		v.letGo()
	}
}

// holdsSoFar reports whether the transcript holds as a run still being
// written may: no call failed, and no problem but that it is unfinished.
func (v *verifier) holdsSoFar() bool {
	ok, _, failed := v.rep.Counts()
	return ok > 0 && failed == 0 && len(v.rep.Problems) == v.unfinished
}

func (v *verifier) finish(readErr error) {
	r := v.rep
	defer r.listUnlisted()
	if r.Lines == 0 && readErr == nil {
		r.broke(RuleNoCall, 0, "empty transcript: nothing to verify")
		return
	}
	v.finishProof()
	v.finishCheckpoints()
	v.finishProve()
	if r.Format == formatPromptloom {
		r.Head = v.prev
		ids := make([]string, 0, len(v.sessions))
		for id := range v.sessions {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(a, b int) bool { return v.sessions[ids[a]].line < v.sessions[ids[b]].line })
		for _, id := range ids {
			if s := v.sessions[id]; !s.closed {
				r.pend(RuleSessionUnclosed, s.line, "session %s (line %d) is open: %d call(s) so far and no journal_close yet (still being written, or cut short)", id, s.line, s.calls)
				r.Open = append(r.Open, OpenSession{Session: id, Line: s.line, Calls: s.calls, Follows: s.follows})
				v.unfinished++
			}
		}
		// A request of a session still open that nothing answers yet is a
		// call in flight; in a closed session it is a call left
		// unanswered.
		for _, p := range v.pending {
			if s := v.sessions[p.session]; s != nil && !s.closed {
				if c := v.call(p.call); c.Status == incomplete {
					// A new problem, not the old one reworded: a report
					// of a run still being read (Verifier.Report) shares
					// the old with the verifier.
					c.inFlight = true
					c.Problem = &manifest.RuleError{Rule: c.Problem.Rule, Line: c.Problem.Line, Offset: c.Problem.Offset, Detail: "no answer yet: its session is open (a call in flight)"}
				}
			}
		}
	}
	v.listEarly()
	if v, _, _ := r.Counts(); v == 0 && r.Refusals() == 0 {
		r.broke(RuleNoCall, 0, "no call verified: a transcript that proves nothing fails")
	}
	if !r.Holds() && r.Format != formatProof {
		// A signature or a cosignature vouches for a transcript only
		// when all of it holds: said of one that fails, it reads as a
		// pass.
		r.SignedBy, r.SignedThrough, r.CosignedBy = "", 0, nil
	}
}

func orRawNull(raw string) string {
	if raw == "" {
		return "null"
	}
	return raw
}

// usageOf reads a response's usage (nil when there is none).
func usageOf(u value) *payload.Usage {
	if !u.IsObject() {
		return nil
	}
	// The provider's own cache verdict, as the transport recorded it, is
	// cloned out of the line: the report would otherwise keep the whole
	// line (its reply too) alive.
	return &payload.Usage{InputTokens: int(u.Get("input_tokens").Int()), OutputTokens: int(u.Get("output_tokens").Int()),
		CacheReadTokens: int(u.Get("cache_read_tokens").Int()), CacheWriteTokens: int(u.Get("cache_write_tokens").Int()),
		CacheMissReason: strings.Clone(u.Get("cache_miss_reason").String()), CacheMissedTokens: int(u.Get("cache_missed_tokens").Int())}
}

// unattributedBody checks an unattributed request of session sess: its
// body_content_hash, and what it retains of its body against it: the
// body (JSON, rederived as every retained value is), its text, or its
// segments, joined. A writer before bodies were kept retains none, which
// is no breach: the digest still names the call. Segments are read
// first, whatever else is wrong with the line, so that the session's
// pieces are numbered as the writer numbered them.
func (v *verifier) unattributedBody(sess string) *manifest.RuleError {
	req, _ := v.obj.m.Lookup("request")
	m := &v.req.m
	m.Index(req)
	var joined []byte
	var segProblem *manifest.RuleError
	segs, hasSegs := m.Lookup("body_segments")
	if hasSegs {
		if v.bodies == nil {
			v.bodies = newBodies(v.maxLine)
		}
		joined, segProblem = v.bodies.add(sess, segs)
	}
	var recvProblem *manifest.RuleError
	if _, changed := m.Lookup("received"); changed {
		// Its segments are read next, over the buffer joined is in.
		joined = slices.Clone(joined)
		recvProblem = v.receivedBody(sess, req)
	}
	p := v.sentBody(joined, hasSegs, segProblem)
	if p == nil {
		p = recvProblem
	}
	return p
}

// sentBody checks an unattributed request's body sent, as
// unattributedBody read it (v.req.m indexes its request object).
func (v *verifier) sentBody(joined []byte, hasSegs bool, segProblem *manifest.RuleError) *manifest.RuleError {
	m := &v.req.m
	h, ok := m.Lookup("body_content_hash")
	if !ok || h[0] != '"' {
		return callFailed(RuleBodyContent, "an unattributed request (served_context null) has no request.body_content_hash string")
	}
	hash := pjson.Unquote(h)
	if _, err := digest.Parse(hash); err != nil {
		return callFailed(RuleBodyContent, "request.body_content_hash %q is not a digest", hash)
	}
	_, hasBody := m.Lookup("body")
	_, hasText := m.Lookup("body_text")
	if btoi(hasBody)+btoi(hasText)+btoi(hasSegs) > 1 {
		return callFailed(RuleBodyTwice, "an unattributed request retains its body more than one way (request.body, request.body_text, request.body_segments)")
	}
	return keptBody("request", m, joined, hasSegs, segProblem, hash)
}

// keptBody checks a body kept one way in the object m indexes (at names
// it: "request", "request.received"): whole (body), as a JSON string
// (body_text) or as the session's segments (body_segments, joined, or
// segProblem when they do not join), against hash, its
// body_content_hash.
func keptBody(at string, m *pjson.Members, joined []byte, hasSegs bool, segProblem *manifest.RuleError, hash string) *manifest.RuleError {
	body, hasBody := m.Lookup("body")
	text, hasText := m.Lookup("body_text")
	switch {
	case hasBody && !rederives(body, hash):
		return callFailed(RuleBodyContent, "%s.body does not hash to %s.body_content_hash", at, at)
	case hasText && (text[0] != '"' || digest.Of(pjson.Unquote(text)).String() != hash):
		return callFailed(RuleBodyContent, "%s.body_text does not hash to %s.body_content_hash", at, at)
	case segProblem != nil:
		return segProblem
	case hasSegs && !rederives(unsafe.String(unsafe.SliceData(joined), len(joined)), hash):
		return callFailed(RuleBodyContent, "the body %s.body_segments make does not hash to %s.body_content_hash", at, at)
	}
	return nil
}

// receivedBody checks a request's received (req is its request object),
// the body as it came when the writer changed it before sending: an
// object with the change in words and the body kept one way (whole, as
// text, or as segments of the session, read after the body sent's and
// leaving its list the previous), which hashes to its body_content_hash.
// The report counts it (Report.Changed). None: nil.
func (v *verifier) receivedBody(sess, req string) *manifest.RuleError {
	var m pjson.Members
	m.Index(req)
	raw, ok := m.Lookup("received")
	if !ok {
		return nil
	}
	v.rep.Changed++
	if raw[0] != '{' {
		return callFailed(RuleReceived, "request.received is not an object")
	}
	var r pjson.Members
	r.Index(raw)
	var joined []byte
	var segProblem *manifest.RuleError
	segs, hasSegs := r.Lookup("body_segments")
	if hasSegs {
		if v.bodies == nil {
			v.bodies = newBodies(v.maxLine)
		}
		joined, segProblem = v.bodies.addReceived(sess, segs)
	}
	change, hasChange := r.Lookup("change")
	h, hasHash := r.Lookup("body_content_hash")
	_, hasBody := r.Lookup("body")
	_, hasText := r.Lookup("body_text")
	hash := ""
	if hasHash && h[0] == '"' {
		hash = pjson.Unquote(h)
	}
	switch n := btoi(hasBody) + btoi(hasText) + btoi(hasSegs); {
	case !hasChange || change[0] != '"' || len(change) == 2:
		return callFailed(RuleReceived, "request.received has no change: a body received is kept with the change made to it, in words")
	case n == 0:
		return callFailed(RuleReceived, "request.received keeps no body (body, body_text or body_segments): a change is kept with the body it was made to")
	case n > 1:
		return callFailed(RuleBodyTwice, "request.received retains its body more than one way (body, body_text, body_segments)")
	}
	if _, err := digest.Parse(hash); err != nil {
		return callFailed(RuleReceived, "request.received.body_content_hash is missing or not a digest")
	}
	return keptBody("request.received", &r, joined, hasSegs, segProblem, hash)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
