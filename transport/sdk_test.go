package transport_test

// The official SDKs, unmodified, through the transport: each is given an
// http.Client whose Transport is transport.New, and a fake provider on
// loopback speaking its wire format.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/harn/options"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/transcript"
	"github.com/promptloom/promptloom/transport"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
	"github.com/tidwall/gjson"
	"google.golang.org/genai"
)

// rig is a fake provider, a journal writing a file, and the client that
// reaches the one through the other.
type rig struct {
	fake   *fake
	j      *journal.Journal
	path   string
	rt     *transport.Transport
	client *http.Client
	e      *explain.Explanation
	system string
}

// newRig builds the prompt of a harness with two tools, read_file (active)
// and run_shell (not): run_shell's guidance is gated out.
func newRig(t testing.TB, o *transport.Options) *rig {
	t.Helper()
	e := explained(t, []promptloom.Fragment{
		promptloom.Primary("You are the harness's agent."),
		promptloom.ToolGuidance("read_file", "Read a file before you edit it."),
		promptloom.ToolGuidance("run_shell", "Never run rm -rf."),
	}, "read_file")
	r := e.Reduction
	path := filepath.Join(t.TempDir(), "run.jsonl")
	j, err := journal.Open(path, &journal.Options{Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	f := newFake(t)
	rt := transport.New(nil, j, o)
	return &rig{fake: f, j: j, path: path, e: e, system: r.System, rt: rt, client: &http.Client{Transport: rt}}
}

func (g *rig) ctx(name string) context.Context {
	return transport.With(context.Background(), &transport.Call{Name: name, Explanation: g.e})
}

// verify closes the transport and the journal and verifies the
// transcript, returning its report and lines.
func (g *rig) verify(t *testing.T) (*transcript.Report, []gjson.Result) {
	t.Helper()
	if err := g.j.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(g.path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := transcript.Verify(bytes.NewReader(b), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		var w strings.Builder
		rep.WriteText(&w)
		t.Fatalf("the transcript does not verify:\n%s\n%s", w.String(), b)
	}
	var lines []gjson.Result
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(l) > 0 {
			lines = append(lines, gjson.ParseBytes(l))
		}
	}
	return rep, lines
}

func kind(lines []gjson.Result, k string) []gjson.Result {
	var out []gjson.Result
	for _, l := range lines {
		if l.Get("kind").Str == k {
			out = append(out, l)
		}
	}
	return out
}

// wantResponse checks the one response line: its summary and its body.
func wantResponse(t *testing.T, lines []gjson.Result, stop string, stream bool) gjson.Result {
	t.Helper()
	rs := kind(lines, "provider_call_response")
	if len(rs) != 1 {
		t.Fatalf("%d responses recorded, want 1", len(rs))
	}
	r := rs[0]
	resp := r.Get("response")
	if resp.Get("text").Str != "Hello there" || resp.Get("stop_reason").Str != stop || resp.Get("status").Int() != 200 {
		t.Errorf("response %s", resp.Raw)
	}
	if tc := resp.Get("tool_calls.0"); tc.Get("name").Str != "read_file" || tc.Get("id").Str == "" && stop != "STOP" || !strings.HasPrefix(tc.Get("arguments_hash").Str, "blake3:") {
		t.Errorf("tool calls %s", resp.Get("tool_calls").Raw)
	}
	// The arguments were {"path":"main.go"}, however they were streamed.
	if got := resp.Get("tool_calls.0.arguments_hash").Str; got != argsDigest {
		t.Errorf("arguments hash %s, want %s", got, argsDigest)
	}
	if u := resp.Get("usage"); u.Get("input_tokens").Int() != 10 || u.Get("output_tokens").Int() != 5 || u.Get("cache_read_tokens").Int() != 7 {
		t.Errorf("usage %s", u.Raw)
	}
	body := r.Get("body").Str
	if stream != strings.Contains(body, "data: ") || body == "" {
		t.Errorf("body (stream %v): %.200s", stream, body)
	}
	return r
}

// argsDigest is the digest of {"path":"main.go"}, as a content hash.
var argsDigest = func() string {
	return "blake3:" + fmt.Sprintf("%x", [32]byte(digestOfJSON(`{"path":"main.go"}`)))
}()

var readFile = anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{Name: "read_file",
	InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"path": map[string]any{"type": "string"}}}}}

var runShell = anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{Name: "run_shell",
	InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"cmd": map[string]any{"type": "string"}}}}}

func (g *rig) anthropic(opts ...aoption.RequestOption) anthropic.Client {
	return anthropic.NewClient(append([]aoption.RequestOption{aoption.WithAPIKey("sk-test"), aoption.WithBaseURL(g.fake.srv.URL), aoption.WithHTTPClient(g.client)}, opts...)...)
}

func (g *rig) anthropicParams(user string, tools ...anthropic.ToolUnionParam) anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model: "claude-sonnet-4-5", MaxTokens: 1024,
		System:   []anthropic.TextBlockParam{{Text: g.system}},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(user))},
		Tools:    tools,
	}
}

func TestAnthropic(t *testing.T) {
	g := newRig(t, nil)
	c := g.anthropic()
	msg, err := c.Messages.New(g.ctx("turn-1"), g.anthropicParams("Where is main?", readFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 2 || msg.Content[1].Name != "read_file" || msg.StopReason != "tool_use" {
		t.Fatalf("the SDK read %+v", msg)
	}
	_, lines := g.verify(t)
	r := wantResponse(t, lines, "tool_use", false)
	if r.Get("response.usage.cache_write_tokens").Int() != 3 || r.Get("response.id").Str != "msg_1" || r.Get("response.model").Str != "claude-sonnet-4-5" {
		t.Errorf("response %s", r.Get("response").Raw)
	}
	req := kind(lines, "provider_call_request")[0]
	if req.Get("served_context.payload_provider").Str != "anthropic" || !strings.Contains(req.Get("request.tools").Raw, "read_file") ||
		req.Get("request.parameters.model").Str != "claude-sonnet-4-5" || !strings.Contains(req.Get("request.messages").Raw, "Where is main?") {
		t.Errorf("request %s", req.Raw)
	}
}

func TestAnthropicStream(t *testing.T) {
	g := newRig(t, nil)
	c := g.anthropic()
	stream := c.Messages.NewStreaming(g.ctx("turn-1"), g.anthropicParams("Where is main?", readFile))
	var acc anthropic.Message
	for stream.Next() {
		if err := acc.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	stream.Close()
	if len(acc.Content) != 2 || acc.Content[0].Text != "Hello there" || acc.Content[1].Name != "read_file" {
		t.Fatalf("the SDK read %+v", acc)
	}
	_, lines := g.verify(t)
	r := wantResponse(t, lines, "tool_use", true)
	want, _ := anthropicAnswer("read_file")
	if r.Get("body").Str != strings.Join(want, "") {
		t.Errorf("the body recorded is not the stream as sent:\n%s", r.Get("body").Str)
	}
}

func (g *rig) openai(opts ...ooption.RequestOption) openai.Client {
	return openai.NewClient(append([]ooption.RequestOption{ooption.WithAPIKey("sk-test"), ooption.WithBaseURL(g.fake.srv.URL), ooption.WithHTTPClient(g.client)}, opts...)...)
}

func (g *rig) chatParams(tools ...string) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{Model: openai.ChatModelGPT5_5,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(g.system), openai.UserMessage("Where is main?")}}
	for _, name := range tools {
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: name}))
	}
	return p
}

func TestOpenAIChat(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			g := newRig(t, nil)
			c := g.openai()
			if !stream {
				out, err := c.Chat.Completions.New(g.ctx("turn-1"), g.chatParams("read_file"))
				if err != nil {
					t.Fatal(err)
				}
				if out.Choices[0].Message.ToolCalls[0].Function.Name != "read_file" {
					t.Fatalf("the SDK read %+v", out)
				}
			} else {
				p := g.chatParams("read_file")
				p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
				s := c.Chat.Completions.NewStreaming(g.ctx("turn-1"), p)
				var acc openai.ChatCompletionAccumulator
				for s.Next() {
					acc.AddChunk(s.Current())
				}
				if err := s.Err(); err != nil {
					t.Fatal(err)
				}
				s.Close()
				if acc.Choices[0].Message.Content != "Hello there" || acc.Choices[0].Message.ToolCalls[0].Function.Name != "read_file" {
					t.Fatalf("the SDK read %+v", acc)
				}
			}
			_, lines := g.verify(t)
			wantResponse(t, lines, "tool_calls", stream)
		})
	}
}

func TestOpenAIResponses(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			g := newRig(t, nil)
			c := g.openai()
			p := responses.ResponseNewParams{Model: openai.ChatModelGPT5_5, Instructions: openai.String(g.system),
				Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Where is main?")},
				Tools: []responses.ToolUnionParam{responses.ToolParamOfFunction("read_file", map[string]any{"type": "object"}, false)}}
			if !stream {
				out, err := c.Responses.New(g.ctx("turn-1"), p)
				if err != nil {
					t.Fatal(err)
				}
				if out.OutputText() != "Hello there" {
					t.Fatalf("the SDK read %+v", out)
				}
			} else {
				s := c.Responses.NewStreaming(g.ctx("turn-1"), p)
				text := ""
				for s.Next() {
					if ev := s.Current(); ev.Type == "response.output_text.delta" {
						text += ev.Delta
					}
				}
				if err := s.Err(); err != nil {
					t.Fatal(err)
				}
				s.Close()
				if text != "Hello there" {
					t.Fatalf("the SDK read %q", text)
				}
			}
			_, lines := g.verify(t)
			wantResponse(t, lines, "completed", stream)
		})
	}
}

func (g *rig) gemini(t *testing.T) *genai.Client {
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: "test-key", Backend: genai.BackendGeminiAPI,
		HTTPClient: g.client, HTTPOptions: genai.HTTPOptions{BaseURL: g.fake.srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (g *rig) geminiConfig(tools ...string) *genai.GenerateContentConfig {
	cfg := &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText(g.system, genai.RoleUser)}
	for _, name := range tools {
		cfg.Tools = append(cfg.Tools, &genai.Tool{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: name, Description: "a tool"}}})
	}
	return cfg
}

func TestGemini(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			g := newRig(t, nil)
			c := g.gemini(t)
			if !stream {
				out, err := c.Models.GenerateContent(g.ctx("turn-1"), "gemini-2.5-flash", genai.Text("Where is main?"), g.geminiConfig("read_file"))
				if err != nil {
					t.Fatal(err)
				}
				if out.Text() != "Hello there" || out.FunctionCalls()[0].Name != "read_file" {
					t.Fatalf("the SDK read %+v", out)
				}
			} else {
				text := ""
				for out, err := range c.Models.GenerateContentStream(g.ctx("turn-1"), "gemini-2.5-flash", genai.Text("Where is main?"), g.geminiConfig("read_file")) {
					if err != nil {
						t.Fatal(err)
					}
					text += out.Text()
				}
				if text != "Hello there" {
					t.Fatalf("the SDK read %q", text)
				}
			}
			_, lines := g.verify(t)
			wantResponse(t, lines, "STOP", stream)
			if m := kind(lines, "provider_call_request")[0].Get("served_context.payload_provider").Str; m != "gemini" {
				t.Errorf("read as %s", m)
			}
		})
	}
}

// With each official SDK at its default retries (genai retries only when
// given RetryOptions: its own, with short delays here) and no retry option
// on the transport, a 429 then a 200 is two attempts, each recorded as
// itself, and read back as one logical call with one failed attempt.
func TestRetryIsOneLogicalCall(t *testing.T) {
	for _, sdk := range []string{"anthropic", "openai", "gemini"} {
		t.Run(sdk, func(t *testing.T) {
			g := newRig(t, nil)
			g.fake.fail429.Store(1)
			var err error
			switch sdk {
			case "anthropic":
				c := g.anthropic()
				_, err = c.Messages.New(g.ctx("turn-1"), g.anthropicParams("Where is main?", readFile))
			case "openai":
				c := g.openai()
				_, err = c.Chat.Completions.New(g.ctx("turn-1"), g.chatParams("read_file"))
			case "gemini":
				cfg := g.geminiConfig("read_file")
				cfg.HTTPOptions = &genai.HTTPOptions{RetryOptions: &genai.HTTPRetryOptions{InitialDelay: genai.Ptr(0.001), Jitter: genai.Ptr(0.0)}}
				_, err = g.gemini(t).Models.GenerateContent(g.ctx("turn-1"), "gemini-2.5-flash", genai.Text("Where is main?"), cfg)
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := g.fake.seen(); n != 2 {
				t.Fatalf("the provider saw %d requests, want 2", n)
			}
			rep, lines := g.verify(t)
			if len(rep.Calls) != 2 || len(kind(lines, "provider_call_error")) != 1 || len(kind(lines, "provider_call_response")) != 1 {
				t.Fatalf("calls %+v", rep.Calls)
			}
			rs := g.recorded(t, rep)
			groups := cache.Logical(rs)
			if len(groups) != 1 || len(groups[0]) != 2 {
				t.Fatalf("logical calls %v", groups)
			}
			first, last := rs[groups[0][0]].Report, rs[groups[0][1]].Report
			if !strings.HasPrefix(first.Outcome, "error: HTTP 429 ") || strings.HasPrefix(last.Outcome, "error: ") {
				t.Errorf("attempts: %q, then %q", first.Outcome, last.Outcome)
			}
			if calls := cache.Calls(rs); len(calls) != 1 || calls[0].Line != last.Line {
				t.Errorf("the cache predicts %+v, want the retry alone", calls)
			}
		})
	}
}

// recorded reads the verified transcript's calls back with their bodies.
func (g *rig) recorded(t *testing.T, rep *transcript.Report) []cache.Recorded {
	t.Helper()
	b, err := os.ReadFile(g.path)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := cache.FromTranscript(b, rep)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// A 429 from an SDK given no retries is the call's outcome at once,
// before anything is closed.
func TestFailureWithoutRetry(t *testing.T) {
	g := newRig(t, nil)
	g.fake.fail429.Store(5)
	c := g.anthropic(aoption.WithMaxRetries(0))
	if _, err := c.Messages.New(g.ctx("turn-1"), g.anthropicParams("Where is main?", readFile)); err == nil {
		t.Fatal("no error")
	}
	if b, _ := os.ReadFile(g.path); !bytes.Contains(b, []byte("provider_call_error")) {
		t.Fatalf("the failure is not recorded when the call returns:\n%s", b)
	}
	_, lines := g.verify(t)
	e := kind(lines, "provider_call_error")
	if len(e) != 1 || !strings.HasPrefix(e[0].Get("error.message").Str, "HTTP 429 Too Many Requests: ") || !strings.Contains(e[0].Get("error.message").Str, "slow down") {
		t.Errorf("errors %v", e)
	}
}

// A context cancelled mid-stream is recorded as cancelled.
func TestCancelMidStream(t *testing.T) {
	g := newRig(t, nil)
	g.fake.hold = make(chan struct{})
	defer close(g.fake.hold)
	ctx, cancel := context.WithCancel(g.ctx("turn-1"))
	c := g.anthropic()
	stream := c.Messages.NewStreaming(ctx, g.anthropicParams("Where is main?", readFile))
	if !stream.Next() {
		t.Fatalf("no first event: %v", stream.Err())
	}
	cancel()
	for stream.Next() {
	}
	if err := stream.Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("stream error %v", err)
	}
	stream.Close()
	_, lines := g.verify(t)
	e := kind(lines, "provider_call_error")
	if len(e) != 1 || !strings.HasPrefix(e[0].Get("error.message").Str, "cancelled after") {
		t.Fatalf("errors %v", e)
	}
}

// A stream the caller closes before its end is recorded as closed early.
func TestStreamClosedEarly(t *testing.T) {
	g := newRig(t, nil)
	g.fake.hold = make(chan struct{})
	defer close(g.fake.hold)
	c := g.anthropic()
	stream := c.Messages.NewStreaming(g.ctx("turn-1"), g.anthropicParams("Where is main?", readFile))
	if !stream.Next() {
		t.Fatalf("no first event: %v", stream.Err())
	}
	stream.Close()
	_, lines := g.verify(t)
	e := kind(lines, "provider_call_error")
	if len(e) != 1 || !strings.HasPrefix(e[0].Get("error.message").Str, "closed early by the caller") {
		t.Fatalf("errors %v", e)
	}
}

// 16 goroutines share one client, two turns each (one streamed): every
// call is in the transcript, each goroutine's in order, every response
// after its request, and the transcript verifies.
func TestSharedClient(t *testing.T) {
	g := newRig(t, nil)
	c := g.anthropic()
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Messages.New(g.ctx(fmt.Sprintf("g%d/turn-1", i)), g.anthropicParams("Where is main?", readFile)); err != nil {
				errs <- err
				return
			}
			s := c.Messages.NewStreaming(g.ctx(fmt.Sprintf("g%d/turn-2", i)), g.anthropicParams("And now?", readFile))
			for s.Next() {
			}
			if err := s.Err(); err != nil {
				errs <- err
			}
			s.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	rep, _ := g.verify(t)
	if len(rep.Calls) != 32 {
		t.Fatalf("%d calls, want 32", len(rep.Calls))
	}
	byName := map[string]transcript.CallReport{}
	for _, call := range rep.Calls {
		if call.OutcomeLine <= call.Line || call.Outcome != "Hello there" {
			t.Errorf("call %s: request line %d, outcome line %d %q", call.Call, call.Line, call.OutcomeLine, call.Outcome)
		}
		byName[call.Call] = call
	}
	for i := range 16 {
		one, two := byName[fmt.Sprintf("g%d/turn-1", i)], byName[fmt.Sprintf("g%d/turn-2", i)]
		if one.Line == 0 || two.Line == 0 || two.Line < one.OutcomeLine {
			t.Errorf("goroutine %d: turn 1 at %d (outcome %d), turn 2 at %d", i, one.Line, one.OutcomeLine, two.Line)
		}
	}
}

// A request without a Call on its context is sent, and recorded whole
// (its body, redacted) with the body's digest; verify counts it.
func TestUnattributed(t *testing.T) {
	g := newRig(t, nil)
	c := g.anthropic()
	if _, err := c.Messages.New(context.Background(), g.anthropicParams("Where is main?", readFile)); err != nil {
		t.Fatal(err)
	}
	rep, lines := g.verify(t)
	if rep.Unattributed != 1 || !rep.Calls[0].Unattributed {
		t.Errorf("unattributed %d", rep.Unattributed)
	}
	req := kind(lines, "provider_call_request")[0]
	if req.Get("served_context").Type != gjson.Null || !strings.HasPrefix(req.Get("request.body_content_hash").Str, "blake3:") || len(kind(lines, "system_prompt")) != 0 {
		t.Errorf("request %s", req.Raw)
	}
	// The body is read back through the journal's one reader of bodies.
	data, err := os.ReadFile(g.path)
	if err != nil {
		t.Fatal(err)
	}
	sent, err := transcript.Requests(data, rep)
	if err != nil || len(sent) != 1 || gjson.GetBytes(sent[0].Body, "messages.0.content.0.text").Str != "Where is main?" {
		t.Errorf("the body as kept: %v %+v", err, sent)
	}
	var w strings.Builder
	rep.WriteText(&w)
	if !strings.Contains(w.String(), "1 without a manifest") {
		t.Errorf("verify says %s", w.String())
	}
}

// A secret pasted into a message never reaches the transcript file, and
// the transcript still verifies.
func TestSecretNeverWritten(t *testing.T) {
	secret := "ghp_" + strings.Repeat("A1b2C3d4", 5)
	g := newRig(t, nil)
	c := g.anthropic()
	if _, err := c.Messages.New(g.ctx("turn-1"), g.anthropicParams("my token is "+secret, readFile)); err != nil {
		t.Fatal(err)
	}
	o := g.openai()
	p := g.chatParams("read_file")
	p.Messages = append(p.Messages, openai.UserMessage("again: "+secret))
	if _, err := o.Chat.Completions.New(g.ctx("turn-2"), p); err != nil {
		t.Fatal(err)
	}
	_, lines := g.verify(t)
	b, _ := os.ReadFile(g.path)
	if bytes.Contains(b, []byte(secret)) || bytes.Contains(b, []byte(secret[4:])) {
		t.Fatal("the secret is in the transcript")
	}
	if !bytes.Contains(b, []byte("<redacted:github_token:")) || len(kind(lines, "provider_call_response")) != 2 {
		t.Errorf("the message was not kept redacted: %s", b)
	}
}

// Refusals: nothing is sent, nothing journaled, and the error names the
// fragment or the tool.
func TestRefusals(t *testing.T) {
	type send func(g *rig, ctx context.Context) error
	anth := func(system string, tools ...anthropic.ToolUnionParam) send {
		return func(g *rig, ctx context.Context) error {
			p := g.anthropicParams("Where is main?", tools...)
			if system != "" {
				p.System = []anthropic.TextBlockParam{{Text: system}}
			}
			c := g.anthropic(aoption.WithMaxRetries(0))
			_, err := c.Messages.New(ctx, p)
			return err
		}
	}
	chat := func(tools ...string) send {
		return func(g *rig, ctx context.Context) error {
			c := g.openai(ooption.WithMaxRetries(0))
			_, err := c.Chat.Completions.New(ctx, g.chatParams(tools...))
			return err
		}
	}
	resp := func(tools ...string) send {
		return func(g *rig, ctx context.Context) error {
			p := responses.ResponseNewParams{Model: openai.ChatModelGPT5_5, Instructions: openai.String(g.system),
				Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Where is main?")}}
			for _, n := range tools {
				p.Tools = append(p.Tools, responses.ToolParamOfFunction(n, map[string]any{"type": "object"}, false))
			}
			c := g.openai(ooption.WithMaxRetries(0))
			_, err := c.Responses.New(ctx, p)
			return err
		}
	}
	gem := func(tools ...string) send {
		return func(g *rig, ctx context.Context) error {
			_, err := g.gemini(t).Models.GenerateContent(ctx, "gemini-2.5-flash", genai.Text("Where is main?"), g.geminiConfig(tools...))
			return err
		}
	}
	tests := []struct {
		name     string
		send     send
		rule     string
		fragment string
		tool     string
	}{
		{"stale prompt", anth("You are someone else's agent.", readFile), "", "", ""},
		{"anthropic: guidance kept for a tool not sent", anth(""), "tool_not_sent", "tool:read_file.guidance", "read_file"},
		{"anthropic: a tool sent whose guidance was gated out", anth("", readFile, runShell), "tool_gated_out", "tool:run_shell.guidance", "run_shell"},
		{"openai chat: tool not sent", chat(), "tool_not_sent", "tool:read_file.guidance", "read_file"},
		{"openai chat: gated out", chat("read_file", "run_shell"), "tool_gated_out", "tool:run_shell.guidance", "run_shell"},
		{"openai responses: gated out", resp("run_shell", "read_file"), "tool_gated_out", "tool:run_shell.guidance", "run_shell"},
		{"gemini: tool not sent", gem(), "tool_not_sent", "tool:read_file.guidance", "read_file"},
		{"gemini: gated out", gem("read_file", "run_shell"), "tool_gated_out", "tool:run_shell.guidance", "run_shell"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newRig(t, nil)
			err := tt.send(g, g.ctx("turn-1"))
			if !errors.Is(err, journal.ErrStaleManifest) {
				t.Fatalf("err = %v", err)
			}
			var re *manifest.RuleError
			if tt.rule != "" {
				if !errors.As(err, &re) || string(re.Rule) != tt.rule || re.ID != tt.fragment || re.Got != tt.tool || !errors.Is(err, manifest.Rule(tt.rule)) {
					t.Fatalf("err = %v (%+v)", err, re)
				}
				if !strings.Contains(err.Error(), tt.fragment) || !strings.Contains(err.Error(), tt.tool) {
					t.Errorf("the message names neither: %v", err)
				}
			}
			if n := g.fake.seen(); n != 0 {
				t.Errorf("the provider saw %d requests", n)
			}
			g.j.Close()
			if b, _ := os.ReadFile(g.path); len(b) != 0 {
				t.Errorf("journaled: %s", b)
			}
		})
	}
}

// A Call with a manifest and its prompt (no explanation) is held to the
// gates the manifest's reasons record.
func TestManifestOnlyGates(t *testing.T) {
	g := newRig(t, nil)
	ctx := transport.With(context.Background(), &transport.Call{Name: "turn-1", Manifest: g.e.Manifest, System: g.system})
	c := g.anthropic(aoption.WithMaxRetries(0))
	_, err := c.Messages.New(ctx, g.anthropicParams("Where is main?", readFile, runShell))
	var re *manifest.RuleError
	if !errors.As(err, &re) || re.Rule != "tool_gated_out" || re.ID != "tool:run_shell.guidance" || re.Got != "run_shell" {
		t.Fatalf("err = %v", err)
	}
	if _, err := c.Messages.New(ctx, g.anthropicParams("Where is main?", readFile)); err != nil {
		t.Fatal(err)
	}
	g.verify(t)
}

// What is not a model call (a GET, an endpoint no provider answers
// prompts on) passes through and is not journaled.
func TestNotAModelCallPassesThrough(t *testing.T) {
	g := newRig(t, nil)
	for _, req := range []*http.Request{
		must(http.NewRequest("GET", g.fake.srv.URL+"/v1/models", nil)),
		must(http.NewRequest("POST", g.fake.srv.URL+"/v1/messages/count_tokens", strings.NewReader(`{"model":"m"}`))),
	} {
		resp, err := g.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if g.fake.seen() != 2 {
		t.Fatalf("the provider saw %d requests", g.fake.seen())
	}
	g.j.Close()
	if b, _ := os.ReadFile(g.path); len(b) != 0 {
		t.Errorf("journaled: %s", b)
	}
}

// A JSON answer the caller closes once it has decoded it, without reading
// to io.EOF, is whole: it is recorded as the response.
func TestWholeJSONClosedBeforeEOF(t *testing.T) {
	g := newRig(t, nil)
	body := `{"model":"claude-sonnet-4-5","max_tokens":10,"system":` + strconvQuote(g.system) + `,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"read_file","input_schema":{"type":"object"}}]}`
	req := must(http.NewRequestWithContext(g.ctx("turn-1"), "POST", g.fake.srv.URL+"/v1/messages", strings.NewReader(body)))
	resp, err := g.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	_, lines := g.verify(t)
	wantResponse(t, lines, "tool_use", false)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// A model call at a URL the transport does not know (a gateway, a cloud's
// rawPredict) is read by its body when a Call is on its context: held to
// the prompt and journaled, not passed through unchecked.
func TestUnknownURLWithACall(t *testing.T) {
	g := newRig(t, nil)
	mux := http.NewServeMux()
	mux.HandleFunc("/gateway/claude:rawPredict", func(w http.ResponseWriter, r *http.Request) {
		_, whole := anthropicAnswer("read_file")
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(whole))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	send := func(tools string) (*http.Response, error) {
		body := `{"anthropic_version":"vertex-2023-10-16","max_tokens":10,"system":` + strconvQuote(g.system) + `,"messages":[{"role":"user","content":"hi"}],"tools":[` + tools + `]}`
		return g.client.Do(must(http.NewRequestWithContext(g.ctx("turn-1"), "POST", srv.URL+"/gateway/claude:rawPredict", strings.NewReader(body))))
	}
	if _, err := send(`{"name":"read_file"},{"name":"run_shell"}`); !errors.Is(err, manifest.Rule("tool_gated_out")) {
		t.Fatalf("err = %v", err)
	}
	resp, err := send(`{"name":"read_file"}`)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	_, lines := g.verify(t)
	wantResponse(t, lines, "tool_use", false)
}

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// brokenBody gives some bytes, then fails as a dropped connection does.
type brokenBody struct{ sent bool }

func (b *brokenBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, "event: message_start\ndata: {}\n\n"), nil
	}
	return 0, io.ErrUnexpectedEOF
}
func (b *brokenBody) Close() error { return nil }

// A transport error, and a connection that breaks mid-answer, are recorded
// as what they are.
func TestTransportErrors(t *testing.T) {
	g := newRig(t, nil)
	body := `{"model":"m","max_tokens":10,"stream":true,"system":` + strconvQuote(g.system) + `,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"read_file"}]}`
	path := filepath.Join(t.TempDir(), "t.jsonl")
	j, err := journal.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	refused := errors.New("connection refused")
	calls := 0
	base := rtFunc(func(r *http.Request) (*http.Response, error) {
		if calls++; calls == 1 {
			return nil, refused
		}
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: &brokenBody{}, Request: r}, nil
	})
	rt := transport.New(base, j, nil)
	client := &http.Client{Transport: rt}
	if _, err := client.Do(must(http.NewRequestWithContext(g.ctx("a"), "POST", "http://x/v1/messages", strings.NewReader(body)))); !errors.Is(err, refused) {
		t.Fatalf("err = %v", err)
	}
	resp, err := client.Do(must(http.NewRequestWithContext(g.ctx("b"), "POST", "http://x/v1/messages", strings.NewReader(body))))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("read: %v", err)
	}
	g.path, g.j, g.rt = path, j, rt
	_, lines := g.verify(t)
	msg := map[string]string{}
	for _, e := range kind(lines, "provider_call_error") {
		msg[e.Get("call").Str] = e.Get("error.message").Str
	}
	if msg["a"] != "transport error: connection refused" || !strings.HasPrefix(msg["b"], "the response broke after 31 bytes: ") {
		t.Errorf("errors %q", msg)
	}
}

// When the SDK's last retry fails, each attempt is recorded as it fails,
// before the transport is closed: three attempts, one logical call.
func TestRetriesExhausted(t *testing.T) {
	for _, sdk := range []string{"anthropic", "openai"} {
		t.Run(sdk, func(t *testing.T) {
			g := newRig(t, nil)
			g.fake.fail429.Store(10)
			var err error
			if sdk == "anthropic" {
				c := g.anthropic()
				_, err = c.Messages.New(g.ctx("turn-1"), g.anthropicParams("Where is main?", readFile))
			} else {
				c := g.openai()
				_, err = c.Chat.Completions.New(g.ctx("turn-1"), g.chatParams("read_file"))
			}
			if err == nil {
				t.Fatal("no error")
			}
			if n := g.fake.seen(); n != 3 {
				t.Fatalf("the provider saw %d requests, want 3 (two retries)", n)
			}
			if b, _ := os.ReadFile(g.path); bytes.Count(b, []byte("provider_call_error")) != 3 {
				t.Fatalf("the failures are not recorded when the call returns:\n%s", b)
			}
			rep, _ := g.verify(t)
			if groups := cache.Logical(g.recorded(t, rep)); len(rep.Calls) != 3 || len(groups) != 1 || len(groups[0]) != 3 {
				t.Fatalf("calls %+v, logical %v", rep.Calls, groups)
			}
		})
	}
}

// A large upload to an endpoint that is not a model call is passed on
// unread: the body limit is for model calls.
func TestUploadPassesUnread(t *testing.T) {
	g := newRig(t, &transport.Options{MaxBodyBytes: 10})
	resp, err := g.client.Do(must(http.NewRequest("POST", g.fake.srv.URL+"/v1/files", strings.NewReader(strings.Repeat("x", 100)))))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if g.fake.seen() != 1 {
		t.Fatal("not sent")
	}
	_, err = g.client.Do(must(http.NewRequestWithContext(g.ctx("turn-1"), "POST", g.fake.srv.URL+"/v1/messages", strings.NewReader(strings.Repeat("x", 100)))))
	if !errors.Is(err, promptloom.ErrTooLarge) {
		t.Fatalf("a model call over the limit: %v", err)
	}
}

// A secret in the provider's answer reaches the SDK as it was, and the
// transcript only redacted: in the summary's text and in the body.
func TestSecretInTheAnswer(t *testing.T) {
	secret := "ghp_" + strings.Repeat("Z9y8X7w6", 5)
	g := newRig(t, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"your token is %s"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`, secret)
	}))
	defer srv.Close()
	c := anthropic.NewClient(aoption.WithAPIKey("k"), aoption.WithBaseURL(srv.URL), aoption.WithHTTPClient(g.client))
	msg, err := c.Messages.New(g.ctx("turn-1"), g.anthropicParams("Where is main?", readFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg.Content[0].Text, secret) {
		t.Fatal("the SDK was not given the answer as it was")
	}
	_, lines := g.verify(t)
	b, _ := os.ReadFile(g.path)
	if bytes.Contains(b, []byte(secret[4:])) {
		t.Fatal("the secret is in the transcript")
	}
	r := kind(lines, "provider_call_response")[0]
	if !strings.Contains(r.Get("response.text").Str, "<redacted:github_token:") || !strings.Contains(r.Get("body").Str, "<redacted:github_token:") {
		t.Errorf("response %s", r.Raw)
	}
}

// Chat Completions' older functions[] are tools too.
func TestChatFunctionsAreTools(t *testing.T) {
	g := newRig(t, nil)
	body := `{"model":"m","messages":[{"role":"system","content":` + strconvQuote(g.system) + `},{"role":"user","content":"hi"}],"functions":[{"name":"read_file"},{"name":"run_shell"}]}`
	_, err := g.client.Do(must(http.NewRequestWithContext(g.ctx("turn-1"), "POST", g.fake.srv.URL+"/v1/chat/completions", strings.NewReader(body))))
	if !errors.Is(err, manifest.Rule("tool_gated_out")) {
		t.Fatalf("err = %v", err)
	}
}

// The transport keeps nothing from one request to the next: a harness
// that sends the same body again on the same Call, after a failure no SDK
// retries (a 400), makes two logical calls; after a 503, one.
func TestResendAfterAFailure(t *testing.T) {
	for _, tc := range []struct {
		status, logical int
	}{{400, 2}, {503, 1}} {
		t.Run(strconv.Itoa(tc.status), func(t *testing.T) {
			g := newRig(t, nil)
			n := 0
			base := rtFunc(func(r *http.Request) (*http.Response, error) {
				if n++; n == 1 {
					return &http.Response{StatusCode: tc.status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("no")), Request: r}, nil
				}
				return http.DefaultTransport.RoundTrip(r)
			})
			g.rt = transport.New(base, g.j, nil)
			client := &http.Client{Transport: g.rt}
			body := `{"model":"m","max_tokens":10,"system":` + strconvQuote(g.system) + `,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"read_file"}]}`
			ctx := g.ctx("turn-1")
			for range 2 {
				resp, err := client.Do(must(http.NewRequestWithContext(ctx, "POST", g.fake.srv.URL+"/v1/messages", strings.NewReader(body))))
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			rep, _ := g.verify(t)
			if groups := cache.Logical(g.recorded(t, rep)); len(rep.Calls) != 2 || len(groups) != tc.logical {
				t.Fatalf("calls %+v, logical %v", rep.Calls, groups)
			}
		})
	}
}

// A request through the transport is read once: its body is scanned by
// the JSON reader one time, for the gate, the journal and the span alike.
func TestRequestReadOnce(t *testing.T) {
	g := newRig(t, nil)
	body := `{"model":"m","max_tokens":10,"system":` + strconvQuote(g.system) +
		`,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"read_file","input_schema":{"type":"object"}}]}`
	reads := 0
	pjson.Scanned = func(doc string) {
		if doc == body {
			reads++
		}
	}
	defer func() { pjson.Scanned = nil }()
	resp, err := g.client.Do(must(http.NewRequestWithContext(g.ctx("turn-1"), "POST", g.fake.srv.URL+"/v1/messages", strings.NewReader(body))))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if reads != 1 {
		t.Errorf("the body was read %d times, want 1", reads)
	}
	g.verify(t)
}

// A body that readers could read differently is refused when a Call says
// it is a model call: nothing is sent, nothing journaled.
func TestAmbiguousBodiesRefused(t *testing.T) {
	for name, body := range map[string]string{
		"a top-level key twice":    `{"model":"m","tools":[],"system":%s,"messages":[],"tools":[{"name":"read_file"}]}`,
		"a value after the object": `{"model":"m","system":%s,"messages":[],"tools":[{"name":"read_file"}]} {"tools":[]}`,
		"a byte order mark":        "\ufeff" + `{"model":"m","system":%s,"messages":[],"tools":[{"name":"read_file"}]}`,
		"a tool's name twice":      `{"model":"m","system":%s,"messages":[],"tools":[{"name":"read_file","name":"run_shell"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			g := newRig(t, nil)
			b := fmt.Sprintf(body, strconvQuote(g.system))
			_, err := g.client.Do(must(http.NewRequestWithContext(g.ctx("turn-1"), "POST", g.fake.srv.URL+"/v1/messages", strings.NewReader(b))))
			if !errors.Is(err, journal.ErrStaleManifest) || !errors.Is(err, payload.ErrMalformed) {
				t.Fatalf("err = %v", err)
			}
			if n := g.fake.seen(); n != 0 {
				t.Errorf("the provider saw %d requests", n)
			}
			g.j.Close()
			if b, _ := os.ReadFile(g.path); len(b) != 0 {
				t.Errorf("journaled: %s", b)
			}
		})
	}
}

// explained explains frags as a harness that builds its own fragments
// does: as the options' system items of call role agent.main, with the
// tools named active.
func explained(tb testing.TB, frags []promptloom.Fragment, tools ...string) *explain.Explanation {
	tb.Helper()
	o := &options.Options{System: frags, CallRole: "agent.main"}
	for _, t := range tools {
		o.Tools = append(o.Tools, options.Tool{Name: t, Active: true})
	}
	e, err := explain.FromOptions(o, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return e
}
