package transport_test

// The spans, read back with tracetest: one per logical call, named and
// attributed as the GenAI semantic conventions say, with promptloom's own
// attributes leading back to the manifest and the transcript.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/internal/testkit/fakeprovider"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/transport"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
	"github.com/tidwall/gjson"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/genai"
)

// traced is a prompt of three fragments (one gated out), a journal in
// memory, a fake provider, and a transport tracing into a recorder.
type traced struct {
	e      *explain.Explanation
	m      *manifest.Manifest
	system string
	out    *bytes.Buffer
	j      *journal.Journal
	fake   *fakeprovider.Server
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	client anthropic.Client
	rt     *transport.Transport
}

func newTraced(t *testing.T, capture bool, replies ...fakeprovider.Reply) *traced {
	t.Helper()
	e := explained(t, []promptloom.Fragment{
		promptloom.Primary("You are the harness's agent."),
		promptloom.ToolGuidance("read_file", "Read a file before you edit it."),
		promptloom.ToolGuidance("run_shell", "Never run rm -rf."),
		promptloom.SystemItem(0, "Style", "Answer briefly.", promptloom.After),
	}, "read_file")
	g := &traced{e: e, m: e.Manifest, system: e.System, out: new(bytes.Buffer), spans: tracetest.NewSpanRecorder(),
		fake: fakeprovider.New(replies...)}
	t.Cleanup(g.fake.Close)
	g.j = journal.New(g.out, nil)
	g.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(g.spans))
	g.rt = transport.New(nil, g.j, &transport.Options{TracerProvider: g.tp, CaptureContent: capture})
	rt := g.rt
	g.client = anthropic.NewClient(aoption.WithAPIKey("k"), aoption.WithBaseURL(g.fake.URL),
		aoption.WithHTTPClient(&http.Client{Transport: rt}))
	return g
}

func (g *traced) params() anthropic.MessageNewParams {
	return anthropic.MessageNewParams{Model: "claude-sonnet-4-5", MaxTokens: 100,
		System:   []anthropic.TextBlockParam{{Text: g.system}},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Where is main?"))},
		Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "read_file",
			InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"path": map[string]any{"type": "string"}}}}}}}
}

func (g *traced) ctx(name string) context.Context {
	return transport.With(context.Background(), &transport.Call{Name: name, Explanation: g.e})
}

// ended closes the transport, which ends every call's span (a stream's
// ends when the SDK has read it, a failure's when it is recorded), and
// returns the n spans.
func (g *traced) ended(t *testing.T, n int) []sdktrace.ReadOnlySpan {
	t.Helper()
	spans := g.spans.Ended()
	if len(spans) != n || len(g.spans.Started()) != n {
		t.Fatalf("%d spans started, %d ended, want %d", len(g.spans.Started()), len(spans), n)
	}
	return spans
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// requestSeqs are the seq of each provider_call_request line written.
func requestSeqs(t *testing.T, transcript []byte) []int64 {
	t.Helper()
	var seqs []int64
	for _, l := range bytes.Split(transcript, []byte("\n")) {
		if gjson.GetBytes(l, "kind").Str == "provider_call_request" {
			seqs = append(seqs, gjson.GetBytes(l, "seq").Int())
		}
	}
	return seqs
}

var usage = fakeprovider.Usage{Input: 120, Output: 17, CacheRead: 96, CacheWrite: 24}

func TestSpanFollowsGenAIConventions(t *testing.T) {
	g := newTraced(t, false, fakeprovider.Reply{ID: "msg_A", Text: "Reading.", Usage: usage,
		ToolCalls: []fakeprovider.ToolCall{{Name: "read_file", Arguments: `{"path":"main.go"}`}}})
	stream := g.client.Messages.NewStreaming(g.ctx("turn-1"), g.params())
	for stream.Next() {
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	s := g.ended(t, 1)[0]
	if s.Name() != "chat claude-sonnet-4-5" || s.SpanKind() != trace.SpanKindClient || s.Status().Code == codes.Error {
		t.Errorf("span %q, kind %v, status %v", s.Name(), s.SpanKind(), s.Status())
	}
	if s.InstrumentationScope().Name != "github.com/promptloom/promptloom/transport" ||
		!strings.HasPrefix(s.InstrumentationScope().SchemaURL, "https://opentelemetry.io/schemas/1.") {
		t.Errorf("scope %+v", s.InstrumentationScope())
	}
	a := attrs(s)
	if err := g.j.Close(); err != nil {
		t.Fatal(err)
	}
	seqs := requestSeqs(t, g.out.Bytes())
	want := map[attribute.Key]any{
		"gen_ai.operation.name":                    "chat",
		"gen_ai.provider.name":                     "anthropic",
		"gen_ai.request.model":                     "claude-sonnet-4-5",
		"gen_ai.request.stream":                    true,
		"gen_ai.request.max_tokens":                int64(100),
		"gen_ai.response.id":                       "msg_A",
		"gen_ai.response.model":                    "claude-sonnet-4-5",
		"gen_ai.response.finish_reasons":           []string{"tool_use"},
		"gen_ai.usage.input_tokens":                int64(120 + 96 + 24), // every input token, cached ones too
		"gen_ai.usage.output_tokens":               int64(17),
		"gen_ai.usage.cache_read.input_tokens":     int64(96),
		"gen_ai.usage.cache_creation.input_tokens": int64(24),
		"http.response.status_code":                int64(200),
		"server.address":                           "127.0.0.1",
		"server.port":                              int64(g.fake.Listener.Addr().(*net.TCPAddr).Port),
		"promptloom.manifest.whole_prompt_digest":  g.m.WholePromptDigest.String(),
		"promptloom.manifest.included":             []string{"primary", "tool:read_file.guidance", "system[0]"},
		"promptloom.call.name":                     "turn-1",
		"promptloom.transcript.line":               seqs[0],
	}
	for k, v := range want {
		if got, ok := a[k]; !ok || !equalValue(got, v) {
			t.Errorf("%s = %v (present %v), want %v", k, got.AsInterface(), ok, v)
		}
	}
	// The span leads to the request line, and names its manifest as the
	// transcript does.
	for _, l := range bytes.Split(g.out.Bytes(), []byte("\n")) {
		if gjson.GetBytes(l, "seq").Int() == a["promptloom.transcript.line"].AsInt64() {
			if gjson.GetBytes(l, "kind").Str != "provider_call_request" ||
				gjson.GetBytes(l, "served_context.manifest_content_hash").Str != a["promptloom.manifest.content_hash"].AsString() {
				t.Errorf("the span's line is %s", l)
			}
		}
	}
	if _, ok := a["gen_ai.system_instructions"]; ok {
		t.Error("gen_ai.system_instructions without CaptureContent")
	}
	if _, ok := a["promptloom.call.unattributed"]; ok {
		t.Error("an attributed call is marked unattributed")
	}
}

func equalValue(got attribute.Value, want any) bool {
	b1, _ := json.Marshal(got.AsInterface())
	b2, _ := json.Marshal(want)
	return bytes.Equal(b1, b2)
}

// With content capture on, the system prompt is on the span, one part per
// included fragment, the parts together the prompt.
func TestSpanSystemInstructions(t *testing.T) {
	g := newTraced(t, true)
	if _, err := g.client.Messages.New(g.ctx("turn-1"), g.params()); err != nil {
		t.Fatal(err)
	}
	a := attrs(g.ended(t, 1)[0])
	si, ok := a["gen_ai.system_instructions"]
	if !ok || si.Type() != attribute.SLICE {
		t.Fatalf("gen_ai.system_instructions is %v (%v), not a structured array", si.AsInterface(), si.Type())
	}
	parts := si.AsSlice()
	var texts []string
	for _, p := range parts {
		m := map[attribute.Key]string{}
		for _, kv := range p.AsMap() {
			m[kv.Key] = kv.Value.AsString()
		}
		if len(m) != 2 || m["type"] != "text" {
			t.Errorf("part %v", p.AsInterface())
		}
		texts = append(texts, m["content"])
	}
	if len(parts) != 3 || texts[1] != "Read a file before you edit it." || strings.Join(texts, g.m.JoinSeparator) != g.system {
		t.Errorf("parts %q, system %q", texts, g.system)
	}
	if strings.Contains(strings.Join(texts, ""), "rm -rf") {
		t.Error("a fragment gated out is on the span")
	}
}

// A 429 retried is two attempts, each a span: the first failed (429),
// the second OK.
func TestSpanOfARetriedCall(t *testing.T) {
	g := newTraced(t, false, fakeprovider.Reply{Status: 429, Header: fakeprovider.RetryAfter(time.Millisecond)}, fakeprovider.Reply{})
	if _, err := g.client.Messages.New(g.ctx("turn-1"), g.params()); err != nil {
		t.Fatal(err)
	}
	s := g.ended(t, 2)
	if a := attrs(s[0]); a["http.response.status_code"].AsInt64() != 429 || s[0].Status().Code != codes.Error {
		t.Errorf("first attempt: attrs %v, status %v", a, s[0].Status())
	}
	if a := attrs(s[1]); a["http.response.status_code"].AsInt64() != 200 || s[1].Status().Code == codes.Error {
		t.Errorf("retry: attrs %v, status %v", a, s[1].Status())
	}
	if len(g.fake.Requests()) != 2 {
		t.Errorf("%d requests", len(g.fake.Requests()))
	}
}

// A failed call's span says so: the status, error.type, no usage.
func TestSpanOfAFailedCall(t *testing.T) {
	g := newTraced(t, false, fakeprovider.Reply{Status: 400})
	if _, err := g.client.Messages.New(g.ctx("turn-1"), g.params(), aoption.WithMaxRetries(0)); err == nil {
		t.Fatal("a 400 succeeded")
	}
	s := g.ended(t, 1)[0]
	a := attrs(s)
	if s.Status().Code != codes.Error || a["error.type"].AsString() != "400" || a["http.response.status_code"].AsInt64() != 400 {
		t.Errorf("status %v, attrs %v", s.Status(), a)
	}
	if _, ok := a["gen_ai.usage.input_tokens"]; ok {
		t.Error("usage on a failed call")
	}
}

// A stream cancelled mid-way ends its span as cancelled.
func TestSpanOfACancelledStream(t *testing.T) {
	g := newTraced(t, false, fakeprovider.Reply{Text: strings.Repeat("x", 64), StallAfter: 4})
	ctx, cancel := context.WithCancel(g.ctx("turn-1"))
	stream := g.client.Messages.NewStreaming(ctx, g.params())
	for stream.Next() {
		if stream.Current().Type == "content_block_delta" {
			cancel()
		}
	}
	cancel()
	if !errors.Is(stream.Err(), context.Canceled) {
		t.Fatalf("%v", stream.Err())
	}
	s := g.ended(t, 1)[0]
	if a := attrs(s); s.Status().Code != codes.Error || a["error.type"].AsString() != "cancelled" {
		t.Errorf("status %v, attrs %v", s.Status(), a)
	}
}

// The call's span is a child of the harness's span on the context, and a
// call without a manifest is marked unattributed, with no prompt
// attributes.
func TestSpanParentAndUnattributed(t *testing.T) {
	g := newTraced(t, true)
	ctx, parent := g.tp.Tracer("harness").Start(context.Background(), "turn")
	if _, err := g.client.Messages.New(ctx, g.params()); err != nil {
		t.Fatal(err)
	}
	parent.End()
	spans := g.ended(t, 2)
	s := spans[0]
	if s.Parent().SpanID() != parent.SpanContext().SpanID() || s.SpanContext().TraceID() != parent.SpanContext().TraceID() {
		t.Errorf("the call's span is not the harness span's child")
	}
	a := attrs(s)
	if !a["promptloom.call.unattributed"].AsBool() {
		t.Errorf("attrs %v", a)
	}
	for _, k := range []attribute.Key{"promptloom.manifest.content_hash", "promptloom.manifest.included", "gen_ai.system_instructions"} {
		if _, ok := a[k]; ok {
			t.Errorf("%s on an unattributed call", k)
		}
	}
}

// OpenAI's and Gemini's input tokens already count the cached ones; their
// provider names and operations are the conventions'.
func TestSpanOtherProviders(t *testing.T) {
	g := newTraced(t, false, fakeprovider.Reply{Usage: usage}, fakeprovider.Reply{Usage: usage})
	hc := &http.Client{Transport: transport.New(nil, g.j, &transport.Options{TracerProvider: g.tp})}
	oc := openai.NewClient(ooption.WithAPIKey("k"), ooption.WithBaseURL(g.fake.URL+"/v1"), ooption.WithHTTPClient(hc))
	_, err := oc.Chat.Completions.New(g.ctx("turn-1"), openai.ChatCompletionNewParams{Model: "gpt-4.1",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(g.system), openai.UserMessage("hi")},
		Tools:    []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "read_file"})}})
	if err != nil {
		t.Fatal(err)
	}
	gc, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: "k", Backend: genai.BackendGeminiAPI,
		HTTPClient: hc, HTTPOptions: genai.HTTPOptions{BaseURL: g.fake.URL}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = gc.Models.GenerateContent(g.ctx("turn-2"), "gemini-2.5-flash", genai.Text("hi"), &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText(g.system, genai.RoleUser),
		Tools:             []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "read_file"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	spans := g.ended(t, 2)
	for i, want := range []struct{ name, provider, op, finish string }{
		{"chat gpt-4.1", "openai", "chat", "stop"},
		{"generate_content gemini-2.5-flash", "gcp.gemini", "generate_content", "STOP"},
	} {
		a := attrs(spans[i])
		if spans[i].Name() != want.name || a["gen_ai.provider.name"].AsString() != want.provider || a["gen_ai.operation.name"].AsString() != want.op ||
			a["gen_ai.usage.input_tokens"].AsInt64() != 120 || a["gen_ai.usage.cache_read.input_tokens"].AsInt64() != 96 ||
			!equalValue(a["gen_ai.response.finish_reasons"], []string{want.finish}) {
			t.Errorf("span %q: %v", spans[i].Name(), a)
		}
	}
}

// BenchmarkSpan is a call through the transport (a JSON reply, journaled
// to memory) with a tracer provider (spans recorded in memory), and with
// content capture too, each interleaved call by call with the same call
// through a transport without one: x-untraced is the ratio of their
// times, measured in the same run.
func BenchmarkSpan(b *testing.B) {
	e := explained(b, []promptloom.Fragment{
		promptloom.Primary("You are the harness's agent."),
		promptloom.ToolGuidance("read_file", "Read a file before you edit it."),
	}, "read_file")
	r := e.Reduction
	body, _ := json.Marshal(map[string]any{"model": "claude-sonnet-5-5", "max_tokens": 100, "system": r.System,
		"tools":    []any{map[string]any{"name": "read_file", "input_schema": map[string]any{"type": "object"}}},
		"messages": []any{map[string]any{"role": "user", "content": "Where is main?"}}})
	fake := fakeprovider.New()
	defer fake.Close()
	ctx := transport.With(context.Background(), &transport.Call{Explanation: e})
	call := func(b *testing.B, client *http.Client) time.Duration {
		start := time.Now()
		req, _ := http.NewRequestWithContext(ctx, "POST", fake.URL+"/v1/messages", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return time.Since(start)
	}
	for _, capture := range []bool{false, true} {
		b.Run(map[bool]string{false: "span", true: "span+content"}[capture], func(b *testing.B) {
			j := journal.New(io.Discard, nil)
			defer j.Close()
			bare := &http.Client{Transport: transport.New(nil, j, nil)}
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
			traced := &http.Client{Transport: transport.New(nil, j, &transport.Options{TracerProvider: tp, CaptureContent: capture})}
			var without, with time.Duration
			for b.Loop() {
				without += call(b, bare)
				with += call(b, traced)
			}
			b.ReportMetric(float64(with)/float64(without), "x-untraced")
		})
	}
}

// spanOf records the span on each request's context that reaches it.
type spanOf struct {
	base  http.RoundTripper
	mu    sync.Mutex
	spans []trace.SpanContext
}

func (s *spanOf) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.spans = append(s.spans, trace.SpanContextFromContext(r.Context()))
	s.mu.Unlock()
	return s.base.RoundTrip(r)
}

// Each attempt goes to the base transport under its own span: an
// instrumented base nests its HTTP span in it.
func TestAttemptsGoOutUnderTheirSpans(t *testing.T) {
	g := newTraced(t, false, fakeprovider.Reply{Status: 429, Header: fakeprovider.RetryAfter(time.Millisecond)}, fakeprovider.Reply{})
	base := &spanOf{base: http.DefaultTransport}
	rt := transport.New(base, g.j, &transport.Options{TracerProvider: g.tp})
	g.rt = rt
	client := anthropic.NewClient(aoption.WithAPIKey("k"), aoption.WithBaseURL(g.fake.URL), aoption.WithHTTPClient(&http.Client{Transport: rt}))
	if _, err := client.Messages.New(g.ctx("turn-1"), g.params()); err != nil {
		t.Fatal(err)
	}
	s := g.ended(t, 2)
	if len(base.spans) != 2 {
		t.Fatalf("%d attempts reached the base transport, want 2", len(base.spans))
	}
	for i, sc := range base.spans {
		if sc.SpanID() != s[i].SpanContext().SpanID() {
			t.Errorf("attempt %d went out under span %v, not its own %v", i+1, sc.SpanID(), s[i].SpanContext().SpanID())
		}
	}
}

// Each call's span carries the cache's prediction from the calls before
// it, and, with content capture on, the tool definitions and the input
// messages (gen_ai.tool.definitions, gen_ai.input.messages).
func TestSpanCacheAttributes(t *testing.T) {
	g := newTraced(t, true)
	p := g.params()
	p.System[0].CacheControl = anthropic.NewCacheControlEphemeralParam()
	for _, turn := range []string{"turn-1", "turn-2"} {
		if _, err := g.client.Messages.New(g.ctx(turn), p); err != nil {
			t.Fatal(err)
		}
	}
	spans := g.ended(t, 2)
	first, second := attrs(spans[0]), attrs(spans[1])
	if _, ok := first["promptloom.cache.predicted.read_tokens"]; !ok || first["promptloom.cache.predicted.read_tokens"].AsInt64() != 0 {
		t.Errorf("turn 1: %v", first)
	}
	// The system block is below the model's minimum: nothing is cached,
	// and the blame says so.
	blame := second["promptloom.cache.blame"].AsStringSlice()
	if len(blame) == 0 || !strings.Contains(blame[0], "below claude-sonnet-4-5's 1,024-token minimum") || !second["promptloom.cache.estimate"].AsBool() {
		t.Errorf("turn 2: blame %q", blame)
	}
	if !strings.Contains(second["gen_ai.tool.definitions"].AsString(), `"read_file"`) || !strings.Contains(second["gen_ai.input.messages"].AsString(), "Where is main?") {
		t.Errorf("content: %v", second)
	}
	// Without capture, no content.
	g = newTraced(t, false)
	if _, err := g.client.Messages.New(g.ctx("turn-1"), g.params()); err != nil {
		t.Fatal(err)
	}
	if a := attrs(g.ended(t, 1)[0]); a["gen_ai.input.messages"].AsString() != "" || a["gen_ai.tool.definitions"].AsString() != "" {
		t.Errorf("content without capture: %v", a)
	}
}
