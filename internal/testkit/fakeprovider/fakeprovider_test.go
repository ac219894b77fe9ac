package fakeprovider_test

// The fakes are checked against the official SDKs: every JSON body and
// every SSE event is decoded with the SDK's own types, and a field the
// SDK does not know (its JSON.ExtraFields; for genai, a field lost on a
// round trip) fails the test, as does an SDK that cannot assemble the
// reply.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom/internal/testkit/fakeprovider"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"google.golang.org/genai"
)

var reply = fakeprovider.Reply{
	Text:      "Let me read main.go, then ünïcode.",
	ToolCalls: []fakeprovider.ToolCall{{ID: "call_a", Name: "read_file", Arguments: `{"path":"main.go","lines":[1,20]}`}},
	Usage:     fakeprovider.Usage{Input: 120, Output: 17, CacheRead: 96, CacheWrite: 24},
	Chunk:     5,
}

// noExtraFields fails for every decoded JSON.ExtraFields entry in v: a
// field the fake sends that the SDK's type does not have.
func noExtraFields(t *testing.T, where string, v any) {
	t.Helper()
	var walk func(path string, v reflect.Value)
	walk = func(path string, v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				walk(path, v.Elem())
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < v.Len(); i++ {
				walk(path+"[]", v.Index(i))
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				f := v.Type().Field(i)
				if !f.IsExported() {
					continue
				}
				if f.Name == "JSON" {
					if extra := v.Field(i).FieldByName("ExtraFields"); extra.IsValid() && extra.Len() > 0 {
						for _, k := range extra.MapKeys() {
							t.Errorf("%s: %s.%s is not a field of %s", where, path, k, v.Type())
						}
					}
					continue
				}
				walk(path+"."+f.Name, v.Field(i))
			}
		}
	}
	walk("", reflect.ValueOf(v))
}

// post sends body to the fake and returns the raw reply.
func post(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// sse splits a stream into its events' names and data.
func sse(t *testing.T, b []byte) (names []string, data [][]byte) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	name := ""
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			names = append(names, name)
			data = append(data, []byte(strings.TrimPrefix(line, "data: ")))
			name = ""
		case line != "":
			t.Errorf("not an SSE line: %q", line)
		}
	}
	return names, data
}

func decode[T any](t *testing.T, where string, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v\n%s", where, err, b)
	}
	noExtraFields(t, where, v)
	return v
}

func TestAnthropicWire(t *testing.T) {
	s := fakeprovider.New(reply, reply)
	defer s.Close()
	_, b := post(t, s.URL+"/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[]}`)
	m := decode[anthropic.Message](t, "message", b)
	if m.StopReason != anthropic.StopReasonToolUse || m.Usage.CacheReadInputTokens != 96 || m.Usage.CacheCreationInputTokens != 24 ||
		m.Model != "claude-sonnet-4-5" || len(m.Content) != 2 || m.Content[1].Name != "read_file" || m.Content[1].ID != "call_a" {
		t.Errorf("message: %s", b)
	}
	resp, b := post(t, s.URL+"/v1/messages", `{"model":"claude-sonnet-4-5","stream":true}`)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	var acc anthropic.Message
	names, data := sse(t, b)
	for i, d := range data {
		ev := decode[anthropic.MessageStreamEventUnion](t, names[i], d)
		if ev.Type != names[i] {
			t.Errorf("event %q carries type %q", names[i], ev.Type)
		}
		if err := acc.Accumulate(ev); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(contentOf(acc), contentOf(m)) || acc.StopReason != m.StopReason || acc.Usage.OutputTokens != 17 ||
		acc.Usage.CacheReadInputTokens != 96 {
		t.Errorf("the stream assembles to %+v, the message is %+v", contentOf(acc), contentOf(m))
	}
}

func contentOf(m anthropic.Message) []string {
	var out []string
	for _, c := range m.Content {
		out = append(out, c.Type+":"+c.Text+c.ID+c.Name+string(c.Input))
	}
	return out
}

// The SDK itself, unmodified: non-streaming and streaming with tools, a
// 429 then a 200 retried, and a stream cancelled while it stalls.
func TestAnthropicSDK(t *testing.T) {
	release := make(chan struct{})
	s := fakeprovider.New(reply,
		fakeprovider.Reply{Status: 429, Header: fakeprovider.RetryAfter(time.Millisecond)}, reply,
		fakeprovider.Reply{Text: strings.Repeat("x", 100), Chunk: 10, StallAfter: 4},
		fakeprovider.Reply{Text: "later", StallAfter: 3, Release: release})
	defer s.Close()
	client := anthropic.NewClient(aoption.WithAPIKey("k"), aoption.WithBaseURL(s.URL))
	params := anthropic.MessageNewParams{Model: "claude-sonnet-4-5", MaxTokens: 100,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}}
	m, err := client.Messages.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if tu := m.Content[1].AsToolUse(); tu.Name != "read_file" || string(tu.Input) != `{"path":"main.go","lines":[1,20]}` {
		t.Errorf("tool use %+v", tu)
	}
	stream := client.Messages.NewStreaming(context.Background(), params)
	var acc anthropic.Message
	for stream.Next() {
		if err := acc.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if acc.Content[0].Text != reply.Text || acc.Content[1].AsToolUse().ID != "call_a" || acc.Usage.CacheReadInputTokens != 96 {
		t.Errorf("streamed %+v", acc)
	}
	if got := len(s.Requests()); got != 3 {
		t.Errorf("%d requests, want 3 (one retried)", got)
	}

	ctx, cancel := context.WithCancel(context.Background())
	stream = client.Messages.NewStreaming(ctx, params)
	n := 0
	for stream.Next() {
		n++
		if stream.Current().Type == "content_block_delta" {
			cancel()
		}
	}
	cancel()
	// Four events were sent before the stall; the SDK hides the ping.
	if err := stream.Err(); !errors.Is(err, context.Canceled) || n != 3 {
		t.Errorf("after %d events: %v, want context.Canceled after 3", n, err)
	}

	stream = client.Messages.NewStreaming(context.Background(), params)
	for range 2 { // message_start, content_block_start: then the stall
		if !stream.Next() {
			t.Fatal(stream.Err())
		}
	}
	close(release)
	for stream.Next() {
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	reqs := s.Requests()
	if r := reqs[len(reqs)-1]; r.Provider != "anthropic" || !r.Stream || r.Path != "/v1/messages" ||
		!strings.Contains(string(r.Body), `"stream":true`) || r.Header.Get("X-Api-Key") != "k" {
		t.Errorf("captured %+v", r)
	}
}

func TestAnthropicError(t *testing.T) {
	s := fakeprovider.New(fakeprovider.Reply{Status: 400})
	defer s.Close()
	client := anthropic.NewClient(aoption.WithAPIKey("k"), aoption.WithBaseURL(s.URL), aoption.WithMaxRetries(0))
	_, err := client.Messages.New(context.Background(), anthropic.MessageNewParams{Model: "m", MaxTokens: 1})
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.RawJSON(), "invalid_request_error") {
		t.Errorf("%v", err)
	}
}

func TestOpenAIChatWire(t *testing.T) {
	s := fakeprovider.New(reply, reply, reply)
	defer s.Close()
	_, b := post(t, s.URL+"/v1/chat/completions", `{"model":"gpt-4.1"}`)
	c := decode[openai.ChatCompletion](t, "chat.completion", b)
	if c.Choices[0].FinishReason != "tool_calls" || c.Usage.PromptTokensDetails.CachedTokens != 96 ||
		c.Choices[0].Message.ToolCalls[0].Function.Arguments != `{"path":"main.go","lines":[1,20]}` || c.Model != "gpt-4.1" {
		t.Errorf("chat.completion: %s", b)
	}
	for _, usage := range []bool{false, true} {
		body := `{"model":"gpt-4.1","stream":true}`
		if usage {
			body = `{"model":"gpt-4.1","stream":true,"stream_options":{"include_usage":true}}`
		}
		_, b = post(t, s.URL+"/v1/chat/completions", body)
		var acc openai.ChatCompletionAccumulator
		_, data := sse(t, b)
		if string(data[len(data)-1]) != "[DONE]" {
			t.Errorf("the stream does not end in [DONE]")
		}
		for _, d := range data[:len(data)-1] {
			if !acc.AddChunk(decode[openai.ChatCompletionChunk](t, "chunk", d)) {
				t.Fatalf("the accumulator refused %s", d)
			}
		}
		if acc.Choices[0].Message.Content != reply.Text || acc.Choices[0].Message.ToolCalls[0].Function.Arguments != `{"path":"main.go","lines":[1,20]}` ||
			acc.Choices[0].FinishReason != "tool_calls" || (acc.Usage.PromptTokensDetails.CachedTokens == 96) != usage {
			t.Errorf("include_usage %v: assembled %+v", usage, acc.ChatCompletion)
		}
	}
}

func TestOpenAIResponsesWire(t *testing.T) {
	s := fakeprovider.New(reply, reply)
	defer s.Close()
	_, b := post(t, s.URL+"/v1/responses", `{"model":"gpt-4.1"}`)
	r := decode[responses.Response](t, "response", b)
	if r.Status != "completed" || r.OutputText() != reply.Text || r.Output[1].Name != "read_file" || r.Output[1].CallID != "call_a" ||
		r.Usage.InputTokensDetails.CachedTokens != 96 || r.Usage.InputTokens != 120 {
		t.Errorf("response: %s", b)
	}
	_, b = post(t, s.URL+"/v1/responses", `{"model":"gpt-4.1","stream":true}`)
	names, data := sse(t, b)
	var text, args string
	for i, d := range data {
		ev := decode[responses.ResponseStreamEventUnion](t, names[i], d)
		if ev.Type != names[i] || ev.SequenceNumber != int64(i) {
			t.Errorf("event %d %q: type %q, sequence %d", i, names[i], ev.Type, ev.SequenceNumber)
		}
		switch ev.Type {
		case "response.output_text.delta":
			text += ev.Delta
		case "response.function_call_arguments.delta":
			args += ev.Delta
		case "response.completed":
			if ev.Response.OutputText() != reply.Text || len(ev.Response.Output) != 2 || ev.Response.Usage.InputTokensDetails.CachedTokens != 96 {
				t.Errorf("response.completed carries %s", ev.Response.RawJSON())
			}
		}
	}
	if text != reply.Text || args != reply.ToolCalls[0].Arguments || names[len(names)-1] != "response.completed" {
		t.Errorf("streamed %q %q, last %s", text, args, names[len(names)-1])
	}
}

func TestOpenAISDK(t *testing.T) {
	s := fakeprovider.New(fakeprovider.Reply{Status: 429, Header: fakeprovider.RetryAfter(time.Millisecond)}, reply, reply, reply, reply,
		fakeprovider.Reply{Text: strings.Repeat("y", 50), Chunk: 5, StallAfter: 3})
	defer s.Close()
	client := openai.NewClient(ooption.WithAPIKey("k"), ooption.WithBaseURL(s.URL+"/v1"))
	ctx := context.Background()
	chat := openai.ChatCompletionNewParams{Model: "gpt-4.1", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}}
	c, err := client.Chat.Completions.New(ctx, chat)
	if err != nil {
		t.Fatal(err)
	}
	if c.Choices[0].Message.ToolCalls[0].Function.Name != "read_file" {
		t.Errorf("%+v", c)
	}
	stream := client.Chat.Completions.NewStreaming(ctx, chat)
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil || acc.Usage.PromptTokensDetails.CachedTokens != 96 || acc.Choices[0].Message.ToolCalls[0].ID != "call_a" {
		t.Errorf("%v %+v", err, acc.ChatCompletion)
	}
	rp := responses.ResponseNewParams{Model: "gpt-4.1", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}}
	r, err := client.Responses.New(ctx, rp)
	if err != nil || r.OutputText() != reply.Text {
		t.Fatalf("%v %+v", err, r)
	}
	rs := client.Responses.NewStreaming(ctx, rp)
	var done responses.Response
	for rs.Next() {
		if ev := rs.Current(); ev.Type == "response.completed" {
			done = ev.AsResponseCompleted().Response
		}
	}
	if err := rs.Err(); err != nil || done.Usage.InputTokensDetails.CachedTokens != 96 || done.Output[1].AsFunctionCall().Arguments != reply.ToolCalls[0].Arguments {
		t.Errorf("%v %+v", err, done)
	}
	cctx, cancel := context.WithCancel(ctx)
	stream = client.Chat.Completions.NewStreaming(cctx, chat)
	n := 0
	for stream.Next() {
		if n++; n == 3 {
			cancel()
		}
	}
	cancel()
	if err := stream.Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("after %d chunks: %v", n, err)
	}
	reqs := s.Requests()
	if len(reqs) != 6 || reqs[0].Provider != "openai.chat" || reqs[4].Provider != "openai.responses" || !reqs[4].Stream {
		t.Errorf("captured %+v", reqs)
	}
}

// genaiRoundTrip fails when b holds a field genai's type T drops.
func genaiRoundTrip[T any](t *testing.T, where string, b []byte) *T {
	t.Helper()
	v := new(T)
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v\n%s", where, err, b)
	}
	again, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var want, got any
	json.Unmarshal(b, &want)
	json.Unmarshal(again, &got)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s: genai does not keep every field (-sent +kept):\n%s", where, d)
	}
	return v
}

func TestGeminiWire(t *testing.T) {
	s := fakeprovider.New(reply, reply)
	defer s.Close()
	_, b := post(t, s.URL+"/v1beta/models/gemini-2.5-flash:generateContent", `{}`)
	r := genaiRoundTrip[genai.GenerateContentResponse](t, "generateContent", b)
	if r.Text() != reply.Text || r.FunctionCalls()[0].Name != "read_file" || r.FunctionCalls()[0].Args["path"] != "main.go" ||
		r.UsageMetadata.CachedContentTokenCount != 96 || r.Candidates[0].FinishReason != genai.FinishReasonStop || r.ModelVersion != "gemini-2.5-flash" {
		t.Errorf("generateContent: %s", b)
	}
	resp, b := post(t, s.URL+"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", `{}`)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" || !bytes.Contains(b, []byte("}\r\n\r\ndata: ")) {
		t.Errorf("Content-Type %q, stream %q", ct, b)
	}
	_, data := sse(t, b)
	var text string
	for i, d := range data {
		c := genaiRoundTrip[genai.GenerateContentResponse](t, "chunk", d)
		text += c.Text()
		if last := i == len(data)-1; last != (c.Candidates[0].FinishReason != "") || last != (len(c.FunctionCalls()) == 1) {
			t.Errorf("chunk %d of %d: %s", i, len(data), d)
		}
	}
	if text != reply.Text {
		t.Errorf("streamed %q", text)
	}
	if reqs := s.Requests(); reqs[1].Provider != "gemini" || !reqs[1].Stream || reqs[1].Query != "alt=sse" {
		t.Errorf("captured %+v", reqs[1])
	}
}

func TestGeminiSDK(t *testing.T) {
	s := fakeprovider.New(reply, reply, fakeprovider.Reply{Status: 429})
	defer s.Close()
	ctx := context.Background()
	client, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "k", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: s.URL}})
	if err != nil {
		t.Fatal(err)
	}
	contents := genai.Text("hi")
	r, err := client.Models.GenerateContent(ctx, "gemini-2.5-flash", contents, nil)
	if err != nil || r.FunctionCalls()[0].ID != "call_a" || r.UsageMetadata.CandidatesTokenCount != 17 {
		t.Fatalf("%v %+v", err, r)
	}
	var text string
	var usage *genai.GenerateContentResponseUsageMetadata
	for c, err := range client.Models.GenerateContentStream(ctx, "gemini-2.5-flash", contents, nil) {
		if err != nil {
			t.Fatal(err)
		}
		text += c.Text()
		usage = c.UsageMetadata
	}
	if text != reply.Text || usage.CachedContentTokenCount != 96 {
		t.Errorf("streamed %q, usage %+v", text, usage)
	}
	_, err = client.Models.GenerateContent(ctx, "gemini-2.5-flash", contents, nil)
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != 429 || apiErr.Status != "RESOURCE_EXHAUSTED" {
		t.Errorf("%v", err)
	}
	if reqs := s.Requests(); reqs[1].Path != "/v1beta/models/gemini-2.5-flash:streamGenerateContent" || reqs[1].Header.Get("X-Goog-Api-Key") != "k" {
		t.Errorf("captured %+v", reqs[1])
	}
}

// An unknown path is a 404, and still captured.
func TestUnknownPath(t *testing.T) {
	s := fakeprovider.New()
	defer s.Close()
	if resp, _ := post(t, s.URL+"/v1/embeddings", `{}`); resp.StatusCode != 404 || s.Requests()[0].Provider != "" {
		t.Errorf("%d %+v", resp.StatusCode, s.Requests())
	}
}
