package payload

import (
	"bytes"
	"strings"
	"unicode/utf8"

	pjson "github.com/promptloom/promptloom/internal/json"
)

// The providers' cache diagnostics, named as their documentation names
// them (docs/caching.md, "The provider's verdict"), in this one place: a
// name the providers change is one line to correct.
const (
	// Anthropic: the request's diagnostics object names the previous
	// response; the answer's diagnostics.cache_miss_reason says where the
	// two requests diverged, with its type and an estimate of the input
	// tokens after the divergence. The beta header turns it on.
	anthropicDiagnostics     = "diagnostics"
	anthropicPrevious        = "previous_message_id"
	anthropicMissReason      = "cache_miss_reason"
	anthropicMissType        = "type"
	anthropicMissedTokens    = "cache_missed_input_tokens"
	anthropicBetaHeader      = "anthropic-beta"
	anthropicDiagnosticsBeta = "cache-diagnosis-2026-04-07"
	// OpenAI (Responses, GPT-5.6 and later): prompt_cache_options names
	// the response to compare with; the answer's prompt_cache_diagnostics
	// has a type, and for a miss a reason and the tokens it cost.
	openAIOptions      = "prompt_cache_options"
	openAIComparison   = "comparison_response_id"
	openAIDiagnostics  = "prompt_cache_diagnostics"
	openAIType         = "type"
	openAIMiss         = "cache_miss"
	openAIReason       = "reason"
	openAIMissedTokens = "cache_missed_tokens"
	// pending is promptloom's word for Anthropic's cache_miss_reason null:
	// the comparison was still running when the answer was written.
	pending = "pending"
)

// missPlaces is what each reason says changed, in promptloom's words:
// the sections of the request (tools, system, messages) or the request
// members (the model and the settings package cache reads) a change in
// which it reports. A reason with neither, cache_hit, says nothing
// changed. A reason absent (previous_message_not_found, unavailable,
// comparison_response_not_found, pending, one not documented) concludes
// nothing.
var missPlaces = map[string]struct{ sections, settings []string }{
	// Both providers.
	"tools_changed": {sections: []string{"tools"}},
	// Anthropic's model_changed covers its speed too.
	"model_changed": {settings: []string{"model", "speed"}},
	// Anthropic.
	"system_changed":   {sections: []string{"system"}},
	"messages_changed": {sections: []string{"messages"}},
	// OpenAI: its instructions and input are one "input".
	"input_changed":            {sections: []string{"system", "messages"}},
	"prompt_cache_key_changed": {settings: []string{"prompt_cache_key"}},
	"text_format_changed":      {settings: []string{"text", "response_format"}},
	"reasoning_effort_changed": {settings: []string{"reasoning", "reasoning_effort"}},
	"verbosity_changed":        {settings: []string{"text", "verbosity"}},
	"context_compacted":        {sections: []string{"messages"}, settings: []string{"context_management"}},
	"service_tier_changed":     {settings: []string{"service_tier"}},
	"cache_hit":                {},
}

// missPlacesOf says where a provider's verdict (Usage.CacheMissReason)
// places the change it found, in promptloom's words: the sections of the
// request and the request members (model, tool_choice, text, …) a change
// in which the reason reports. ok is false when there is no verdict, or
// one that concludes nothing (the response compared with was not found,
// the comparison was unavailable or still running); a conclusive verdict
// with no place (OpenAI's cache_hit) says nothing changed.
func missPlacesOf(reason string) (sections, settings []string, ok bool) {
	p, ok := missPlaces[reason]
	return p.sections, p.settings, ok
}

// anthropicVerdict reads Anthropic's diagnostics object d (of a message,
// or of a stream's message_start or message_delta) into u. An absent or
// null object is no verdict: the API leaves it out both when it was not
// asked for and when it found nothing, and the two cannot be told apart.
func anthropicVerdict(u *Usage, d node) {
	if u == nil || !d.isObject() {
		return
	}
	r := d.field(anthropicMissReason)
	switch {
	case r.raw == "null":
		u.CacheMissReason, u.CacheMissedTokens = pending, 0
	case r.isObject():
		if t := r.field(anthropicMissType).str(); t != "" {
			u.CacheMissReason, u.CacheMissedTokens = strings.Clone(t), max(r.field(anthropicMissedTokens).integer(), 0)
		}
	}
}

// openAIVerdict reads OpenAI's prompt_cache_diagnostics d into u: a
// miss's reason, or for any other outcome its type.
func openAIVerdict(u *Usage, d node) {
	if u == nil || !d.isObject() {
		return
	}
	t := d.field(openAIType).str()
	if t == openAIMiss {
		t = d.field(openAIReason).str()
		u.CacheMissedTokens = max(d.field(openAIMissedTokens).integer(), 0)
	}
	u.CacheMissReason = strings.Clone(t)
}

// askDiagnostics is the body with the provider's cache diagnostics asked
// for, against the response whose id is previous (the one before it in
// its conversation), for a proxy that asks on its clients' behalf:
//
//   - Anthropic: a top-level diagnostics object naming previous (null when
//     previous is "": the first call of a conversation, which must ask too
//     for the next to be compared with it), and the beta header to add:
//     header "anthropic-beta", value its beta's name, to be joined with a
//     comma to any anthropic-beta the request carries.
//   - OpenAI Responses: prompt_cache_options.comparison_response_id,
//     added to the request's prompt_cache_options (its mode and ttl kept);
//     no header. With previous "" there is nothing to compare with.
//
// The rest of the body is its bytes as read, the member added before the
// object's closing brace. added is false, and body is the body as read,
// when nothing was added: another shape (OpenAI Chat, Gemini: no
// diagnostics documented), an id that is not UTF-8, a request that asks
// already (its own
// diagnostics or comparison_response_id is kept, not replaced), or a
// prompt_cache_options that is not an object (the provider's to judge).
func (r *Request) askDiagnostics(previous string) (body []byte, header, value string, added bool) {
	if r.unread() != nil || !utf8.ValidString(previous) {
		// Not a Request Read made; or an id no provider gave (a body
		// must be UTF-8, and the id is written as it is).
		return r.bytes(), "", "", false
	}
	switch r.Provider {
	case Anthropic:
		if r.root.get(anthropicDiagnostics).exists() {
			return r.body, "", "", false
		}
		member := append(pjson.AppendString(nil, anthropicDiagnostics), `:{`...)
		member = append(pjson.AppendString(member, anthropicPrevious), ':')
		if previous == "" {
			member = append(member, "null"...)
		} else {
			member = pjson.AppendString(member, previous)
		}
		member = append(member, '}')
		return insertMember(r.body, closingBrace(r.body), len(r.root.members) == 0, member), anthropicBetaHeader, anthropicDiagnosticsBeta, true
	case OpenAIResponses:
		if previous == "" {
			return r.body, "", "", false
		}
		inner := append(pjson.AppendString(nil, openAIComparison), ':')
		inner = pjson.AppendString(inner, previous)
		opts := r.root.get(openAIOptions)
		switch {
		case !opts.exists():
			member := append(append(pjson.AppendString(nil, openAIOptions), ":{"...), inner...)
			return insertMember(r.body, closingBrace(r.body), len(r.root.members) == 0, append(member, '}')), "", "", true
		case opts.isObject() && !opts.field(openAIComparison).exists():
			return insertMember(r.body, opts.at+len(opts.raw)-1, opts.empty(), inner), "", "", true
		}
	}
	return r.body, "", "", false
}

// insertMember is body with member written before the closing brace at
// byte closing of an object; empty says the object has no member yet (no
// comma before it).
func insertMember(body []byte, closing int, empty bool, member []byte) []byte {
	out := make([]byte, 0, len(body)+len(member)+1)
	out = append(out, body[:closing]...)
	if !empty {
		out = append(out, ',')
	}
	return append(append(out, member...), body[closing:]...)
}

// closingBrace is where the body's top-level object ends (Read checked
// it is one, white space around it allowed).
func closingBrace(body []byte) int {
	return len(bytes.TrimRight(body, " \t\r\n")) - 1
}
