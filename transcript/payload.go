package transcript

import (
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/internal/chain"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/payload"
)

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
	if p.Type != jString || perr != nil || prov == payload.Auto {
		return callFailed(RuleReceipt, "payload_provider %s is not one of anthropic, openai-chat, openai-responses, gemini", orRawNull(p.Raw))
	}
	if phash != shash {
		return callFailed(RulePayloadSystem, "payload_system_content_hash %s is not system_prompt_content_hash %s: the request body's system channel is not the text the manifest certifies", phash, shash)
	}
	if bytes != int64(mf.SystemPromptBytes) {
		return callFailed(RulePayloadSystem, "payload_system_bytes %d, but the manifest says %d", bytes, mf.SystemPromptBytes)
	}
	if !body.Exists() {
		return callFailed(RulePayloadUnreadable, "request.payload is missing (the writer retains the body's system channel whenever it records its digest)")
	}
	c, err := chain.SystemChannel([]byte(body.Raw), prov)
	switch {
	case err != nil:
		return callFailed(RulePayloadUnreadable, "request.payload: %v", err)
	case digest.Of(c.Text).String() != phash:
		return callFailed(RulePayloadContent, "request.payload's system channel does not hash to payload_system_content_hash (it hashes to %s)", digest.Of(c.Text))
	case int64(redactedLen(c.Text)) != bytes:
		return callFailed(RulePayloadContent, "request.payload's system channel is %d bytes, payload_system_bytes says %d", len(c.Text), bytes)
	case c.Text != sys.raw:
		return callFailed(RulePayloadContent, "request.payload's system channel is not the system_prompt at line %d", sys.line)
	}
	return nil
}
