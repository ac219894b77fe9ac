package cli

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// otlpTracing is where the proxy's spans go: an OTLP/HTTP exporter behind
// a batch processor, when the environment names an OTLP endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), as
// every OpenTelemetry SDK reads it. The exporter reads the rest of
// OTEL_EXPORTER_OTLP_* itself (headers, protocol, timeout, compression,
// certificates), so the proxy is configured as any other service a team
// runs. Without an endpoint, or with OTEL_SDK_DISABLED=true or
// OTEL_TRACES_EXPORTER=none, the provider is nil and nothing is
// constructed: no goroutine, no connection.
//
// shutdown flushes the spans still batched and stops the exporter; it is
// never nil.
func otlpTracing(ctx context.Context) (tp trace.TracerProvider, shutdown func(context.Context) error, err error) {
	// The exporter reads the environment itself: so does this, not a
	// copy that could disagree with it.
	getenv := os.Getenv
	none := func(context.Context) error { return nil }
	if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return nil, none, nil
	}
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return nil, none, nil
	}
	switch exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exp {
	case "", "otlp":
	case "none":
		return nil, none, nil
	default:
		return nil, nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: the proxy exports spans over OTLP only (otlp, or none)", exp)
	}
	protocol := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		protocol = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch protocol = strings.TrimSpace(protocol); protocol {
	case "", "http/protobuf", "http/json":
	default:
		// gRPC would link a gRPC stack into every promptloom binary for
		// what a collector's HTTP port (4318) takes as well; a protocol
		// the exporter does not speak must not pass for one it does.
		return nil, nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s: the proxy exports over http/protobuf or http/json (a collector's port 4318)", protocol)
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("the OTLP exporter: %w", err)
	}
	// service.name is promptloom unless OTEL_SERVICE_NAME or
	// OTEL_RESOURCE_ATTRIBUTES say otherwise: the environment is applied
	// last, and the last value wins.
	res, err := resource.New(ctx, resource.WithTelemetrySDK(),
		resource.WithAttributes(semconv.ServiceName("promptloom")), resource.WithFromEnv())
	if err != nil {
		_ = exp.Shutdown(ctx)
		return nil, nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	sdk := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return sdk, sdk.Shutdown, nil
}

// flushSpans sends the spans still batched when the proxy stops. It waits
// at most flushWait: a collector that is down must not hold the proxy
// past its grace, and the calls are in the transcript whatever becomes
// of their spans.
func (e *env) flushSpans(shutdown func(context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), flushWait)
	defer cancel()
	if err := shutdown(ctx); err != nil {
		fmt.Fprintf(e.stderr, "promptloom: proxy: sending the last spans over OTLP: %v\n", err)
	}
}

// flushWait is the exporter's own default timeout for one export.
const flushWait = 10 * time.Second

// traceContext continues a client's trace: a call that comes with a W3C
// traceparent (an agent instrumented with OpenTelemetry sends one) has
// its span made a child of the client's, so a backend shows the model
// call inside the agent's turn. Without tracing it is h itself.
func traceContext(h http.Handler, tp trace.TracerProvider) http.Handler {
	if tp == nil {
		return h
	}
	var tc propagation.TraceContext
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(tc.Extract(r.Context(), propagation.HeaderCarrier(r.Header))))
	})
}
