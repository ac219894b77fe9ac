package transcript

import (
	"fmt"

	"github.com/promptloom/promptloom/internal/chain"
	"github.com/promptloom/promptloom/manifest"
)

// Line is one line of a promptloom transcript as Decode reads it: the
// four members every line starts with ({"prev","seq","kind","at",...}),
// and the session and call the line names ("" when its kind names none).
// A kind's own members (a request's receipt and body, an answer, a
// checkpoint's note) are read where they are judged: a CallReport, Sent
// (Requests) or a session's log (Logs) holds them verified.
type Line struct {
	// Prev is the chain hash of the line before ("blake3:" and 64 hex
	// digits; the first line's is all zeros), Seq the line's number in
	// the chain from 1.
	Prev string
	Seq  int64
	// Kind is one of journal_open, system_prompt, context_manifest,
	// provider_call_request, provider_call_attempt, provider_call_response,
	// provider_call_error, provider_call_refused, journal_close and
	// journal_checkpoint (docs/transcript.md); At is when it was written,
	// an RFC 3339 time.
	Kind string
	At   string
	// Session and Call are the session and call the line names.
	Session string
	Call    string
}

// Decode reads one line of a promptloom transcript (without its newline)
// with internal/json, as Verify reads each: a line Verify would not read
// (not a JSON object every reader reads alike: RuleUnreadable), or one
// whose prev, seq, at or kind is missing or not of its type (RuleChain,
// RuleSeq, RuleAt, RuleKind, each a *manifest.RuleError), is an error. It
// holds a line to nothing around it; Verify holds the chain.
func Decode(line []byte) (Line, error) {
	fail := func(rule manifest.Rule, format string, args ...any) (Line, error) {
		return Line{}, &manifest.RuleError{Rule: rule, Offset: -1, Detail: fmt.Sprintf(format, args...)}
	}
	var o object
	if msg := unreadableIn(line, &o.m); msg != "" {
		return fail(RuleUnreadable, "%s", msg)
	}
	if o.value = parse(string(line)); !o.IsObject() {
		return fail(RuleUnreadable, "not a JSON object")
	}
	var l Line
	var ok bool
	if l.Prev, ok = stringField(&o, "prev"); !ok {
		return fail(RuleChain, "no prev")
	}
	if l.Seq, ok = intField(o.Get("seq")); !ok {
		return fail(RuleSeq, "seq %s is not a line number", orRawNull(o.Get("seq").Raw))
	}
	if at := o.Get("at"); at.Type != jString || !validTime(at.Str) {
		return fail(RuleAt, "at %s is not an RFC 3339 time", orRawNull(at.Raw))
	}
	l.At, _ = stringField(&o, "at")
	switch l.Kind, ok = stringField(&o, "kind"); {
	case !ok:
		return fail(RuleKind, "kind %s is not a string", orRawNull(o.Get("kind").Raw))
	case !knownKind(l.Kind):
		return fail(RuleKind, "unknown kind %s", o.Get("kind").Raw)
	}
	l.Session, _ = stringField(&o, "session")
	l.Call, _ = stringField(&o, "call")
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
