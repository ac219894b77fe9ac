// Package transport records every provider call an official SDK makes:
// an http.RoundTripper, in the manner of otelhttp's NewTransport, that
// wraps the SDK's HTTP client.
//
// The harness puts the call's explanation (or manifest) on the request's
// context with With. RoundTrip reads the request body, finds the provider
// from the URL and the body (Anthropic Messages, OpenAI Chat Completions
// and Responses, Gemini generateContent and streamGenerateContent), holds
// the body's system channel to the manifest and the body's tool names to
// the tools the prompt was gated on, and fails closed before anything
// leaves: a stale prompt, a tool sent whose guidance was gated out, or
// guidance kept for a tool not sent, is an error from RoundTrip matching
// journal.ErrStaleManifest, whose *manifest.RuleError names the fragment
// (ID) and the tool (Got), and nothing is sent or journaled. The tools'
// rules are "tool_gated_out" and "tool_not_sent":
// errors.Is(err, manifest.Rule("tool_not_sent")) tells them apart. A request without a Call on its
// context is sent and recorded as unattributed (its body's digest only).
//
// The response is journaled as it came: the raw body (JSON, or the server
// sent events as received, assembled when the stream ends) and a summary
// (stop reason, text, tool calls, usage with the cache tokens). The SDK
// reads the server's bytes as they arrive; nothing is buffered in front
// of it. A stream closed early, a cancelled context and a transport error
// are recorded as what they are, and an SDK's retries are attempts of one
// logical call. docs/transport.md describes it.
package transport

import (
	"context"
	"net/http"
	"time"

	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/manifest"

	"go.opentelemetry.io/otel/trace"
)

// Options configure a transport. The zero value (or nil) is the default.
type Options struct {
	// TracerProvider, when set, gives each logical call a span following
	// the OpenTelemetry GenAI semantic conventions, with promptloom's own
	// attributes (the manifest's content hash, the whole-prompt digest,
	// the included fragments, the transcript line). Nil: no spans.
	TracerProvider trace.TracerProvider
	// CaptureContent puts the system prompt on the span as
	// gen_ai.system_instructions, one part per included fragment. Off by
	// default: span exporters are not redacted the way transcripts are.
	CaptureContent bool
	// MaxBodyBytes bounds the request body RoundTrip reads to check it (0:
	// promptloom.DefaultMaxBytes); a larger one is refused, matching
	// promptloom.ErrTooLarge.
	MaxBodyBytes int
	// RetryWindow is how long a failed attempt that an SDK would retry
	// (408, 409, 429, 5xx, a transport error) waits for its retry before it
	// is recorded as the call's outcome (0: one minute). An attempt the
	// SDK will not retry is recorded at once.
	RetryWindow time.Duration
}

// Call is what a harness says about one logical call: put it on the
// request's context with With. The transport keeps the call's retries on
// it, so a Call is for one call (make a new one each turn).
type Call struct {
	// Name names the call in the transcript ("turn-2"); empty is the
	// manifest's call role.
	Name string
	// Explanation is the prompt the call was built from. Without one,
	// Manifest and System say what the prompt is.
	Explanation *explain.Explanation
	Manifest    *manifest.Manifest
	System      string
}

// With returns ctx carrying c, for the request RoundTrip is given.
func With(ctx context.Context, c *Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

type callKey struct{}

// New returns a RoundTripper that records every call it carries in j and
// sends it through base (nil: http.DefaultTransport).
func New(base http.RoundTripper, j *journal.Journal, o *Options) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	if o == nil {
		o = &Options{}
	}
	return &roundTripper{base: base, j: j, opts: *o}
}

type roundTripper struct {
	base http.RoundTripper
	j    *journal.Journal
	opts Options
}

// spanCall describes one logical call to the span hooks (otel.go).
type spanCall struct {
	// Operation is gen_ai.operation.name ("chat", "generate_content");
	// Provider is gen_ai.provider.name ("anthropic", "openai",
	// "gcp.gemini"); Model is the request's model; Stream says the
	// response is a stream of server sent events.
	Operation, Provider, Model string
	Stream                     bool
	// Call is the call's name; Manifest is nil for an unattributed call.
	Call     string
	Manifest *manifest.Manifest
	// ManifestHash is the content hash of the manifest retained;
	// WholePromptDigest the manifest's whole-prompt digest; Included the
	// ids of the included fragments, in order, and Parts their text (the
	// system prompt split at the fragments' boundaries).
	ManifestHash, WholePromptDigest string
	Included, Parts                 []string
	// RequestSeq is the transcript line (seq) of the call's request.
	RequestSeq int64
}

// spanResult is how a logical call ended, for endSpan. endSpan is called
// once, when the call's outcome is recorded: for a stream, when the SDK
// reads it to its end or closes it, after RoundTrip has returned and maybe
// from another goroutine.
type spanResult struct {
	// Response is the summary recorded (nil when the call failed).
	Response *journal.Response
	// Status is the last attempt's HTTP status (0: none came); Attempts the
	// failed attempts retried before it; Err the call's failure (a
	// transport error, a cancelled context, a stream closed early, an
	// error status), nil when it succeeded.
	Status   int
	Attempts int
	Err      error
	// OutcomeSeq is the transcript line (seq) of its outcome (0: none).
	OutcomeSeq int64
}

// RoundTrip implements http.RoundTripper.
func (t *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, sp := startSpan(req.Context(), &t.opts, &spanCall{})
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	endSpan(sp, &spanResult{Err: err})
	return resp, err
}
