// Package payload is the provider's wire: the only package that knows the
// formats of the providers' request bodies and answers (Anthropic
// Messages, OpenAI Chat Completions, OpenAI Responses, Gemini), as the
// official SDKs write and read them. Harn calls the boundary of the system
// text in a request body llm_request_payload_egress.
//
// Read reads a request body once into a Request, the one view that the
// transport's gate, the journal and the span take: its shape, model,
// system channel (System), tool names, and the byte ranges of its
// messages, tools and parameters; Verify holds the channel to a manifest,
// projecting the manifest onto its bytes (manifest.Manifest.ForEgress) when only
// their placement changed them. Summarize reads an answer, whole
// or streamed. Field builds a provider's system field from a reduction,
// with Anthropic's cache_control breakpoints placed at fragment
// boundaries.
//
// What only promptloom's own packages call (a model endpoint's URL, a
// refusal in the provider's error shape, a span's names and sampling
// attributes, the proxy's changes to a body, what a transcript keeps of a
// body and how it is put back together) is here too, unexported, and set at init as the functions of
// internal/wire, so that no other package knows a provider's format.
//
// The rules that turn blocks, parts and messages into one string are in
// docs/payload.md. Bodies are read with internal/json, in one pass, and
// no provider SDK is imported.
package payload

import (
	"errors"
	"fmt"
	"strings"
)

// Provider names a request-body shape.
type Provider string

// The shapes Read reads. Auto (the empty Provider) detects the shape.
const (
	Auto            Provider = ""
	Anthropic       Provider = "anthropic"
	OpenAIChat      Provider = "openai-chat"
	OpenAIResponses Provider = "openai-responses"
	Gemini          Provider = "gemini"
)

// providers lists the shapes, in the order Auto tries them.
var providers = []Provider{Anthropic, OpenAIChat, OpenAIResponses, Gemini}

// anthropicMaxBreakpoints is Anthropic's limit of cache_control breakpoints
// in one request.
const anthropicMaxBreakpoints = 4

// ParseProvider returns the Provider named s; "" and "auto" are Auto.
func ParseProvider(s string) (Provider, error) {
	if s == "" || s == "auto" {
		return Auto, nil
	}
	for _, p := range providers {
		if string(p) == s {
			return p, nil
		}
	}
	return Auto, &Error{Kind: ErrUnknownProvider, Msg: s}
}

// The kinds of Error: errors.Is(err, ErrMalformed) and so on match every
// error of that kind.
var (
	// ErrMalformed: the body is not JSON, or a field of the system channel
	// has the wrong type.
	ErrMalformed = errors.New("malformed request body")
	// ErrNoSystem: the body has no recognisable system channel.
	ErrNoSystem = errors.New("no system channel")
	// ErrMismatch: the system bytes do not match the manifest. The error
	// also matches manifest.ErrInvalid through the rule it wraps.
	ErrMismatch = errors.New("system channel does not match the manifest")
	// ErrUnknownProvider: a provider name that is not one of the shapes.
	ErrUnknownProvider = errors.New("unknown provider")
)

// Error is the one error of the provider boundary. Kind says which of the
// four it is; the other fields say where, as far as the kind knows it.
type Error struct {
	Kind     error
	Provider Provider
	// Path names the field at fault, its steps joined with dots (e.g.
	// "system.1.text"); empty for the body as a whole.
	Path string
	// Offset is where the fault is: a byte of the body for a malformed
	// one, a byte of the system text for a mismatch; -1 when the fault is
	// at no byte (a Request that Read did not make).
	Offset int64
	// Fragment is the first included segment whose bytes do not match, on
	// a mismatch; empty when every segment matches and bytes follow the
	// last one.
	Fragment string
	// Msg says what is wrong (for an unknown provider: the name given).
	Msg string

	rule error // the manifest rule a mismatch broke
}

// Error says what is wrong for the error's kind, and where.
func (e *Error) Error() string {
	switch e.Kind {
	case ErrMalformed:
		if e.Path == "" && e.Offset < 0 { // not about a byte of a body
			return fmt.Sprintf("%v: %s", ErrMalformed, e.Msg)
		}
		if e.Path == "" {
			return fmt.Sprintf("%v: %s at byte %d", ErrMalformed, e.Msg, e.Offset)
		}
		p := string(e.Provider)
		if e.Provider == Auto {
			p = "auto"
		}
		return fmt.Sprintf("%v: %s: %s: %s", ErrMalformed, p, e.Path, e.Msg)
	case ErrNoSystem:
		return noSystem(e.Provider)
	case ErrUnknownProvider:
		names := make([]string, len(providers))
		for i, p := range providers {
			names[i] = string(p)
		}
		return fmt.Sprintf("%v %q (want auto, %s)", ErrUnknownProvider, e.Msg, strings.Join(names, ", "))
	}
	where := fmt.Sprintf("fragment %q at byte %d", e.Fragment, e.Offset)
	if e.Fragment == "" {
		where = fmt.Sprintf("bytes after the last fragment at byte %d", e.Offset)
	}
	return fmt.Sprintf("%s: system channel differs from the manifest: %s: %v", e.Provider, where, e.rule)
}

// Unwrap is the error's kind and, on a mismatch, the manifest rule it
// broke: errors.Is matches both.
func (e *Error) Unwrap() []error {
	if e.rule == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.rule}
}

// noSystem says what a body of shape p (Auto: none recognised) lacks.
func noSystem(p Provider) string {
	switch p {
	case Auto:
		return "no recognisable system channel (looked for system, systemInstruction, instructions, and messages with role system or developer)"
	case Anthropic:
		return "anthropic: no system channel (no `system`)"
	case OpenAIChat:
		return "openai-chat: no system channel (no message with role system or developer)"
	case OpenAIResponses:
		return "openai-responses: no system channel (no `instructions`, no input message with role system or developer)"
	case Gemini:
		return "gemini: no system channel (no `systemInstruction`)"
	}
	return fmt.Sprintf("%s: no system channel", p)
}

// malformed is an ErrMalformed Error.
func malformed(p Provider, path string, off int64, msg string) *Error {
	return &Error{Kind: ErrMalformed, Provider: p, Path: path, Offset: off, Msg: msg}
}
