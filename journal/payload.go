package journal

import (
	"errors"
	"fmt"
	"slices"

	"github.com/promptloom/promptloom/internal/chain"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/internal/wire"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/payload"
)

// errBodyNotSent is a call whose Request.Sent is not the system channel of
// its Request.Body: the adapter says it sends one text and the body holds
// another. The error matches ErrStaleManifest, as every refusal of what a
// call would send does.
var errBodyNotSent = errors.New("the request body's system channel is not Request.Sent")

// egress is what a call sends, as Call records it.
type egress struct {
	text     string             // the system text sent
	manifest *manifest.Manifest // holds for text
	channel  *payload.Channel   // the body's system channel; nil without a body
	retained []byte             // the canonical part of the body the channel reads back from
}

// egress validates a request at the provider boundary. The manifest must
// hold for System. Without a Body, the text sent is Sent (or System), and
// the manifest is projected onto it with manifest.Manifest.ForEgress when it
// differs. With a Body, the text sent is the body's system channel: it must
// be the prompt or the prompt re-placed (payload.Request.Verify), or, when
// the adapter changed it on purpose, exactly Sent (the manifest projected
// onto it with manifest.Manifest.ForEgress). The body is read once (or not at all, given
// Payload), and the manifest validated once when the channel is the
// prompt itself: manifest.Manifest.ForEgress holds it to those bytes.
func (r Request) egress() (egress, error) {
	if r.Manifest == nil {
		return egress{}, fmt.Errorf("%w: call %s has no manifest", ErrStaleManifest, r.Call)
	}
	stale := func() (egress, error) {
		validated()
		if err := manifest.Validate(r.Manifest, r.System); err != nil {
			return egress{}, fmt.Errorf("%w: call %s: %w", ErrStaleManifest, r.Call, err)
		}
		return egress{}, nil
	}
	pr := r.Payload
	if pr == nil && r.Body == nil {
		if e, err := stale(); err != nil {
			return e, err
		}
		e := egress{text: r.served(), manifest: r.Manifest}
		if e.text != r.System {
			var err error
			validated()
			if e.manifest, err = r.Manifest.ForEgress(e.text); err != nil {
				return egress{}, fmt.Errorf("%w: call %s: egress: %w", ErrStaleManifest, r.Call, err)
			}
		}
		return e, nil
	}
	refuse := func(err error) (egress, error) {
		// Refused at the provider boundary: the body is malformed or has no
		// system channel (payload.ErrMalformed, payload.ErrNoSystem), its
		// system channel differs from the prompt other than by placement
		// (payload.ErrMismatch, and manifest.ErrInvalid through the rule
		// that broke), or it is not the text Request.Sent names
		// (errBodyNotSent). Nothing is written, the model is not called.
		// A manifest that does not hold for System says so first.
		if e, err := stale(); err != nil {
			return e, err
		}
		return egress{}, fmt.Errorf("%w: call %s: request body: %w", ErrStaleManifest, r.Call, err)
	}
	if pr == nil {
		var err error
		if pr, err = payload.Read(r.Body, r.Provider); err != nil {
			return refuse(err)
		}
	}
	c, err := pr.System()
	if err != nil {
		return refuse(err)
	}
	// The transcript keeps the canonical form; it must read back the same.
	// Canonical JSON refuses a \u escape of half a surrogate pair, which
	// decoders read differently (the verifier refuses a line holding one).
	kept, err := pjson.Encode(wire.Retained(pr))
	if err != nil {
		return refuse(&payload.Error{Kind: payload.ErrMalformed, Provider: c.Provider, Path: c.Field, Msg: err.Error()})
	}
	if back, err := chain.SystemChannel(kept, c.Provider); err != nil || back.Text != c.Text || !slices.Equal(back.Pieces, c.Pieces) || back.Breakpoints != c.Breakpoints {
		return refuse(fmt.Errorf("%w: %s: the system channel does not survive canonical JSON", payload.ErrMalformed, c.Field))
	}
	e := egress{text: c.Text, channel: c, retained: kept}
	switch {
	case r.Sent != nil:
		if *r.Sent != c.Text {
			return refuse(errBodyNotSent)
		}
		if _, err := stale(); err != nil {
			return egress{}, err
		}
		validated()
		if e.manifest, err = r.Manifest.ForEgress(c.Text); err != nil {
			return refuse(err)
		}
	case c.Text == r.System:
		// The channel is the prompt: ForEgress validates the manifest for
		// it, the one validation; a failure is reported as the prompt's.
		validated()
		if e.manifest, err = r.Manifest.ForEgress(c.Text); err != nil {
			if e, err := stale(); err != nil {
				return e, err
			}
			return refuse(err)
		}
	default:
		if _, err := stale(); err != nil {
			return egress{}, err
		}
		validated()
		m, err := pr.Verify(r.Manifest)
		if err != nil {
			return refuse(err)
		}
		e.manifest = m
	}
	return e, nil
}

// validated counts the write side's validations of a manifest, for a test
// that a request validates its manifest once.
var validated = func() {}
