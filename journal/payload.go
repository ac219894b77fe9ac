package journal

import (
	"errors"
	"fmt"

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
// be the prompt or the prompt re-placed (payload.Verify), or, when
// the adapter changed it on purpose, exactly Sent (projected, as
// payload.Project does).
func (r Request) egress() (egress, error) {
	if r.Manifest == nil {
		return egress{}, fmt.Errorf("%w: call %s has no manifest", ErrStaleManifest, r.Call)
	}
	if err := manifest.Validate(r.Manifest, r.System); err != nil {
		return egress{}, fmt.Errorf("%w: call %s: %w", ErrStaleManifest, r.Call, err)
	}
	if r.Body == nil {
		e := egress{text: r.Served(), manifest: r.Manifest}
		if e.text != r.System {
			var err error
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
		return egress{}, fmt.Errorf("%w: call %s: request body: %w", ErrStaleManifest, r.Call, err)
	}
	c, kept, err := payload.Retain(r.Body, r.Provider)
	if err != nil {
		return refuse(err)
	}
	// The transcript keeps the canonical form; it must read back the same.
	// Canonical JSON refuses a \u escape of half a surrogate pair, which
	// decoders read differently (the verifier refuses a line holding one).
	kept, err = pjson.Encode(kept)
	if err != nil {
		return refuse(&payload.Error{Kind: payload.ErrMalformed, Provider: c.Provider, Path: c.Field, Msg: err.Error()})
	}
	if back, err := payload.Extract(kept, c.Provider); err != nil || back.Text != c.Text {
		return refuse(fmt.Errorf("%w: %s: the system channel does not survive canonical JSON", payload.ErrMalformed, c.Field))
	}
	e := egress{text: c.Text, channel: c, retained: kept}
	if r.Sent != nil {
		if *r.Sent != c.Text {
			return refuse(ErrBodyNotSent)
		}
		if e.manifest, err = r.Manifest.ForEgress(c.Text); err != nil {
			return refuse(err)
		}
		return e, nil
	}
	res, err := payload.Verify(r.Manifest, kept, c.Provider)
	if err != nil {
		return refuse(err)
	}
	e.manifest = res.Manifest
	return e, nil
}

// checkPayload checks a request's payload receipt: when served_context
// records the payload side, payload_system_content_hash must be the system
// prompt's hash (the text the manifest certifies), payload_system_bytes its
// length, payload_provider a known shape, and request.payload must be
// retained and read back, as that shape, to exactly the retained system
// prompt. A request.payload without the receipt fails too.
func checkPayload(s, req gjson.Result, sys retained, mf *manifest.Manifest, shash string) *manifest.RuleError {
	h, n, p, body := s.Get("payload_system_content_hash"), s.Get("payload_system_bytes"), s.Get("payload_provider"), req.Get("payload")
	if !h.Exists() && !n.Exists() && !p.Exists() {
		if body.Exists() {
			return callFailed("payload", "request.payload is retained but served_context has no payload_system_content_hash")
		}
		return nil
	}
	phash, rerr := receiptHash(s, "payload_system_content_hash")
	if rerr != nil {
		return rerr
	}
	bytes, ok := intField(n)
	if !ok {
		return callFailed("payload", "payload_system_bytes %s is not a byte count", orRawNull(n.Raw))
	}
	prov, perr := payload.ParseProvider(p.Str)
	if p.Type != gjson.String || perr != nil || prov == payload.Auto {
		return callFailed("payload", "payload_provider %s is not one of anthropic, openai-chat, openai-responses, gemini", orRawNull(p.Raw))
	}
	if phash != shash {
		return callFailed("payload", "payload_system_content_hash %s is not system_prompt_content_hash %s: the request body's system channel is not the text the manifest certifies", phash, shash)
	}
	if bytes != int64(mf.SystemPromptBytes) {
		return callFailed("payload", "payload_system_bytes %d, but the manifest says %d", bytes, mf.SystemPromptBytes)
	}
	if !body.Exists() {
		return callFailed("payload", "request.payload is missing (the writer retains the body's system channel whenever it records its digest)")
	}
	c, err := payload.Extract([]byte(body.Raw), prov)
	switch {
	case err != nil:
		return callFailed("payload", "request.payload: %v", err)
	case digest.Of(c.Text).String() != phash:
		return callFailed("payload", "request.payload's system channel does not hash to payload_system_content_hash (%s)", digest.Of(c.Text))
	case int64(redactedLen(c.Text)) != bytes:
		return callFailed("payload", "request.payload's system channel is %d bytes, payload_system_bytes says %d", len(c.Text), bytes)
	case c.Text != sys.raw:
		return callFailed("payload", "request.payload's system channel is not the system_prompt at line %d", sys.line)
	}
	return nil
}
