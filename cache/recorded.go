package cache

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/request"
	"github.com/promptloom/promptloom/transcript"
)

// Recorded is one call of a verified transcript with its whole request's
// manifest: nil when the call did not give its body, or when the body it
// gave is not one request can read (Err says why: a body kept as text).
type Recorded struct {
	transcript.Sent
	Request *request.Manifest
	Err     error
}

// FromTranscript rebuilds every call of a verified transcript (data, the
// bytes transcript.Verify read into rep) with its request manifest: its
// system segments its manifest's fragments where the retained bytes
// allow, its blocks where they do not (a prompt redacted in the
// transcript no longer holds to its manifest byte for byte). A call whose
// body cannot be read has its Err, and the others are rebuilt.
func FromTranscript(data []byte, rep *transcript.Report) ([]Recorded, error) {
	sent, err := transcript.Requests(data, rep)
	if err != nil {
		return nil, err
	}
	out := make([]Recorded, len(sent))
	for i, s := range sent {
		out[i].Sent = s
		if s.Body == nil {
			continue
		}
		r, err := payload.Read(s.Body, s.Provider)
		if err != nil {
			out[i].Err = err
			continue
		}
		m, err := request.FromPayload(r, &request.Options{System: s.Report.Manifest})
		if errors.Is(err, request.ErrNotAttributed) || err == nil && s.Report.Manifest == nil {
			m, err = request.FromPayload(r, nil)
		}
		out[i].Request, out[i].Err = m, err
	}
	return out, nil
}

// Calls are the recorded calls Run can predict: those with a request
// manifest, with their times and reported usage. A failed attempt that
// was retried (Logical) is not one: it was refused before the provider
// read its prompt, so it wrote nothing to the cache, and its retry is
// the call.
func Calls(rs []Recorded) []Call {
	retried := make([]bool, len(rs))
	for _, g := range Logical(rs) {
		for _, i := range g[:len(g)-1] {
			retried[i] = true
		}
	}
	var calls []Call
	for i, r := range rs {
		if r.Request == nil || retried[i] {
			continue
		}
		calls = append(calls, Call{Name: r.Report.Call, Line: r.Report.Line, Session: r.Session, At: r.At, Began: r.Answered,
			Request: r.Request, Reported: r.Report.Usage})
	}
	return calls
}

// retryGap is the longest time between a failed attempt's outcome and the
// request that retries it for the two to be one logical call. The SDKs'
// backoffs are seconds (Anthropic's and OpenAI's at most 8 s, longer only
// when the server's Retry-After asks, which they honour up to a minute);
// two minutes holds every retry they make and not a turn a person took.
const retryGap = 2 * time.Minute

// Logical groups the recorded calls rs (in transcript order) into logical
// calls: each group the indexes of one call's attempts, in order, the last
// standing for the call; a call not retried is a group of one. Every
// attempt is recorded as a call of its own (the transport keeps nothing
// from one request to the next), and a later call is the retry of an
// earlier one when all of these hold:
//   - it is the next call of the same session with the same call name;
//   - both kept their request body, and the bodies are the same bytes;
//   - the earlier verified, and failed as an SDK retries: an HTTP 408,
//     409, 429 or 5xx, a redirect the client followed (307, 308), or a
//     transport error before any answer (a cancelled call, a stream that
//     broke or was closed, and any other status are not retried);
//   - it was sent within two minutes of the earlier one's outcome (an
//     SDK's backoff is seconds; a person's next turn is not a retry).
func Logical(rs []Recorded) [][]int {
	type key struct{ session, call string }
	last := map[key]int{}  // the latest call of each session and name
	group := map[int]int{} // call -> its group in out
	var out [][]int
	for i := range rs {
		r := &rs[i]
		if r.Report == nil {
			continue
		}
		k := key{r.Session, r.Report.Call}
		p, seen := last[k]
		last[k] = i
		if seen && retries(&rs[p], r) {
			g := group[p]
			out[g] = append(out[g], i)
			group[i] = g
			continue
		}
		group[i] = len(out)
		out = append(out, []int{i})
	}
	return out
}

// retries reports whether b is the retry of a (the call before it of the
// same session and name): Logical's rule.
func retries(a, b *Recorded) bool {
	if a.Body == nil || b.Body == nil || !bytes.Equal(a.Body, b.Body) ||
		a.Report.Problem != nil || a.Report.OutcomeLine == 0 || a.Answered.IsZero() {
		return false
	}
	if gap := b.At.Sub(a.Answered); gap < 0 || gap > retryGap {
		return false
	}
	return retryableFailure(a.Report.Outcome)
}

// retryableFailure reads a failed outcome as the transport records it
// ("HTTP 429 Too Many Requests: …", "transport error: …"; the verifier
// puts "error: " before an error line's message): the transcript keeps an
// error's message and no status of its own.
func retryableFailure(outcome string) bool {
	msg, failed := strings.CutPrefix(outcome, "error: ")
	if !failed {
		return false
	}
	if strings.HasPrefix(msg, "transport error: ") {
		return true
	}
	code, ok := strings.CutPrefix(msg, "HTTP ")
	if !ok || len(code) < 4 || code[3] != ' ' {
		return false
	}
	s, err := strconv.Atoi(code[:3])
	if err != nil {
		return false
	}
	return s == 307 || s == 308 || s == 408 || s == 409 || s == 429 || s >= 500 && s <= 599
}
