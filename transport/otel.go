package transport

import (
	"context"
	"errors"
	"net/url"
	"strconv"

	"github.com/promptloom/promptloom/internal/wire"
	"github.com/promptloom/promptloom/payload"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// The span of a logical call follows the OpenTelemetry GenAI semantic
// conventions (semconv v1.41.0, the spans of "Generative AI inference"):
// named "{gen_ai.operation.name} {gen_ai.request.model}", of kind client,
// with the operation, provider, model, stream flag and server (address and
// port) when it starts and
// the response id, model, finish reasons and usage when it ends. Its
// gen_ai.usage.input_tokens counts every input token, the cached ones
// included, as the conventions ask (payload.Usage.Prompt).
//
// promptloom's own attributes say which prompt was sent: the manifest's
// content hash, its whole-prompt digest, the included fragments' ids, and
// the transcript line of the call's request (its seq: its line number in
// a file one journal wrote), so a trace leads to the transcript and the
// transcript to the fragments. docs/opentelemetry.md lists them all.
const (
	tracerName = "github.com/promptloom/promptloom/transport"

	attrManifestHash  = attribute.Key("promptloom.manifest.content_hash")
	attrWholePrompt   = attribute.Key("promptloom.manifest.whole_prompt_digest")
	attrIncluded      = attribute.Key("promptloom.manifest.included")
	attrCall          = attribute.Key("promptloom.call.name")
	attrUnattributed  = attribute.Key("promptloom.call.unattributed")
	attrTranscriptSeq = attribute.Key("promptloom.transcript.line")

	attrCacheRead        = attribute.Key("promptloom.cache.predicted.read_tokens")
	attrCacheWrite       = attribute.Key("promptloom.cache.predicted.write_tokens")
	attrCacheReadThrough = attribute.Key("promptloom.cache.read_through")
	attrCacheBlame       = attribute.Key("promptloom.cache.blame")
	attrCacheEstimate    = attribute.Key("promptloom.cache.estimate")
)

// span is one logical call's span (nil: none).
type span struct {
	s     trace.Span
	shape payload.Provider
}

// startSpan starts the span of a logical call when o.TracerProvider is
// set, returning the context carrying it.
func startSpan(ctx context.Context, o *Options, c *spanCall) (context.Context, *span) {
	if o == nil || o.TracerProvider == nil || c == nil {
		return ctx, nil
	}
	host := ""
	if c.Server != nil {
		host = c.Server.Host
	}
	provider, operation := wire.GenAI(string(c.Request.Provider), host)
	attrs := []attribute.KeyValue{
		semconv.GenAIOperationNameKey.String(operation),
		semconv.GenAIProviderNameKey.String(provider),
		semconv.GenAIRequestModel(c.Model),
		semconv.GenAIRequestStream(c.Stream),
		attrCall.String(c.Call),
		attrTranscriptSeq.Int64(c.RequestSeq),
	}
	attrs = append(attrs, requestParams(c.Request)...)
	if u := c.Server; u != nil && u.Hostname() != "" {
		attrs = append(attrs, semconv.ServerAddress(u.Hostname()))
		if port := serverPort(u); port > 0 {
			attrs = append(attrs, semconv.ServerPort(port))
		}
	}
	if v := c.Verdict; v != nil {
		attrs = append(attrs, attrCacheRead.Int(v.Predicted.Read), attrCacheWrite.Int(v.Predicted.Write), attrCacheEstimate.Bool(v.Estimate))
		if v.ReadThrough != "" {
			attrs = append(attrs, attrCacheReadThrough.String(v.ReadThrough))
		}
		if len(v.Blame) > 0 {
			blame := make([]string, len(v.Blame))
			for i, b := range v.Blame {
				blame[i] = b.Kind + ": " + b.Reason
			}
			attrs = append(attrs, attrCacheBlame.StringSlice(blame))
		}
	}
	if o.CaptureContent {
		// Opt-in, as the conventions ask: bodies are not redacted for
		// exporters the way transcripts are.
		if len(c.Request.Tools) > 0 {
			attrs = append(attrs, semconv.GenAIToolDefinitionsKey.String(string(c.Request.Tools)))
		}
		if len(c.Request.Messages) > 0 {
			attrs = append(attrs, semconv.GenAIInputMessagesKey.String(string(c.Request.Messages)))
		}
	}
	if c.Manifest == nil {
		attrs = append(attrs, attrUnattributed.Bool(true))
	} else {
		attrs = append(attrs, attrManifestHash.String(c.ManifestHash), attrWholePrompt.String(c.WholePromptDigest),
			attrIncluded.StringSlice(c.Included))
		if o.CaptureContent {
			attrs = append(attrs, instructions(c.Parts))
		}
	}
	name := operation
	if c.Model != "" {
		name += " " + c.Model
	}
	tracer := o.TracerProvider.Tracer(tracerName, trace.WithSchemaURL(semconv.SchemaURL))
	ctx, s := tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return ctx, &span{s: s, shape: c.Request.Provider}
}

// instructions is gen_ai.system_instructions in the structured form the
// conventions ask for where attributes can hold it (OpenTelemetry Go's
// slices and maps): the system instructions schema's array of text parts,
// {"type": "text", "content": ...}, one part per included fragment.
func instructions(parts []string) attribute.KeyValue {
	vs := make([]attribute.Value, 0, len(parts))
	for _, p := range parts {
		vs = append(vs, attribute.MapValue(attribute.String("type", "text"), attribute.String("content", p)))
	}
	return semconv.GenAISystemInstructionsKey.Slice(vs...)
}

// endSpan ends a span started by startSpan; a nil span is a no-op.
func endSpan(s *span, r *spanResult) {
	if s == nil || s.s == nil {
		return
	}
	defer s.s.End()
	if r == nil {
		return
	}
	if r.Status > 0 {
		s.s.SetAttributes(semconv.HTTPResponseStatusCode(r.Status))
	}
	if resp := r.Response; resp != nil {
		if resp.ID != "" {
			s.s.SetAttributes(semconv.GenAIResponseID(resp.ID))
		}
		if resp.Model != "" {
			s.s.SetAttributes(semconv.GenAIResponseModel(resp.Model))
		}
		if resp.StopReason != "" {
			s.s.SetAttributes(semconv.GenAIResponseFinishReasons(resp.StopReason))
		}
		if u := resp.Usage; u != nil {
			s.s.SetAttributes(semconv.GenAIUsageInputTokens(u.Prompt(s.shape)), semconv.GenAIUsageOutputTokens(u.OutputTokens),
				semconv.GenAIUsageCacheReadInputTokens(u.CacheReadTokens),
				semconv.GenAIUsageCacheCreationInputTokens(u.CacheWriteTokens))
		}
	}
	if r.Err != nil {
		s.s.SetAttributes(semconv.ErrorTypeKey.String(errorType(r)))
		s.s.SetStatus(codes.Error, r.Err.Error())
	}
}

// requestParams are the gen_ai.request.* sampling attributes a request
// body names (wire.SamplingOf reads them where each provider's API puts
// them). A parameter the body does not name is not set.
func requestParams(r *payload.Request) []attribute.KeyValue {
	s := wire.SamplingOf(r)
	var out []attribute.KeyValue
	if s.MaxTokens != nil {
		out = append(out, semconv.GenAIRequestMaxTokens(*s.MaxTokens))
	}
	for _, f := range []struct {
		v   *float64
		set func(float64) attribute.KeyValue
	}{{s.Temperature, semconv.GenAIRequestTemperature}, {s.TopP, semconv.GenAIRequestTopP}, {s.TopK, semconv.GenAIRequestTopK},
		{s.FrequencyPenalty, semconv.GenAIRequestFrequencyPenalty}, {s.PresencePenalty, semconv.GenAIRequestPresencePenalty}} {
		if f.v != nil {
			out = append(out, f.set(*f.v))
		}
	}
	if s.Seed != nil {
		out = append(out, semconv.GenAIRequestSeed(*s.Seed))
	}
	if s.Choices != nil && *s.Choices != 1 {
		out = append(out, semconv.GenAIRequestChoiceCount(*s.Choices)) // set when not 1, as the conventions say
	}
	if s.Stop != nil {
		out = append(out, semconv.GenAIRequestStopSequences(s.Stop...))
	}
	return out
}

// serverPort is the URL's port, or its scheme's (0: neither).
func serverPort(u *url.URL) int {
	if p, err := strconv.Atoi(u.Port()); err == nil {
		return p
	}
	switch u.Scheme {
	case "https":
		return 443
	case "http":
		return 80
	}
	return 0
}

// errorType is error.type: the HTTP status of an error answer, else what
// ended the call, in few values as the conventions want.
func errorType(r *spanResult) string {
	switch {
	case r.Status >= 400:
		return strconv.Itoa(r.Status)
	case errors.Is(r.Err, context.Canceled):
		return "cancelled"
	case errors.Is(r.Err, context.DeadlineExceeded):
		return "timeout"
	}
	return "_OTHER"
}
