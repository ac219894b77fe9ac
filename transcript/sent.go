package transcript

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/promptloom/promptloom"

	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/internal/wire"
	"github.com/promptloom/promptloom/payload"
)

// Sent is one recorded call's whole request, rebuilt from what its
// transcript retained: what the cache models, explain --request and diff
// --request read back.
type Sent struct {
	// Report is the call's verdict, from the Report the transcript
	// verified to.
	Report *CallReport
	// Session is the session the call was made in; At when its request
	// was written, Answered when its outcome was (zero: none yet).
	Session      string
	At, Answered time.Time
	// Provider and Body are the request's shape and body: an
	// unattributed call's body as retained, an attributed one's rebuilt
	// from its parameters, messages, tools and system channel (keys in
	// another order than sent, and redacted as the transcript keeps them;
	// the request manifest's digests are the same). Body is nil when the
	// call did not give its body (nothing says its shape).
	Provider payload.Provider
	Body     []byte
	// Received is the body as it came, when the writer changed it before
	// sending Body (request.received: Request.Received), as retained,
	// and Changed says how; both empty: Body is the body as it came.
	Received []byte
	Changed  string
}

// Requests reads every call of rep (the Report of Verify over data) back
// as it was sent, in transcript order. data must be the bytes Verify read.
// It is the one reader of request bodies: a body kept as segments is
// joined here (each session's pieces are read in order, as Verify read
// them), and every other reader takes Sent.Body.
func Requests(data []byte, rep *Report) ([]Sent, error) {
	lines := lineIndex(data)
	at := func(n int) ([]byte, bool) {
		if n < 1 || n > len(lines) {
			return nil, false
		}
		return lines[n-1], true
	}
	out := make([]Sent, 0, len(rep.Calls))
	limit := rep.maxLine
	if limit <= 0 {
		limit = promptloom.DefaultMaxBytes
	}
	bs := newBodies(limit)
	var m pjson.Members
	for i := range rep.Calls {
		c := &rep.Calls[i]
		line, ok := at(c.Line)
		if !ok {
			return nil, fmt.Errorf("transcript: call %s: no line %d", c.Call, c.Line)
		}
		l := parse(string(line))
		s := Sent{Report: c, Session: l.Get("session").Str}
		s.At, _ = time.Parse(time.RFC3339Nano, l.Get("at").Str)
		if o, ok := at(c.OutcomeLine); ok && c.OutcomeLine > 0 {
			s.Answered, _ = time.Parse(time.RFC3339Nano, parse(string(o)).Get("at").Str)
		}
		s.Provider, s.Body = rebuild(l)
		if c.Unattributed {
			m.Index(string(line))
			req, _ := m.Lookup("request")
			m.Index(req)
			if segs, ok := m.Lookup("body_segments"); ok {
				// Read even for a call whose body is not wanted: the
				// session's pieces are numbered in order.
				// A body that does not join (the call failed Verify for
				// it) is none.
				if b, p := bs.add(s.Session, segs); p == nil {
					s.Body = slices.Clone(b)
				}
			}
		}
		if r := l.Get("request.received"); r.IsObject() {
			s.Changed = r.Get("change").Str
			switch {
			case r.Get("body_segments").Exists():
				// Read after the body sent's, as Verify reads them.
				if b, p := bs.addReceived(s.Session, r.Get("body_segments").Raw); p == nil {
					s.Received = slices.Clone(b)
				}
			case r.Get("body").IsObject():
				s.Received = []byte(r.Get("body").Raw)
			case r.Get("body_text").Type == jString:
				s.Received = []byte(r.Get("body_text").Str)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

func lineIndex(data []byte) [][]byte {
	var out [][]byte
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			out = append(out, data)
			break
		}
		out = append(out, data[:i])
		data = data[i+1:]
	}
	return out
}

// rebuild is a request line's body: the retained body of an unattributed
// call, or the parameters, messages, tools and system channel of an
// attributed one, as one object.
func rebuild(l value) (payload.Provider, []byte) {
	req := l.Get("request")
	if l.Get("served_context").Type == jNull {
		p := payload.Provider(req.Get("provider").Str)
		if b := req.Get("body"); b.IsObject() {
			return p, []byte(b.Raw)
		}
		if t := req.Get("body_text"); t.Type == jString {
			// A body with no canonical form, kept as its text: a reader
			// may still read it (a number past float range is the
			// provider's to judge), or say why not.
			return p, []byte(t.Str)
		}
		if req.Get("body_segments").Exists() {
			return p, nil // joined by Requests
		}
		return "", nil
	}
	p := payload.Provider(l.Get("served_context.payload_provider").Str)
	if p == payload.Auto {
		return "", nil
	}
	return p, wire.Join(string(p), []byte(req.Get("parameters").Raw), []byte(req.Get("messages").Raw),
		[]byte(req.Get("tools").Raw), []byte(req.Get("payload").Raw))
}
