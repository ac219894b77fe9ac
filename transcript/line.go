package transcript

import (
	"github.com/promptloom/promptloom/internal/chain"
)

// Line is one line of a transcript as Decode reads it: the four members
// every promptloom line starts with ({"prev","seq","kind","at",...}), the
// session and call the line names ("" when its kind names none), and its
// kind's own members, typed, in Body.
type Line struct {
	// Prev is the chain hash of the line before ("blake3:" and 64 hex
	// digits; the first line's is all zeros), Seq the line's number in
	// the chain from 1. A Harn event has neither ("" and 0).
	Prev string
	Seq  int64
	// Kind is one of journal_open, system_prompt, context_manifest,
	// provider_call_request, provider_call_attempt, provider_call_response,
	// provider_call_error, provider_call_refused, journal_close and
	// journal_checkpoint (docs/transcript.md), or a Harn event's type; At
	// is when it was written, an RFC 3339 time (a Harn event's timestamp).
	Kind string
	At   string
	// Session and Call are the session and call the line names (a Harn
	// request's call_id).
	Session string
	Call    string
	// Body is the kind's own members: a *Open (journal_open), *Close
	// (journal_close), *SystemPrompt (system_prompt), *Retained
	// (context_manifest; Harn's tool_schemas and served_message),
	// *Request (provider_call_request), *Outcome (provider_call_response
	// and provider_call_error), *Attempt (provider_call_attempt),
	// *Refusal (provider_call_refused; its Line 0) or *Checkpoint
	// (journal_checkpoint); nil for a Harn event of another type. Its
	// []byte and string members share nothing with the line passed in.
	Body any
}

// Decode reads one line of a transcript (without its newline) with
// internal/json, as Verify reads each: a promptloom line (it has "kind"),
// or a Harn event (it has "type" and no "kind"). A line Verify would not
// read (not a JSON object every reader reads alike: RuleUnreadable), a
// promptloom line whose prev, seq, at or kind is missing or not of its
// type (RuleChain, RuleSeq, RuleAt, RuleKind), or a line whose kind's own
// members are missing or not of their type (the rule Verify names for
// each: RuleSessionID, RuleContentHash, RuleReceipt, RuleRequest,
// RuleOutcome, RuleRefusal...) is an error, a *manifest.RuleError. It
// checks types, not claims: it holds a line to nothing around it, and
// re-derives no hash; Verify holds the chain, the sessions and the
// receipts.
func Decode(line []byte) (Line, error) {
	var o object
	if msg := unreadableIn(line, &o.m); msg != "" {
		return Line{}, decodeFailed(RuleUnreadable, "%s", msg)
	}
	if o.value = parse(string(line)); !o.IsObject() {
		return Line{}, decodeFailed(RuleUnreadable, "not a JSON object")
	}
	if !o.Get("kind").Exists() && o.Get("type").Exists() {
		return decodeHarn(&o)
	}
	var l Line
	var ok bool
	if l.Prev, ok = stringField(&o, "prev"); !ok {
		return Line{}, decodeFailed(RuleChain, "no prev")
	}
	if l.Seq, ok = intField(o.Get("seq")); !ok {
		return Line{}, decodeFailed(RuleSeq, "seq %s is not a line number", orRawNull(o.Get("seq").Raw))
	}
	if at := o.Get("at"); at.Type != jString || !validTime(at.Str) {
		return Line{}, decodeFailed(RuleAt, "at %s is not an RFC 3339 time", orRawNull(at.Raw))
	}
	l.At, _ = stringField(&o, "at")
	switch l.Kind, ok = stringField(&o, "kind"); {
	case !ok:
		return Line{}, decodeFailed(RuleKind, "kind %s is not a string", orRawNull(o.Get("kind").Raw))
	case !knownKind(l.Kind):
		return Line{}, decodeFailed(RuleKind, "unknown kind %s", o.Get("kind").Raw)
	}
	l.Session, _ = stringField(&o, "session")
	l.Call, _ = stringField(&o, "call")
	if err := l.body(&o, false); err != nil {
		return Line{}, err
	}
	return l, nil
}

// decodeHarn reads a Harn event: its type is its kind, its timestamp its
// time, a request's call_id its call.
func decodeHarn(o *object) (Line, error) {
	var l Line
	var ok bool
	if l.Kind, ok = stringField(o, "type"); !ok {
		return Line{}, decodeFailed(RuleKind, "type %s is not a string", orRawNull(o.Get("type").Raw))
	}
	l.At, _ = stringField(o, "timestamp")
	switch l.Kind {
	case chain.KindSystemPrompt, chain.KindContextManifest, "tool_schemas", "served_message":
		if err := l.retained(o); err != nil {
			return Line{}, err
		}
	case chain.KindRequest:
		l.Call, _ = stringField(o, "call_id")
		if err := l.body(o, true); err != nil {
			return Line{}, err
		}
	}
	return l, nil
}

// knownKind reports whether kind is one a promptloom transcript has.
func knownKind(kind string) bool {
	switch kind {
	case chain.KindOpen, chain.KindClose, chain.KindSystemPrompt, chain.KindContextManifest,
		chain.KindRequest, chain.KindResponse, chain.KindError, chain.KindAttempt,
		chain.KindRefused, chain.KindCheckpoint:
		return true
	}
	return false
}
