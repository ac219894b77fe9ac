// Package replay pins each model answer of a recorded run as an event in
// the run's log, and answers a replay from those pins alone, failing with
// the fragments that changed when a call was not pinned.
package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/eventlog"
	canon "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/manifest"
)

// Mode is how a PinnedModel answers.
type Mode string

// The modes.
const (
	// Live passes every call to the model and pins nothing.
	Live Mode = "live"
	// Record passes every call to the model and pins each response as an
	// event in the log.
	Record Mode = "record"
	// Strict answers from the pins of a recorded run and never calls the
	// model; a call that was not pinned is ErrPinMiss.
	Strict Mode = "strict"
)

// KindPin is the event kind of a pinned response. Pins are visible to the
// journal's own role only, so no context assembled from the log reads them.
const KindPin = "model.pin"

// PinAudience is the audience of pin events.
var PinAudience = []string{"journal"}

// Pin is a recorded call: its key, what it was shown, and the answer.
type Pin struct {
	Key          string
	Call         string
	SystemDigest string
	// Segments are the manifest's rows of the call. A pin records of each
	// only what says which fragment changed, and how, when a later call
	// misses: id, included, digest, register and rank (MarshalJSON writes
	// just those), so in a pin read back the other fields are zero.
	Segments []manifest.Segment
	Response journal.Response
}

// pinJSON and pinSegment are a Pin as it is written in the log.
type pinJSON struct {
	Key          string           `json:"key"`
	Call         string           `json:"call"`
	SystemDigest string           `json:"system_digest"`
	Segments     []pinSegment     `json:"segments"`
	Response     journal.Response `json:"response"`
}

type pinSegment struct {
	ID       string        `json:"id"`
	Included bool          `json:"included"`
	Digest   digest.Digest `json:"digest"`
	Register string        `json:"register,omitempty"`
	Rank     *int          `json:"rank,omitempty"`
}

// MarshalJSON writes the pin with the recorded fields of its segments.
func (p Pin) MarshalJSON() ([]byte, error) {
	w := pinJSON{Key: p.Key, Call: p.Call, SystemDigest: p.SystemDigest, Response: p.Response}
	if p.Segments != nil {
		w.Segments = make([]pinSegment, len(p.Segments))
		for i, s := range p.Segments {
			w.Segments[i] = pinSegment{ID: s.ID, Included: s.Included, Digest: s.Digest, Register: s.Register, Rank: s.Rank}
		}
	}
	return canon.MarshalRaw(w) // the caller's encoder decides on HTML escaping
}

// UnmarshalJSON reads a pin as MarshalJSON writes it.
func (p *Pin) UnmarshalJSON(b []byte) error {
	var w pinJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*p = Pin{Key: w.Key, Call: w.Call, SystemDigest: w.SystemDigest, Response: w.Response}
	if w.Segments != nil {
		p.Segments = make([]manifest.Segment, len(w.Segments))
		for i, s := range w.Segments {
			p.Segments[i] = manifest.Segment{ID: s.ID, Included: s.Included, Digest: s.Digest, Register: s.Register, Rank: s.Rank}
		}
	}
	return nil
}

// Errors of pinned models.
var (
	// ErrPinMiss is a strict call with no pin.
	ErrPinMiss = errors.New("no pinned response for this call")
	// ErrNoRecording is strict mode without a recorded log to read pins from.
	ErrNoRecording = errors.New("replay: strict mode needs a recorded log to read pins from")
	// ErrUnknownMode is a mode other than live, record or strict.
	ErrUnknownMode = errors.New("replay: unknown mode")
)

// PinMissError says which call missed and what changed against the nearest
// pinned request.
type PinMissError struct {
	Call string
	Key  string
	// Nearest is the pinned call compared with ("" when there were no pins).
	Nearest string
	// SystemChanged is set when the system prompt differs from the
	// nearest pin's; Changed then lists the fragments that differ from it
	// (digest, inclusion, register or rank, or added or removed).
	SystemChanged bool
	Changed       []journal.FragmentChange
}

// ChangedIDs lists the ids of the changed fragments.
func (e *PinMissError) ChangedIDs() []string {
	out := make([]string, len(e.Changed))
	for i, c := range e.Changed {
		out[i] = c.ID
	}
	return out
}

func (e *PinMissError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "call %s: %v (key %s)", e.Call, ErrPinMiss, e.Key)
	switch {
	case e.Nearest == "":
		b.WriteString("; nothing was pinned")
	case e.SystemChanged && len(e.Changed) > 0:
		parts := make([]string, len(e.Changed))
		for i, c := range e.Changed {
			parts[i] = c.String()
		}
		fmt.Fprintf(&b, "; against pinned call %s the system prompt changed: %s", e.Nearest, strings.Join(parts, ", "))
	case e.SystemChanged:
		fmt.Fprintf(&b, "; against pinned call %s the system prompt changed", e.Nearest)
	default:
		fmt.Fprintf(&b, "; against pinned call %s the system prompt is the same: the messages, tools or parameters changed", e.Nearest)
	}
	return b.String()
}

// Is makes PinMissError match ErrPinMiss.
func (e *PinMissError) Is(t error) bool { return t == ErrPinMiss }

// RequestKey is the digest of a request's canonical form: the system
// prompt's digest and the content hashes (journal.JSONHash: redacted first) of the
// messages, the tools and the parameters. Equal keys are the same call, as
// far as a model can tell; and like a receipt, a key is taken over redacted
// values, so no secret's hash reaches the event log the pins live in.
func RequestKey(req journal.Request) (string, error) {
	return requestKey(digest.Of(req.Served()).String(), req)
}

// requestKey is RequestKey given the served system prompt's digest.
func requestKey(systemDigest string, req journal.Request) (string, error) {
	key := map[string]string{"system_digest": systemDigest}
	for name, raw := range map[string]json.RawMessage{"messages": req.Messages, "tools": req.Tools, "parameters": req.Parameters} {
		h, err := journal.JSONHash(raw)
		if err != nil {
			return "", fmt.Errorf("replay: call %s: %s: %w", req.Call, name, err)
		}
		key[name+"_content_hash"] = h
	}
	b, err := canon.Marshal(key)
	if err != nil {
		return "", err
	}
	return digest.Bytes(b).String(), nil
}

// PinnedModel keys calls by RequestKey: in Record mode it pins each answer
// as an event in the log; in Strict mode it answers from pins and never
// calls Inner (appending the pin it used, so a replayed log matches the
// recorded one event for event).
type PinnedModel struct {
	Inner journal.Model
	Mode  Mode
	// Log receives pin events in Record and Strict modes.
	Log eventlog.Store

	mu    sync.Mutex
	pins  map[string]Pin
	order []Pin // pins as recorded, to find the nearest
	calls int
}

// NewPinnedModel returns a pinned model. In Strict mode the pins are read
// from recorded (the log of a recorded run).
func NewPinnedModel(ctx context.Context, inner journal.Model, mode Mode, log eventlog.Store, recorded eventlog.Store) (*PinnedModel, error) {
	p := &PinnedModel{Inner: inner, Mode: mode, Log: log, pins: map[string]Pin{}}
	switch mode {
	case Live, Record:
		return p, nil
	case Strict:
		if recorded == nil {
			return nil, ErrNoRecording
		}
		head, err := recorded.Head(ctx)
		if err != nil {
			return nil, err
		}
		err = recorded.Scan(ctx, 1, head, func(env eventlog.Envelope) error {
			if env.Kind != KindPin {
				return nil
			}
			e, err := recorded.Get(ctx, env.Seq)
			if err != nil {
				return err
			}
			var pin Pin
			if err := e.Decode(&pin); err != nil {
				return err
			}
			p.pins[pin.Key] = pin
			p.order = append(p.order, pin)
			return nil
		})
		return p, err
	}
	return nil, fmt.Errorf("%w %q (want live, record or strict)", ErrUnknownMode, mode)
}

// Calls counts the calls passed to Inner.
func (p *PinnedModel) Calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls
}

// Complete implements journal.Model.
func (p *PinnedModel) Complete(ctx context.Context, req journal.Request) (journal.Response, error) {
	system := digest.Of(req.Served()).String()
	key, err := requestKey(system, req)
	if err != nil {
		return journal.Response{}, err
	}
	pin := Pin{Key: key, Call: req.Call, SystemDigest: system, Segments: req.Manifest.Rows()}
	switch p.Mode {
	case Strict:
		p.mu.Lock()
		found, ok := p.pins[key]
		p.mu.Unlock()
		if !ok {
			return journal.Response{}, p.miss(pin)
		}
		pin.Response = found.Response
	default:
		p.mu.Lock()
		p.calls++
		p.mu.Unlock()
		resp, err := p.Inner.Complete(ctx, req)
		if err != nil {
			return journal.Response{}, err
		}
		if p.Mode == Live {
			return resp, nil
		}
		pin.Response = resp
	}
	if p.Log != nil {
		if _, err := p.Log.Append(ctx, eventlog.Draft{Kind: KindPin, Actor: "journal", Audience: PinAudience, Payload: pin}); err != nil {
			return journal.Response{}, err
		}
	}
	return pin.Response, nil
}

// miss explains a strict call with no pin against the nearest pinned
// request: the pin of the same call if there is one, else the one sharing
// the most fragments.
func (p *PinnedModel) miss(pin Pin) error {
	e := &PinMissError{Call: pin.Call, Key: pin.Key}
	type seg struct {
		id     string
		digest digest.Digest
	}
	mine := make(map[seg]bool, len(pin.Segments))
	for _, s := range pin.Segments {
		mine[seg{s.ID, s.Digest}] = true
	}
	var nearest *Pin
	best := -1
	for i := range p.order {
		cand := &p.order[i]
		score := 0 // fragments shared with the missed call
		for _, s := range cand.Segments {
			if mine[seg{s.ID, s.Digest}] {
				score++
			}
		}
		if cand.Call == pin.Call {
			score += 1 << 20
		}
		if score > best {
			nearest, best = cand, score
		}
	}
	if nearest == nil {
		return e
	}
	e.Nearest = nearest.Call
	e.SystemChanged = nearest.SystemDigest != pin.SystemDigest
	if e.SystemChanged {
		e.Changed = journal.ChangedFragments(nearest.Segments, pin.Segments)
	}
	return e
}
