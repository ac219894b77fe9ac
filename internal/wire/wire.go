// Package wire is the door to the parts of the providers' wire that only
// promptloom's own packages call: the transport, the proxy, the request
// manifest and the journal. Users of the library need none of them, so
// they are not in package payload's API, yet what they know stays in
// payload's source: package payload sets each function here when it is
// initialised, and every package that calls one imports payload (for the
// Provider a call names, or the Request it reads), so they are set before
// any is called. A provider is named by its payload.Provider string; a
// request is a *payload.Request.
package wire

import "net/http"

var (
	// WriteError answers w with status in the provider's own error
	// shape, so its SDK raises its usual error with msg as its message;
	// an answer below 500 also says it is not worth retrying.
	WriteError func(w http.ResponseWriter, provider string, status int, msg string)

	// GenAI is how OpenTelemetry's GenAI semantic conventions name a call
	// of the provider's shape sent to host: gen_ai.provider.name and
	// gen_ai.operation.name.
	GenAI func(provider, host string) (name, operation string)

	// MarkKey is the member by which the provider's blocks mark a cache
	// breakpoint ("" for none): a block's digest leaves it out.
	MarkKey func(provider string) string

	// Join is a body of the provider's shape put back together from the
	// members a transcript keeps: parameters, messages, tools and the
	// system channel's members (Retained).
	Join func(provider string, parameters, messages, tools, retained []byte) []byte

	// AskDiagnostics is request's body with the provider's cache
	// diagnostics asked for against the response previous, the header to
	// add, and whether anything was added.
	AskDiagnostics func(request any, previous string) (body []byte, header, value string, added bool)

	// PlaceBreakpoints is request's body with cache breakpoints placed by
	// the provider's documented rules, for a request that sets none, and
	// the pointers of the blocks marked.
	PlaceBreakpoints func(request any) (body []byte, at []string)

	// SamplingOf reads request's sampling parameters where its provider's
	// API puts them.
	SamplingOf func(request any) Sampling

	// Body is the body request was read from (payload.Read keeps it).
	Body func(request any) []byte

	// Retained is the part of request's body its system channel is read
	// from (nil when it has none): what a transcript keeps of it.
	Retained func(request any) []byte

	// MissPlaces says where a provider's cache verdict (its reason, as
	// payload.Usage.CacheMissReason holds it) places the change it found:
	// the sections of the request and the request members a change in
	// which the reason reports. ok is false for no verdict, or one that
	// concludes nothing.
	MissPlaces func(reason string) (sections, settings []string, ok bool)
)

// Sampling is what a request asks of the model's sampling, each read where
// its provider's API puts it (Anthropic Messages and OpenAI's at the top
// level, Gemini's in generationConfig). A field the body does not name is
// nil.
type Sampling struct {
	MaxTokens                                                  *int
	Temperature, TopP, TopK, FrequencyPenalty, PresencePenalty *float64
	Seed                                                       *int
	// Choices is the number of answers asked for (n, candidateCount).
	Choices *int
	Stop    []string
}
