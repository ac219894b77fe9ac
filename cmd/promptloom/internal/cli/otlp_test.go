package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/promptloom/promptloom/internal/testkit/fakeprovider"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/transport"

	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// receiver is an OTLP/HTTP trace receiver: it decodes each export with
// the official protobuf definitions, as a collector would.
type receiver struct {
	*httptest.Server
	mu      sync.Mutex
	paths   []string
	headers []http.Header
	spans   []*tracepb.Span
	service []string // each resource's service.name
	bad     []string // what could not be decoded
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		var export collectorpb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(body, &export)
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.paths = append(r.paths, req.URL.Path)
		r.headers = append(r.headers, req.Header.Clone())
		if err != nil || req.Header.Get("Content-Type") != "application/x-protobuf" {
			r.bad = append(r.bad, req.Header.Get("Content-Type")+": "+string(body))
			http.Error(w, "not OTLP protobuf", http.StatusBadRequest)
			return
		}
		for _, rs := range export.GetResourceSpans() {
			r.service = append(r.service, value(rs.GetResource().GetAttributes(), "service.name").GetStringValue())
			for _, ss := range rs.GetScopeSpans() {
				r.spans = append(r.spans, ss.GetSpans()...)
			}
		}
		out, _ := proto.Marshal(&collectorpb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(r.Close)
	return r
}

// value is the attribute named key (nil: absent).
func value(kvs []*commonpb.KeyValue, key string) *commonpb.AnyValue {
	for _, kv := range kvs {
		if kv.GetKey() == key {
			return kv.GetValue()
		}
	}
	return nil
}

// Two calls through a transport the proxy's way (one per session, the
// call named by its Promptloom-Call header), traced into the provider
// otlpTracing builds from OTEL_EXPORTER_OTLP_*: once shut down, the
// receiver has each call's GenAI span with the usage the provider
// reported, promptloom's cache prediction and blame, the call's name and
// its transcript line.
func TestOTLPExportsTheGenAISpans(t *testing.T) {
	for _, tt := range []struct{ env, path string }{
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "/v1/traces"},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "/collector/traces"},
	} {
		t.Run(tt.env, func(t *testing.T) {
			rcv := newReceiver(t)
			url := rcv.URL
			if tt.env == "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" {
				url += tt.path // used as it is, as the specification says
			}
			t.Setenv(tt.env, url)
			t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20team-token,x-scope=agents")
			t.Setenv("OTEL_SERVICE_NAME", "")
			t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "")
			tp, shutdown, err := otlpTracing(context.Background())
			if err != nil || tp == nil {
				t.Fatalf("otlpTracing: %v, %v", tp, err)
			}
			usage := fakeprovider.Usage{Input: 120, Output: 17, CacheRead: 96, CacheWrite: 24}
			fake := fakeprovider.New(fakeprovider.Reply{Usage: usage}, fakeprovider.Reply{Usage: usage})
			defer fake.Close()
			var transcript bytes.Buffer
			j := journal.New(&transcript, nil)
			rt := transport.New(nil, j, &transport.Options{TracerProvider: tp})
			body := `{"model":"claude-sonnet-4-5","max_tokens":64,` +
				`"system":[{"type":"text","text":"You are terse.","cache_control":{"type":"ephemeral"}}],` +
				`"messages":[{"role":"user","content":"Where is main?"}]}`
			for _, call := range []string{"planner/turn-1", "planner/turn-2"} {
				ctx := transport.With(context.Background(), &transport.Call{Name: call})
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, fake.URL+"/v1/messages", strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				resp, err := (&http.Client{Transport: rt}).Do(req)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("%s: %s", call, resp.Status)
				}
			}
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			// The batch is sent when the proxy stops, if not before.
			var stderr bytes.Buffer
			(&env{stderr: &stderr}).flushSpans(shutdown)
			if stderr.Len() > 0 {
				t.Fatal(stderr.String())
			}

			rcv.mu.Lock()
			defer rcv.mu.Unlock()
			if len(rcv.bad) > 0 {
				t.Fatalf("the receiver could not decode: %q", rcv.bad)
			}
			if len(rcv.paths) == 0 || rcv.paths[0] != tt.path {
				t.Fatalf("exported to %q, want %s", rcv.paths, tt.path)
			}
			if h := rcv.headers[0]; h.Get("Authorization") != "Bearer team-token" || h.Get("X-Scope") != "agents" {
				t.Errorf("OTEL_EXPORTER_OTLP_HEADERS not sent: %v", h)
			}
			if len(rcv.service) == 0 || rcv.service[0] != "promptloom" {
				t.Errorf("service.name %q", rcv.service)
			}
			if len(rcv.spans) != 2 {
				t.Fatalf("%d spans exported, want 2", len(rcv.spans))
			}
			lines := requestLines(t, transcript.Bytes())
			for i, s := range rcv.spans {
				a := s.GetAttributes()
				if s.GetName() != "chat claude-sonnet-4-5" || s.GetKind() != tracepb.Span_SPAN_KIND_CLIENT {
					t.Errorf("span %d: %q, kind %v", i, s.GetName(), s.GetKind())
				}
				for key, want := range map[string]int64{
					"gen_ai.usage.input_tokens":                120 + 96 + 24, // Anthropic's input leaves the cache out
					"gen_ai.usage.output_tokens":               17,
					"gen_ai.usage.cache_read.input_tokens":     96,
					"gen_ai.usage.cache_creation.input_tokens": 24,
					"promptloom.transcript.line":               lines[i],
				} {
					if v := value(a, key); v == nil || v.GetIntValue() != want {
						t.Errorf("span %d: %s = %v, want %d", i, key, v, want)
					}
				}
				for key, want := range map[string]string{
					"gen_ai.request.model":  "claude-sonnet-4-5",
					"gen_ai.provider.name":  "anthropic",
					"promptloom.call.name":  []string{"planner/turn-1", "planner/turn-2"}[i],
					"gen_ai.operation.name": "chat",
				} {
					if v := value(a, key); v.GetStringValue() != want {
						t.Errorf("span %d: %s = %v, want %q", i, key, v, want)
					}
				}
				if v := value(a, "promptloom.cache.predicted.read_tokens"); v == nil || v.GetIntValue() != 0 {
					t.Errorf("span %d: predicted read %v", i, v)
				}
				if v := value(a, "promptloom.cache.predicted.write_tokens"); v == nil {
					t.Errorf("span %d: no predicted write", i)
				}
				if v := value(a, "promptloom.cache.estimate"); !v.GetBoolValue() {
					t.Errorf("span %d: estimate %v, want true (Anthropic's tokenizer is not public)", i, v)
				}
			}
			// The second call's system block is below the model's minimum:
			// the prediction reads nothing, and the blame says why.
			blame := value(rcv.spans[1].GetAttributes(), "promptloom.cache.blame").GetArrayValue().GetValues()
			if len(blame) == 0 || !strings.Contains(blame[0].GetStringValue(), "minimum") {
				t.Errorf("the second call's blame: %v", blame)
			}
		})
	}
}

// requestLines are the seq of each provider_call_request line.
func requestLines(t *testing.T, transcript []byte) []int64 {
	t.Helper()
	var seqs []int64
	for _, l := range bytes.Split(bytes.TrimSpace(transcript), []byte("\n")) {
		var line struct {
			Kind string `json:"kind"`
			Seq  int64  `json:"seq"`
		}
		if err := json.Unmarshal(l, &line); err != nil {
			t.Fatal(err)
		}
		if line.Kind == "provider_call_request" {
			seqs = append(seqs, line.Seq)
		}
	}
	if len(seqs) != 2 {
		t.Fatalf("%d request lines in the transcript, want 2", len(seqs))
	}
	return seqs
}

// Without an OTLP endpoint, or with the SDK or the traces exporter
// switched off, there is no provider; a protocol the exporter does not
// speak is refused rather than taken for one it does.
func TestOTLPOnlyWhenAsked(t *testing.T) {
	for _, tt := range []struct {
		env     map[string]string
		enabled bool
		err     string
	}{
		{env: map[string]string{}},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "a=b", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"}},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "none"}},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, enabled: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, enabled: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, err: "OTEL_EXPORTER_OTLP_PROTOCOL=grpc"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
			"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, err: "OTEL_EXPORTER_OTLP_PROTOCOL=grpc"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "zipkin"}, err: "OTEL_TRACES_EXPORTER=zipkin"},
	} {
		t.Run("", func(t *testing.T) {
			for _, k := range otlpVars {
				t.Setenv(k, tt.env[k])
			}
			tp, shutdown, err := otlpTracing(context.Background())
			switch {
			case tt.err != "":
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("%v: err %v, want %q", tt.env, err, tt.err)
				}
				return
			case err != nil:
				t.Fatalf("%v: %v", tt.env, err)
			case (tp != nil) != tt.enabled:
				t.Errorf("%v: provider %v, want enabled %v", tt.env, tp, tt.enabled)
			}
			// No span was made, so the shutdown has nothing to send.
			if err := shutdown(context.Background()); err != nil {
				t.Errorf("%v: shutdown: %v", tt.env, err)
			}
		})
	}
}

// otlpVars are the variables the cases above set or clear.
var otlpVars = []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS",
	"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER"}

// promptloom proxy with OTEL_EXPORTER_OTLP_ENDPOINT set: two calls
// through it, then SIGTERM; by the time the command has returned, the
// receiver has both calls' spans, flushed on the way out.
func TestProxyExportsSpansOverOTLP(t *testing.T) {
	rcv := newReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
	usage := fakeprovider.Usage{Input: 50, Output: 9, CacheRead: 1200}
	fake := fakeprovider.New(fakeprovider.Reply{Usage: usage}, fakeprovider.Reply{Usage: usage})
	defer fake.Close()
	path := filepath.Join(t.TempDir(), "run.jsonl")
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	e := &env{stdout: pw, stderr: &stderr, cmd: "proxy"}
	code := make(chan int, 1)
	go func() {
		code <- runProxy(e, []string{"--upstream", fake.URL, "--transcript", path})
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		t.Fatalf("first line %q: %v", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	body := `{"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":"Where is main?"}]}`
	for _, call := range []string{"planner/turn-1", "planner/turn-2"} {
		req, err := http.NewRequest(http.MethodPost, addr+"/v1/messages", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Promptloom-Call", call)
		req.Header.Set("Promptloom-Session", "s1")
		if call == "planner/turn-2" {
			req.Header.Set("Traceparent", "00-"+agentTrace+"-"+agentSpan+"-01")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s", call, resp.Status)
		}
	}
	rcv.mu.Lock()
	before := len(rcv.spans)
	rcv.mu.Unlock()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if c := <-code; c != ExitOK {
		t.Fatalf("exit %d: %s", c, stderr.String())
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if before != 0 || len(rcv.spans) != 2 {
		t.Fatalf("%d spans before SIGTERM, %d after, want 0 and 2 (%s)", before, len(rcv.spans), stderr.String())
	}
	transcript, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := requestLines(t, transcript)
	for i, s := range rcv.spans {
		a := s.GetAttributes()
		if v := value(a, "promptloom.call.name"); v.GetStringValue() != []string{"planner/turn-1", "planner/turn-2"}[i] {
			t.Errorf("span %d: call %v", i, v)
		}
		if v := value(a, "promptloom.transcript.line"); v.GetIntValue() != lines[i] {
			t.Errorf("span %d: line %v, want %d", i, v, lines[i])
		}
		if v := value(a, "gen_ai.usage.cache_read.input_tokens"); v.GetIntValue() != 1200 {
			t.Errorf("span %d: cache read %v", i, v)
		}
		if v := value(a, "gen_ai.request.model"); v.GetStringValue() != "claude-sonnet-4-5" {
			t.Errorf("span %d: model %v", i, v)
		}
		if v := value(a, "promptloom.cache.predicted.write_tokens"); v == nil {
			t.Errorf("span %d: no prediction", i)
		}
	}
	// The first call came with no trace: its span is a root. The second
	// came inside the agent's: its span is a child of the agent's span.
	if first := rcv.spans[0]; len(first.GetParentSpanId()) != 0 || hex.EncodeToString(first.GetTraceId()) == agentTrace {
		t.Errorf("the first call's span has parent %x in trace %x", first.GetParentSpanId(), first.GetTraceId())
	}
	if second := rcv.spans[1]; hex.EncodeToString(second.GetTraceId()) != agentTrace || hex.EncodeToString(second.GetParentSpanId()) != agentSpan {
		t.Errorf("the second call's span: trace %x, parent %x; want %s, %s", second.GetTraceId(), second.GetParentSpanId(), agentTrace, agentSpan)
	}
}

// An agent's trace and span, as its traceparent names them.
const agentTrace, agentSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
