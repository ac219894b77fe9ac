package transport_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tidwall/gjson"
)

// fake is a provider on loopback speaking each wire format the transport
// reads: Anthropic Messages, OpenAI Chat Completions and Responses, Gemini
// generateContent and streamGenerateContent (SSE), each answering with
// text and, when the request sends tools, a call of its first tool.
type fake struct {
	srv *httptest.Server
	// fail429 is how many requests are answered 429 before the first 200.
	fail429 atomic.Int32
	// hold, when set, is where a stream waits after its first event until
	// the channel is closed (for a cancel mid-stream).
	hold chan struct{}
	// secret, when set, must not reach the provider... it is only echoed
	// when echo is set.
	mu       sync.Mutex
	requests int
	bodies   [][]byte
}

func newFake(t testing.TB) *fake {
	f := &fake{}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) seen() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.requests++
	f.bodies = append(f.bodies, body)
	f.mu.Unlock()
	if f.fail429.Load() > 0 {
		f.fail429.Add(-1)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After-Ms", "1")
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`)
		return
	}
	b := gjson.ParseBytes(body)
	tool := ""
	for _, p := range []string{"tools.0.name", "tools.0.function.name", "tools.0.functionDeclarations.0.name"} {
		if n := b.Get(p).Str; n != "" {
			tool = n
			break
		}
	}
	stream := b.Get("stream").Bool() || strings.HasSuffix(r.URL.Path, ":streamGenerateContent")
	var events []string
	var whole string
	path := r.URL.Path
	switch {
	case strings.HasSuffix(path, "/messages"):
		events, whole = anthropicAnswer(tool)
	case strings.HasSuffix(path, "/chat/completions"):
		events, whole = chatAnswer(tool)
	case strings.HasSuffix(path, "/responses"):
		events, whole = responsesAnswer(tool)
	case strings.Contains(path, ":generateContent"), strings.Contains(path, ":streamGenerateContent"):
		events, whole = geminiAnswer(tool)
	default:
		http.NotFound(w, r)
		return
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, whole)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl, _ := w.(http.Flusher)
	for i, e := range events {
		io.WriteString(w, e)
		fl.Flush()
		if i == 0 && f.hold != nil {
			select {
			case <-f.hold:
			case <-r.Context().Done():
				return
			}
		}
	}
}

func sse(name, data string) string {
	if name == "" {
		return "data: " + data + "\n\n"
	}
	return "event: " + name + "\ndata: " + data + "\n\n"
}

func anthropicAnswer(tool string) ([]string, string) {
	content := `{"type":"text","text":"Hello there"}`
	stop := "end_turn"
	ev := []string{
		sse("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1,"cache_read_input_tokens":7,"cache_creation_input_tokens":3}}}`),
		sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
		sse("ping", `{"type":"ping"}`),
		sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`),
		sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" there"}}`),
		sse("content_block_stop", `{"type":"content_block_stop","index":0}`),
	}
	if tool != "" {
		stop = "tool_use"
		content += fmt.Sprintf(`,{"type":"tool_use","id":"toolu_1","name":%q,"input":{"path":"main.go"}}`, tool)
		ev = append(ev,
			sse("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":%q,"input":{}}}`, tool)),
			sse("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\":"}}`),
			sse("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":" \"main.go\"}"}}`),
			sse("content_block_stop", `{"type":"content_block_stop","index":1}`))
	}
	ev = append(ev,
		sse("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":5}}`, stop)),
		sse("message_stop", `{"type":"message_stop"}`))
	whole := fmt.Sprintf(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[%s],"stop_reason":%q,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":7,"cache_creation_input_tokens":3}}`, content, stop)
	return ev, whole
}

func chatAnswer(tool string) ([]string, string) {
	chunk := func(choice string) string {
		return sse("", `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":0,"model":"gpt-4o","choices":[`+choice+`]}`)
	}
	ev := []string{
		chunk(`{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":null}`),
		chunk(`{"index":0,"delta":{"content":" there"},"finish_reason":null}`),
	}
	msg, stop := `"content":"Hello there"`, "stop"
	if tool != "" {
		stop = "tool_calls"
		msg += fmt.Sprintf(`,"tool_calls":[{"id":"call_1","type":"function","function":{"name":%q,"arguments":"{\"path\":\"main.go\"}"}}]`, tool)
		ev = append(ev,
			chunk(fmt.Sprintf(`{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":%q,"arguments":""}}]},"finish_reason":null}`, tool)),
			chunk(`{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]},"finish_reason":null}`),
			chunk(`{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":" \"main.go\"}"}}]},"finish_reason":null}`))
	}
	ev = append(ev, chunk(fmt.Sprintf(`{"index":0,"delta":{},"finish_reason":%q}`, stop)),
		sse("", `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":0,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":7}}}`),
		sse("", "[DONE]"))
	whole := fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion","created":0,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant",%s},"finish_reason":%q}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":7}}}`, msg, stop)
	return ev, whole
}

func responsesAnswer(tool string) ([]string, string) {
	output := `{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hello there","annotations":[]}]}`
	if tool != "" {
		output += fmt.Sprintf(`,{"type":"function_call","id":"fc_1","call_id":"call_1","name":%q,"arguments":"{\"path\":\"main.go\"}","status":"completed"}`, tool)
	}
	resp := func(status, out, usage string) string {
		return fmt.Sprintf(`{"id":"resp_1","object":"response","created_at":0,"model":"gpt-4o","status":%q,"output":[%s],"parallel_tool_calls":true,"tool_choice":"auto","tools":[]%s}`, status, out, usage)
	}
	usage := `,"usage":{"input_tokens":10,"output_tokens":5,"total_tokens":15,"input_tokens_details":{"cached_tokens":7},"output_tokens_details":{"reasoning_tokens":0}}`
	whole := resp("completed", output, usage)
	ev := []string{
		sse("response.created", `{"type":"response.created","sequence_number":0,"response":`+resp("in_progress", "", "")+`}`),
		sse("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":1,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hello"}`),
		sse("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_1","output_index":0,"content_index":0,"delta":" there"}`),
		sse("response.completed", `{"type":"response.completed","sequence_number":3,"response":`+whole+`}`),
	}
	return ev, whole
}

func geminiAnswer(tool string) ([]string, string) {
	call := ""
	if tool != "" {
		call = fmt.Sprintf(`,{"functionCall":{"name":%q,"args":{"path":"main.go"}}}`, tool)
	}
	usage := `"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5,"totalTokenCount":15,"cachedContentTokenCount":7}`
	whole := `{"candidates":[{"content":{"role":"model","parts":[{"text":"Hello there"}` + call + `]},"finishReason":"STOP","index":0}],` + usage + `,"modelVersion":"gemini-2.5-flash","responseId":"resp_g1"}`
	ev := []string{
		"data: " + `{"candidates":[{"content":{"role":"model","parts":[{"text":"Hello"}]},"index":0}],"modelVersion":"gemini-2.5-flash","responseId":"resp_g1"}` + "\r\n\r\n",
		"data: " + `{"candidates":[{"content":{"role":"model","parts":[{"text":" there"}` + call + `]},"finishReason":"STOP","index":0}],` + usage + `,"modelVersion":"gemini-2.5-flash","responseId":"resp_g1"}` + "\r\n\r\n",
	}
	return ev, whole
}
