package transcript

import (
	"fmt"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/internal/chain"
	"github.com/promptloom/promptloom/manifest"
)

// The kinds' own members, as Decode reads them into Line.Body: one struct
// a kind (a response and an error share Outcome; a manifest and Harn's
// tool schemas and served messages share Retained), holding only what the
// line holds beyond Line's own fields. Decode checks each member's type,
// not what it claims: a content hash is read, not re-derived, and a
// request_seq is not looked up; Verify does that.

// Open is a journal_open's member beyond its session: the session it
// continues (journal.Options.Follows), "" when none.
type Open struct {
	Follows string
}

// Close is a journal_close's member beyond its session: how many requests
// the session wrote (refusals are not counted).
type Close struct {
	Calls int64
}

// SystemPrompt is a system_prompt line's members (a promptloom line's or
// a Harn event's): the system text served, each secret replaced by its
// placeholder unless the journal kept raw content, and its content hash,
// which a receipt's system_prompt_content_hash names.
type SystemPrompt struct {
	Content     string
	ContentHash digest.Digest
}

// Retained is a retained JSON value and the content hash a receipt names
// it by: a context_manifest's manifest (the canonical JSON of a
// harn.llm.context_manifest.v1, for manifest.Read), and in a Harn
// transcript a tool_schemas event's schemas or a served_message's
// message. Value is its exact bytes in the line.
type Retained struct {
	Value       []byte
	ContentHash digest.Digest
}

// Request is a provider_call_request's members beyond its session and
// call: its receipt (served_context, harn.llm.served_context.v1; nil for
// a request made without a manifest, whose receipt is null), the digest of
// the manifest that receipt names (zero when none), and the request sent
// (the request member: messages, tools and parameters, or an unattributed
// body, kept as segments, whole or as text; nil in a Harn event, which
// keeps none). Requests rebuilds the body sent from it.
type Request struct {
	Receipt      []byte
	ManifestHash digest.Digest
	Request      []byte
}

// Outcome is a provider_call_response's or provider_call_error's members
// beyond its session and call (Line.Kind says which): the request it
// answers (its seq, and its line's chain hash), the response or error
// object and its content hash, and a response's body as received
// (redacted; its body_content_hash is digest.String of it), when the
// writer kept it ("" when not).
type Outcome struct {
	RequestSeq  int64
	RequestHash digest.Digest
	Value       []byte
	ContentHash digest.Digest
	Body        string
}

// Attempt is a provider_call_attempt's members beyond its session and
// call: the request it retries (its seq and chain hash), its number from
// 1, and its failure ({"status": N} or {"message": ...}; its exact bytes).
type Attempt struct {
	RequestSeq  int64
	RequestHash digest.Digest
	Number      int64
	Failure     []byte
}

// Checkpoint is a journal_checkpoint's member beyond its session: the
// signed note over the chain up to the line before (docs/transcript.md,
// "Checkpoints"), as text; Verify checks it with Options.Verifier.
type Checkpoint struct {
	Note string
}

// body decodes the members of a line of kind l.Kind into l.Body (harn: a
// Harn event), or says which rule a member breaks.
func (l *Line) body(o *object, harn bool) *manifest.RuleError {
	sessOK := o.Get("session").Type == jString
	switch l.Kind {
	case chain.KindOpen:
		if !sessOK || l.Session == "" {
			return decodeFailed(RuleSessionID, "journal_open's session %s is not a session id", orRawNull(o.Get("session").Raw))
		}
		var b Open
		if f := o.Get("follows"); f.Exists() {
			if f.Type != jString || f.Str == "" {
				return decodeFailed(RuleFollows, "journal_open's follows %s is not a session id", orRawNull(f.Raw))
			}
			b.Follows = f.Str
		}
		l.Body = &b
	case chain.KindClose:
		if !sessOK {
			return decodeFailed(RuleSessionNotOpen, "journal_close's session %s is not a string", orRawNull(o.Get("session").Raw))
		}
		calls, ok := intField(o.Get("calls"))
		if !ok {
			return decodeFailed(RuleCloseCount, "journal_close's calls %s is not a count", orRawNull(o.Get("calls").Raw))
		}
		l.Body = &Close{Calls: calls}
	case chain.KindSystemPrompt, chain.KindContextManifest, "tool_schemas", "served_message":
		return l.retained(o)
	case chain.KindRequest:
		var b Request
		if !sessOK && !harn {
			return decodeFailed(RuleSessionNotOpen, "provider_call_request's session %s is not a string", orRawNull(o.Get("session").Raw))
		}
		call := o.Get("call")
		if harn {
			call = o.Get("call_id")
		}
		if call.Type != jString {
			return decodeFailed(RuleRequest, "provider_call_request's call %s is not a string", orRawNull(call.Raw))
		}
		switch sc := o.Get("served_context"); {
		case sc.IsObject():
			b.Receipt = []byte(sc.Raw)
			if h := sc.Get("manifest_content_hash"); h.Exists() {
				d, ok := digestOf(h)
				if !ok {
					return decodeFailed(RuleReceipt, "served_context.manifest_content_hash %s is not a digest", h.Raw)
				}
				b.ManifestHash = d
			}
		case sc.Type == jNull && sc.Exists() && !harn:
		default:
			return decodeFailed(RuleReceipt, "provider_call_request's served_context %s is not an object", orRawNull(sc.Raw))
		}
		if !harn {
			r := o.Get("request")
			if !r.IsObject() {
				return decodeFailed(RuleRequest, "provider_call_request's request %s is not an object", orRawNull(r.Raw))
			}
			b.Request = []byte(r.Raw)
		}
		l.Body = &b
	case chain.KindResponse, chain.KindError, chain.KindAttempt:
		return l.answer(o, sessOK)
	case chain.KindRefused:
		b, err := refusalOf(o)
		if err != nil {
			return err
		}
		if !sessOK {
			return decodeFailed(RuleSessionNotOpen, "provider_call_refused's session %s is not a string", orRawNull(o.Get("session").Raw))
		}
		b.Session = l.Session
		l.Body = &b
	case chain.KindCheckpoint:
		if !sessOK {
			return decodeFailed(RuleCheckpointSession, "journal_checkpoint's session %s is not a string", orRawNull(o.Get("session").Raw))
		}
		note, ok := stringField(o, "note")
		if !ok {
			return decodeFailed(RuleCheckpointNote, "journal_checkpoint's note %s is not a string", orRawNull(o.Get("note").Raw))
		}
		l.Body = &Checkpoint{Note: note}
	}
	return nil
}

// refusalOf reads a provider_call_refused line's own members (not its
// session, which Verify holds to the sessions open), or says which it
// breaks (RuleRefusal).
func refusalOf(o getter) (Refusal, *manifest.RuleError) {
	var b Refusal
	var okR, okM, okB, okH bool
	b.Reason, okR = stringField(o, "reason")
	b.Message, okM = stringField(o, "message")
	b.BodyBytes, okB = intField(o.Get("body_bytes"))
	b.BodyContentHash, okH = stringField(o, "body_content_hash")
	b.Call, _ = stringField(o, "call")
	_, badHash := digest.Parse(b.BodyContentHash)
	switch {
	case !okR || !chain.RuleLike(b.Reason):
		return b, decodeFailed(RuleRefusal, "the refusal's reason %s is not a code (lowercase letters, digits and _)", orRawNull(o.Get("reason").Raw))
	case !okM:
		return b, decodeFailed(RuleRefusal, "the refusal's message %s is not a string", orRawNull(o.Get("message").Raw))
	case !okB:
		return b, decodeFailed(RuleRefusal, "the refusal's body_bytes %s is not an integer", orRawNull(o.Get("body_bytes").Raw))
	case !okH || badHash != nil:
		return b, decodeFailed(RuleRefusal, "the refusal's body_content_hash %s is not a digest", orRawNull(o.Get("body_content_hash").Raw))
	case o.Get("call").Exists() && o.Get("call").Type != jString:
		return b, decodeFailed(RuleRefusal, "the refusal's call %s is not a string", o.Get("call").Raw)
	}
	return b, nil
}

// retained decodes a line that retains a value under its content hash: a
// system prompt (a string), or a manifest, Harn's tool schemas or a served
// message (any JSON value).
func (l *Line) retained(o *object) *manifest.RuleError {
	member := map[string]string{chain.KindSystemPrompt: "content", chain.KindContextManifest: "manifest",
		"tool_schemas": "schemas", "served_message": "message"}[l.Kind]
	h, ok := digestOf(o.Get("content_hash"))
	if !ok {
		return decodeFailed(RuleContentHash, "%s's content_hash %s is not a digest", l.Kind, orRawNull(o.Get("content_hash").Raw))
	}
	v := o.Get(member)
	if l.Kind == chain.KindSystemPrompt {
		if v.Type != jString {
			return decodeFailed(RuleContentHash, "system_prompt's content %s is not a string", orRawNull(v.Raw))
		}
		l.Body = &SystemPrompt{Content: v.Str, ContentHash: h}
		return nil
	}
	if !v.Exists() {
		return decodeFailed(RuleContentHash, "%s has no %s", l.Kind, member)
	}
	l.Body = &Retained{Value: []byte(v.Raw), ContentHash: h}
	return nil
}

// answer decodes a response, an error or an attempt: what every one holds
// (its session and call, and the request it answers), then its own.
func (l *Line) answer(o *object, sessOK bool) *manifest.RuleError {
	call := o.Get("call")
	switch {
	case !sessOK:
		return decodeFailed(RuleOutcome, "%s's session %s is not a string", l.Kind, orRawNull(o.Get("session").Raw))
	case call.Type != jString:
		return decodeFailed(RuleOutcome, "%s's call %s is not a string", l.Kind, orRawNull(call.Raw))
	}
	seq, ok := intField(o.Get("request_seq"))
	if !ok {
		return decodeFailed(RuleOutcome, "%s's request_seq %s is not a line number", l.Kind, orRawNull(o.Get("request_seq").Raw))
	}
	rh, ok := digestOf(o.Get("request_hash"))
	if !ok {
		return decodeFailed(RuleOutcome, "%s's request_hash %s is not a digest", l.Kind, orRawNull(o.Get("request_hash").Raw))
	}
	if l.Kind == chain.KindAttempt {
		n, ok := intField(o.Get("attempt"))
		if !ok {
			return decodeFailed(RuleOutcome, "provider_call_attempt's attempt %s is not a count", orRawNull(o.Get("attempt").Raw))
		}
		f := o.Get("failure")
		if !f.IsObject() {
			return decodeFailed(RuleOutcome, "provider_call_attempt's failure %s is not an object", orRawNull(f.Raw))
		}
		l.Body = &Attempt{RequestSeq: seq, RequestHash: rh, Number: n, Failure: []byte(f.Raw)}
		return nil
	}
	field := "response"
	if l.Kind == chain.KindError {
		field = "error"
	}
	b := Outcome{RequestSeq: seq, RequestHash: rh}
	v := o.Get(field)
	if !v.IsObject() {
		return decodeFailed(RuleOutcomeContentHash, "%s's %s %s is not an object", l.Kind, field, orRawNull(v.Raw))
	}
	b.Value = []byte(v.Raw)
	if b.ContentHash, ok = digestOf(o.Get(field + "_content_hash")); !ok {
		return decodeFailed(RuleOutcomeContentHash, "%s's %s_content_hash %s is not a digest", l.Kind, field, orRawNull(o.Get(field+"_content_hash").Raw))
	}
	if body := o.Get("body"); body.Exists() {
		if body.Type != jString {
			return decodeFailed(RuleOutcomeContentHash, "%s's body %s is not a string", l.Kind, body.Raw)
		}
		if _, ok = digestOf(o.Get("body_content_hash")); !ok {
			return decodeFailed(RuleOutcomeContentHash, "%s's body_content_hash %s is not a digest", l.Kind, orRawNull(o.Get("body_content_hash").Raw))
		}
		b.Body = body.Str
	}
	l.Body = &b
	return nil
}

// digestOf reads a value that must be a digest string ("blake3:" and 64
// lowercase hex digits).
func digestOf(v value) (digest.Digest, bool) {
	if v.Type != jString {
		return digest.Digest{}, false
	}
	d, err := digest.Parse(v.Str)
	return d, err == nil
}

// decodeFailed is Decode's error: a rule, and what the line breaks of it.
func decodeFailed(rule manifest.Rule, format string, args ...any) *manifest.RuleError {
	return &manifest.RuleError{Rule: rule, Offset: -1, Detail: fmt.Sprintf(format, args...)}
}
