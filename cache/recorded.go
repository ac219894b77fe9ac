package cache

import (
	"errors"

	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/request"
)

// Recorded is one call of a verified transcript with its whole request's
// manifest: nil when the call did not give its body, or when the body it
// gave is not one request can read (Err says why: a body kept as text).
type Recorded struct {
	journal.Sent
	Request *request.Manifest
	Err     error
}

// FromTranscript rebuilds every call of a verified transcript (data, the
// bytes journal.Verify read into rep) with its request manifest: its
// system segments its manifest's fragments where the retained bytes
// allow, its blocks where they do not (a prompt redacted in the
// transcript no longer holds to its manifest byte for byte). A call whose
// body cannot be read has its Err, and the others are rebuilt.
func FromTranscript(data []byte, rep *journal.Report) ([]Recorded, error) {
	sent, err := journal.Requests(data, rep)
	if err != nil {
		return nil, err
	}
	out := make([]Recorded, len(sent))
	for i, s := range sent {
		out[i].Sent = s
		if s.Body == nil {
			continue
		}
		m, err := request.New(s.Body, s.Provider, &request.Options{System: s.Report.Manifest})
		if errors.Is(err, request.ErrNotAttributed) || err == nil && s.Report.Manifest == nil {
			m, err = request.New(s.Body, s.Provider, nil)
		}
		out[i].Request, out[i].Err = m, err
	}
	return out, nil
}

// Calls are the recorded calls Run can predict: those with a request
// manifest, with their times and reported usage.
func Calls(rs []Recorded) []Call {
	var calls []Call
	for _, r := range rs {
		if r.Request == nil {
			continue
		}
		calls = append(calls, Call{Name: r.Report.Call, Line: r.Report.Line, Session: r.Session, At: r.At, Began: r.Answered,
			Request: r.Request, Reported: r.Report.Usage})
	}
	return calls
}
