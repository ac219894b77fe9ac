// Package replay pins each model answer of a recorded run as an event in
// the run's log, and answers a replay from those pins alone, failing with
// the fragments that changed when a call was not pinned.
//
// A Model wraps the harness's journal.Model. It keys each call by
// what the model is shown (the digest of it, redacted),
// and, given a log, appends a pin event (kind "model.pin", audience
// "journal", so that no context assembled from the log reads it) with the
// key, the call, the served prompt's digest, the manifest's rows and the
// answer. A strict Model answers from the pins of a recorded log, never
// calls the model, and appends the pins it used, so that a replayed log
// matches the recorded one event for event.
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
	"github.com/promptloom/promptloom/harn/redact"
	"github.com/promptloom/promptloom/internal/chain"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/manifest"
)

// The pin events: their kind, and the audience that keeps them out of
// every assembled context.
const kindPin = "model.pin"

var pinAudience = []string{"journal"}

// Options configure a Model. The zero value passes every call to the
// model and pins nothing; a Log records; Strict replays. Two fields rather
// than a mode enum: what a Model does follows from which logs it is given.
type Options struct {
	// Log, when set, receives a pin event for every call answered: the
	// model's response as it is recorded, or in Strict the pin used, so
	// that a replayed log matches the recorded one event for event.
	Log eventlog.Store
	// Strict answers from the pins of Recorded and never calls the model;
	// a call that was not pinned is ErrPinMiss.
	Strict bool
	// Recorded is the log of a recorded run, whose pins Strict answers
	// from.
	Recorded eventlog.Store
}

// Errors of a Model.
var (
	// ErrPinMiss is a strict call with no pin; errors.As gives a
	// *MissError saying what changed.
	ErrPinMiss = errors.New("no pinned response for this call")
	// ErrNoRecording is Strict without a recorded log to read pins from.
	ErrNoRecording = errors.New("replay: strict mode needs a recorded log to read pins from")
)

// MissError says which call missed and what changed against the nearest
// pinned request.
type MissError struct {
	Call string
	Key  digest.Digest
	// Nearest is the pinned call compared with ("" when there were no pins).
	Nearest string
	// SystemChanged is set when the system prompt differs from the
	// nearest pin's; Changed then lists the fragments that differ from it
	// (manifest.Differing: digest, state, register, rank or place, or
	// added or removed).
	SystemChanged bool
	Changed       []manifest.Change
}

// Error names the call and, against the nearest pin, what changed.
func (e *MissError) Error() string {
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

// Is makes MissError match ErrPinMiss.
func (e *MissError) Is(t error) bool { return t == ErrPinMiss }

// keyOf names a call by what a model is shown: the digest of the
// canonical form of the served system prompt's digest and the content
// hashes (Harn's stable_redacted_json_hash) of the messages, tools and
// parameters. Equal keys are the same call, as far as a model can tell;
// like a receipt, a key is taken over redacted values, so no secret's hash
// is kept in a pin.
func keyOf(r journal.Request) (digest.Digest, error) {
	key := map[string]string{"system_digest": digest.Of(chain.Served(r.Body, r.Provider, r.Sent, r.System)).String()}
	for name, raw := range map[string]json.RawMessage{"messages": r.Messages, "tools": r.Tools, "parameters": r.Parameters} {
		if len(raw) == 0 {
			raw = json.RawMessage("null")
		}
		b, err := redact.JSON(raw)
		if err != nil {
			return digest.Digest{}, fmt.Errorf("replay: call %s: %s: %w", r.Call, name, err)
		}
		key[name+"_content_hash"] = digest.Bytes(b).String()
	}
	b, err := pjson.Marshal(key)
	if err != nil {
		return digest.Digest{}, err
	}
	return digest.Bytes(b), nil
}

// pin is a recorded call: its key, what it was shown, and the answer. Of
// each manifest row it keeps only what says which fragment changed, and
// how, when a later call misses: id, included, digest, register and rank.
type pin struct {
	Key          digest.Digest    `json:"key"`
	Call         string           `json:"call"`
	SystemDigest digest.Digest    `json:"system_digest"`
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

func pinSegments(rows []manifest.Segment) []pinSegment {
	if rows == nil {
		return nil
	}
	out := make([]pinSegment, len(rows))
	for i, s := range rows {
		out[i] = pinSegment{ID: s.ID, Included: s.Included, Digest: s.Digest, Register: s.Register, Rank: s.Rank}
	}
	return out
}

// segments is a pin's rows as manifest segments, the fields it keeps set.
func (p *pin) segments() []manifest.Segment {
	if p.Segments == nil {
		return nil
	}
	out := make([]manifest.Segment, len(p.Segments))
	for i, s := range p.Segments {
		out[i] = manifest.Segment{ID: s.ID, Included: s.Included, Digest: s.Digest, Register: s.Register, Rank: s.Rank}
	}
	return out
}

// Model keys calls by what the model is shown and pins or answers them as its
// Options say. It is safe for concurrent use.
type Model struct {
	inner journal.Model
	opts  Options

	mu    sync.Mutex
	pins  map[digest.Digest]pin
	order []pin // pins as recorded, to find the nearest
	calls int
}

// New returns a Model around inner. A strict Model reads the pins of
// o.Recorded first.
func New(ctx context.Context, inner journal.Model, o *Options) (*Model, error) {
	if o == nil {
		o = &Options{}
	}
	m := &Model{inner: inner, opts: *o, pins: map[digest.Digest]pin{}}
	if !o.Strict {
		return m, nil
	}
	if o.Recorded == nil {
		return nil, ErrNoRecording
	}
	head, err := o.Recorded.Head(ctx)
	if err != nil {
		return nil, err
	}
	err = o.Recorded.Scan(ctx, 1, head, func(env eventlog.Envelope) error {
		if env.Kind != kindPin {
			return nil
		}
		e, err := o.Recorded.Get(ctx, env.Seq)
		if err != nil {
			return err
		}
		var p pin
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			return fmt.Errorf("replay: pin at event %d: %w", e.Seq, err)
		}
		m.pins[p.Key] = p
		m.order = append(m.order, p)
		return nil
	})
	return m, err
}

// Complete implements journal.Model.
func (m *Model) Complete(ctx context.Context, req journal.Request) (journal.Response, error) {
	key, err := keyOf(req)
	if err != nil {
		return journal.Response{}, err
	}
	p := pin{Key: key, Call: req.Call, SystemDigest: digest.Of(chain.Served(req.Body, req.Provider, req.Sent, req.System)), Segments: pinSegments(req.Manifest.Rows())}
	if m.opts.Strict {
		m.mu.Lock()
		found, ok := m.pins[key]
		m.mu.Unlock()
		if !ok {
			return journal.Response{}, m.miss(&p)
		}
		p.Response = found.Response
	} else {
		m.mu.Lock()
		m.calls++
		m.mu.Unlock()
		resp, err := m.inner.Complete(ctx, req)
		if err != nil {
			return journal.Response{}, err
		}
		p.Response = resp
	}
	if m.opts.Log != nil {
		if _, err := m.opts.Log.Append(ctx, eventlog.Draft{Kind: kindPin, Actor: "journal", Audience: pinAudience, Payload: p}); err != nil {
			return journal.Response{}, err
		}
	}
	return p.Response, nil
}

// miss explains a strict call with no pin against the nearest pinned
// request: the pin of the same call if there is one, else the one sharing
// the most fragments.
func (m *Model) miss(p *pin) error {
	e := &MissError{Call: p.Call, Key: p.Key}
	type seg struct {
		id     string
		digest digest.Digest
	}
	mine := make(map[seg]bool, len(p.Segments))
	for _, s := range p.Segments {
		mine[seg{s.ID, s.Digest}] = true
	}
	var nearest *pin
	best := -1
	for i := range m.order {
		cand := &m.order[i]
		score := 0 // fragments shared with the missed call
		for _, s := range cand.Segments {
			if mine[seg{s.ID, s.Digest}] {
				score++
			}
		}
		if cand.Call == p.Call {
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
	e.SystemChanged = nearest.SystemDigest != p.SystemDigest
	if e.SystemChanged {
		e.Changed = manifest.Differing(nearest.segments(), p.segments())
	}
	return e
}
