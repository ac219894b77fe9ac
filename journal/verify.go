package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/tidwall/gjson"
)

// Verify checks a transcript, reading it a line at a time (no line longer
// than MaxLineBytes: past it, Verify stops with a *LineTooLongError).
//
// The first line decides the format. A line with "kind" starts a
// promptloom transcript: every line must then carry "prev", the hash of the
// line before (Genesis first), and "seq", one more than the line before;
// every kind must be known; sessions must open and close; each request's
// receipts must resolve to retained lines whose bytes re-derive them (see
// checkReceipts), and its outcome line must name it by seq and hash and
// hash to its own receipt. A line with "type" starts a Harn transcript,
// which has no chain: each provider_call_request's receipts are checked,
// and other event types are skipped. No line of either may repeat a JSON
// key. A transcript with no call checked fails.
func Verify(r io.Reader) (*Report, error) {
	v := &verifier{rep: &Report{}, systems: map[string]retained{}, manifests: map[string]retained{},
		schemas: map[string]retained{}, messages: map[string]retained{}, sessions: map[string]*session{},
		pending: map[int64]int{}, prev: Genesis}
	lr := newLineReader(r)
	for {
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			v.finish()
			return v.rep, err
		}
		v.line(lr.n, line, lr.torn)
	}
	v.finish()
	return v.rep, nil
}

// retained is a line holding bytes a receipt names: a system prompt, a
// manifest, tool schemas or a served message.
type retained struct {
	line int
	raw  string // the content (system prompt) or the value's exact bytes
	hash string // the hash as it re-derives from raw ("" until derived)
}

type session struct {
	line, calls int
	closed      bool
}

type verifier struct {
	rep                                   *Report
	systems, manifests, schemas, messages map[string]retained
	sessions                              map[string]*session
	pending                               map[int64]int // request seq -> index in rep.Calls
	hashes                                map[int64]string
	prev, cur                             string // the chain hashes of the last line and this one
	seq                                   int64
}

func (v *verifier) line(n int, line []byte, torn bool) {
	v.rep.Lines = n
	v.cur = LineHash(line)
	defer func() { v.prev = v.cur }()
	if blank(line) {
		// Harn skips blank lines; in a promptloom transcript every line is
		// chained, and a blank one (before the first line too: the next
		// line's prev then fails) is a problem.
		if v.rep.Format == FormatPromptloom {
			v.rep.problem("line %d: blank line", n)
		}
		return
	}
	if torn {
		v.rep.problem("line %d: no final newline (torn by a crash, or cut)", n)
	}
	if !json.Valid(line) { // not gjson.Valid: it recurses, and deep nesting overflows the stack
		v.rep.problem("line %d: not JSON", n)
		return
	}
	if path, dup := duplicateKey(line); dup {
		v.rep.Problems = append(v.rep.Problems, (&DuplicateKeyError{Line: n, Path: path}).Error())
		return
	}
	l := gjson.ParseBytes(line)
	if !l.IsObject() {
		v.rep.problem("line %d: not a JSON object", n)
		return
	}
	kind, typ := l.Get("kind"), l.Get("type")
	if v.rep.Format == "" {
		switch {
		case kind.Exists():
			v.rep.Format = FormatPromptloom
		case typ.Exists():
			v.rep.Format = FormatHarn
		default:
			v.rep.problem("line %d: unknown format: neither a promptloom line (\"kind\") nor a Harn event (\"type\")", n)
			return
		}
	}
	if v.rep.Format == FormatHarn {
		v.harnLine(n, l)
		return
	}
	v.promptloomLine(n, l)
}

func (v *verifier) promptloomLine(n int, l gjson.Result) {
	if p := l.Get("prev"); p.Type != gjson.String {
		v.rep.problem("line %d: chain broken: no prev", n)
	} else if p.Str != v.prev {
		v.rep.problem("line %d: chain broken: prev is %s, but line %d hashes to %s", n, p.Str, n-1, v.prev)
	}
	if s := l.Get("seq"); s.Type != gjson.Number || s.Int() != v.seq+1 {
		v.rep.problem("line %d: seq %s, want %d", n, s.Raw, v.seq+1)
	}
	v.seq++
	sess := l.Get("session").String()
	switch kind := l.Get("kind"); kind.String() {
	case KindOpen:
		if _, dup := v.sessions[sess]; dup || sess == "" {
			v.rep.problem("line %d: session %q opened twice, or without an id", n, sess)
			return
		}
		v.sessions[sess] = &session{line: n}
	case KindClose:
		s, ok := v.sessions[sess]
		switch {
		case !ok || s.closed:
			v.rep.problem("line %d: journal_close of session %q, which is not open", n, sess)
		case l.Get("calls").Int() != int64(s.calls) || l.Get("calls").Type != gjson.Number:
			v.rep.problem("line %d: session %q closes with %s call(s), but %d are in the transcript", n, sess, l.Get("calls").Raw, s.calls)
		}
		if ok {
			s.closed = true
		}
	case KindSystemPrompt:
		content := l.Get("content")
		v.systems[l.Get("content_hash").String()] = retained{line: n, raw: content.String()}
	case KindContextManifest:
		v.manifests[l.Get("content_hash").String()] = retained{line: n, raw: l.Get("manifest").Raw}
	case KindRequest:
		c := CallReport{Line: n, Seq: l.Get("seq").Int(), Call: l.Get("call").String(), Status: Incomplete,
			Problem: "no provider_call_response or provider_call_error answers it"}
		if err := v.checkReceipts(l, false); err != nil {
			c.Status, c.Problem = Failed, err.Error()
		}
		if s, ok := v.sessions[sess]; !ok || s.closed {
			c.Status, c.Problem = Failed, fmt.Sprintf("session %q is not open at this line", sess)
		} else {
			s.calls++
		}
		v.pending[c.Seq] = len(v.rep.Calls)
		if v.hashes == nil {
			v.hashes = map[int64]string{}
		}
		v.hashes[c.Seq] = v.cur
		v.rep.Calls = append(v.rep.Calls, c)
	case KindResponse, KindError:
		v.outcome(n, l)
	default:
		v.rep.problem("line %d: unknown kind %s", n, kind.Raw)
	}
}

// outcome checks a response or error line against its request.
func (v *verifier) outcome(n int, l gjson.Result) {
	rs := l.Get("request_seq").Int()
	i, ok := v.pending[rs]
	if !ok {
		v.rep.problem("line %d: %s names request seq %d, which no earlier request has, or which is answered already", n, l.Get("kind").Str, rs)
		return
	}
	delete(v.pending, rs)
	c := &v.rep.Calls[i]
	field, hashField := "response", "response_content_hash"
	if l.Get("kind").Str == KindError {
		field, hashField = "error", "error_content_hash"
	}
	problem := ""
	switch {
	case l.Get("call").String() != c.Call:
		problem = fmt.Sprintf("the %s at line %d names call %q", field, n, l.Get("call").String())
	case l.Get("request_hash").String() != v.hashes[rs]:
		problem = fmt.Sprintf("the %s at line %d names request hash %s, but the request hashes to %s", field, n, l.Get("request_hash").String(), v.hashes[rs])
	default:
		want := l.Get(hashField)
		got, err := JSONHash([]byte(orRawNull(l.Get(field).Raw)))
		if want.Type != gjson.String || err != nil || got != want.Str {
			problem = fmt.Sprintf("the %s at line %d does not hash to its %s (%s)", field, n, hashField, got)
		}
	}
	if c.Status == Failed {
		return
	}
	if problem != "" {
		c.Status, c.Problem = Failed, fmt.Sprintf("%v: %s", errCall, problem)
		return
	}
	c.Status, c.OK, c.Problem = Verified, true, ""
}

func (v *verifier) finish() {
	r := v.rep
	if r.Lines == 0 {
		r.problem("empty transcript: nothing to verify")
		return
	}
	if r.Format == FormatPromptloom {
		r.Head = v.prev
		ids := make([]string, 0, len(v.sessions))
		for id := range v.sessions {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(a, b int) bool { return v.sessions[ids[a]].line < v.sessions[ids[b]].line })
		for _, id := range ids {
			if s := v.sessions[id]; !s.closed {
				r.problem("session %s (line %d) has no journal_close: the run was cut short, or is still being written", id, s.line)
			}
		}
	}
	if v, _, _ := r.Counts(); v == 0 {
		r.problem("no call verified: a transcript that proves nothing fails")
	}
}

var errCall = errors.New("call does not verify")

func orRawNull(raw string) string {
	if raw == "" {
		return "null"
	}
	return raw
}
