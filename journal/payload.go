package journal

import (
	"errors"
	"fmt"
	"slices"

	"github.com/promptloom/promptloom/digest"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/payload"

	"github.com/tidwall/gjson"
)

// ErrBodyNotSent is a call whose Request.Sent is not the system channel of
// its Request.Body: the adapter says it sends one text and the body holds
// another.
var ErrBodyNotSent = errors.New("the request body's system channel is not Request.Sent")

// egress is what a call sends, as Call records it.
type egress struct {
	text     string             // the system text sent
	manifest *manifest.Manifest // holds for text
	channel  *payload.Channel   // the body's system channel; nil without a body
	retained []byte             // the canonical part of the body the channel reads back from
}

// egress validates a request at the provider boundary. The manifest must
// hold for System. Without a Body, the text sent is Sent (or System), and
// the manifest is projected onto it with manifest.ForEgress when it
// differs. With a Body, the text sent is the body's system channel: it must
// be the prompt or the prompt re-placed (payload.Request.Verify), or, when
// the adapter changed it on purpose, exactly Sent (the manifest projected
// onto it with manifest.ForEgress). The body is read once (or not at all, given
// Payload), and the manifest validated once when the channel is the
// prompt itself: manifest.ForEgress holds it to those bytes.
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
		e := egress{text: r.Served(), manifest: r.Manifest}
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
		// (ErrBodyNotSent). Nothing is written, the model is not called.
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
	kept, err := pjson.Encode(pr.Retained())
	if err != nil {
		return refuse(&payload.Error{Kind: payload.ErrMalformed, Provider: c.Provider, Path: c.Field, Msg: err.Error()})
	}
	if back, err := systemChannel(kept, c.Provider); err != nil || back.Text != c.Text || !slices.Equal(back.Pieces, c.Pieces) || back.Breakpoints != c.Breakpoints {
		return refuse(fmt.Errorf("%w: %s: the system channel does not survive canonical JSON", payload.ErrMalformed, c.Field))
	}
	e := egress{text: c.Text, channel: c, retained: kept}
	switch {
	case r.Sent != nil:
		if *r.Sent != c.Text {
			return refuse(ErrBodyNotSent)
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

// checkPayload checks a request's payload receipt: when served_context
// records the payload side, payload_system_content_hash must be the system
// prompt's hash (the text the manifest certifies), payload_system_bytes its
// length, payload_provider a known shape, and request.payload must be
// retained and read back, as that shape, to exactly the retained system
// prompt. A request.payload without the receipt fails too.
func checkPayload(s, req getter, sys retained, mf *manifest.Manifest, shash string) *manifest.RuleError {
	h, n, p, body := s.Get("payload_system_content_hash"), s.Get("payload_system_bytes"), s.Get("payload_provider"), req.Get("payload")
	if !h.Exists() && !n.Exists() && !p.Exists() {
		if body.Exists() {
			return callFailed(RuleReceipt, "request.payload is retained but served_context has no payload_system_content_hash")
		}
		return nil
	}
	phash, rerr := receiptHash(s, "payload_system_content_hash")
	if rerr != nil {
		return rerr
	}
	bytes, ok := intField(n)
	if !ok {
		return callFailed(RuleReceipt, "payload_system_bytes %s is not a byte count", orRawNull(n.Raw))
	}
	prov, perr := payload.ParseProvider(p.Str)
	if p.Type != gjson.String || perr != nil || prov == payload.Auto {
		return callFailed(RuleReceipt, "payload_provider %s is not one of anthropic, openai-chat, openai-responses, gemini", orRawNull(p.Raw))
	}
	if phash != shash {
		return callFailed(RulePayloadSystem, "payload_system_content_hash %s is not system_prompt_content_hash %s: the request body's system channel is not the text the manifest certifies", phash, shash)
	}
	if bytes != int64(mf.SystemPromptBytes) {
		return callFailed(RulePayloadSystemBytes, "payload_system_bytes %d, but the manifest says %d", bytes, mf.SystemPromptBytes)
	}
	if !body.Exists() {
		return callFailed(RulePayload, "request.payload is missing (the writer retains the body's system channel whenever it records its digest)")
	}
	c, err := systemChannel([]byte(body.Raw), prov)
	switch {
	case err != nil:
		return callFailed(RulePayloadUnreadable, "request.payload: %v", err)
	case digest.Of(c.Text).String() != phash:
		return callFailed(RulePayloadContent, "request.payload's system channel does not hash to payload_system_content_hash (it hashes to %s)", digest.Of(c.Text))
	case int64(redactedLen(c.Text)) != bytes:
		return callFailed(RulePayloadLength, "request.payload's system channel is %d bytes, payload_system_bytes says %d", len(c.Text), bytes)
	case c.Text != sys.raw:
		return callFailed(RulePayloadText, "request.payload's system channel is not the system_prompt at line %d", sys.line)
	}
	return nil
}

// systemChannel is the system channel of body read as p.
func systemChannel(body []byte, p payload.Provider) (*payload.Channel, error) {
	r, err := payload.Read(body, p)
	if err != nil {
		return nil, err
	}
	return r.System()
}
