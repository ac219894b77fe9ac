// Package payload is the provider boundary: the system text as it sits in a
// provider request body, after provider-specific placement. Harn calls that
// boundary llm_request_payload_egress.
//
// Extract reads the system channel out of a real request body (Anthropic
// Messages, OpenAI Chat Completions, OpenAI Responses, Gemini), as the
// official SDKs write it; Verify holds those bytes to a manifest, projecting
// the manifest onto them (manifest.ForEgress) when only their placement
// changed them; SystemDigest is the payload-side digest a transcript records.
// Place and Field build a provider's system field from a reduction, with
// Anthropic's cache_control breakpoints placed at fragment boundaries.
//
// The rules that turn blocks, parts and messages into one string are in
// docs/payload.md. The package reads bodies with gjson after checking them
// with encoding/json, and imports no provider SDK.
package payload

import (
	"errors"
	"fmt"
	"strings"
)

// Provider names a request-body shape.
type Provider string

// The shapes Extract reads. Auto (the empty Provider) detects the shape.
const (
	Auto            Provider = ""
	Anthropic       Provider = "anthropic"
	OpenAIChat      Provider = "openai-chat"
	OpenAIResponses Provider = "openai-responses"
	Gemini          Provider = "gemini"
)

// Providers lists the shapes.
var Providers = []Provider{Anthropic, OpenAIChat, OpenAIResponses, Gemini}

// AnthropicMaxBreakpoints is Anthropic's limit of cache_control breakpoints
// in one request.
const AnthropicMaxBreakpoints = 4

// ParseProvider returns the Provider named s; "" and "auto" are Auto.
func ParseProvider(s string) (Provider, error) {
	if s == "" || s == "auto" {
		return Auto, nil
	}
	for _, p := range Providers {
		if string(p) == s {
			return p, nil
		}
	}
	return Auto, &ProviderError{Name: s}
}

// Sentinels: errors.Is(err, ErrMalformed) and so on match every error of
// that kind.
var (
	// ErrMalformed: the body is not JSON, or a field of the system channel
	// has the wrong type.
	ErrMalformed = errors.New("malformed request body")
	// ErrNoSystem: the body has no recognisable system channel.
	ErrNoSystem = errors.New("no system channel")
	// ErrMismatch: the system bytes do not match the manifest. The error
	// also matches manifest.ErrInvalid through the rule it wraps.
	ErrMismatch = errors.New("system channel does not match the manifest")
	// ErrUnknownProvider: a provider name that is not one of Providers.
	ErrUnknownProvider = errors.New("unknown provider")
)

// MalformedError is a body that is not JSON (Path "", Offset where the
// syntax breaks) or whose system channel has a field of the wrong type
// (Path names it in gjson syntax, e.g. "system.1.text").
type MalformedError struct {
	Provider Provider
	Path     string
	Offset   int64
	Msg      string
}

func (e *MalformedError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("%v: %s at byte %d", ErrMalformed, e.Msg, e.Offset)
	}
	return fmt.Sprintf("%v: %s: %s: %s", ErrMalformed, e.Provider, e.Path, e.Msg)
}

// Is matches ErrMalformed.
func (e *MalformedError) Is(t error) bool { return t == ErrMalformed }

// NoSystemError is a body with no system channel: Provider is the shape
// asked for or detected, Auto when no shape was recognised.
type NoSystemError struct {
	Provider Provider
}

func (e *NoSystemError) Error() string {
	switch e.Provider {
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
	return fmt.Sprintf("%s: no system channel", e.Provider)
}

// Is matches ErrNoSystem.
func (e *NoSystemError) Is(t error) bool { return t == ErrNoSystem }

// ProviderError is an unknown provider name.
type ProviderError struct{ Name string }

func (e *ProviderError) Error() string {
	names := make([]string, len(Providers))
	for i, p := range Providers {
		names[i] = string(p)
	}
	return fmt.Sprintf("%v %q (want %s)", ErrUnknownProvider, e.Name, strings.Join(names, ", "))
}

// Is matches ErrUnknownProvider.
func (e *ProviderError) Is(t error) bool { return t == ErrUnknownProvider }

// MismatchError says where the system bytes first differ from the
// manifest: Fragment is the first included segment whose bytes do not
// match (empty when every segment matches and bytes follow the last one),
// Offset where it starts in the channel's text. Err is the manifest rule
// that broke.
type MismatchError struct {
	Provider Provider
	Fragment string
	Offset   int
	Err      error
}

func (e *MismatchError) Error() string {
	where := fmt.Sprintf("fragment %q at byte %d", e.Fragment, e.Offset)
	if e.Fragment == "" {
		where = fmt.Sprintf("bytes after the last fragment at byte %d", e.Offset)
	}
	return fmt.Sprintf("%s: system channel differs from the manifest: %s: %v", e.Provider, where, e.Err)
}

// Is matches ErrMismatch.
func (e *MismatchError) Is(t error) bool { return t == ErrMismatch }

// Unwrap returns the manifest rule that broke.
func (e *MismatchError) Unwrap() error { return e.Err }
