// Package fakeprovider is an httptest server that answers as the model
// providers do, on the wire: Anthropic's Messages API, OpenAI's Chat
// Completions and Responses APIs, and Gemini's generateContent and
// streamGenerateContent (alt=sse), each as JSON or as the provider's SSE
// stream, with text, tool calls and usage including the cache tokens. The
// provider and the mode are read from the request as the real services
// read them (the path; "stream": true in the body, or Gemini's
// :streamGenerateContent), so one server answers any official SDK.
//
// A test scripts the replies in order (a 429 then a 200, a stream that
// stalls until the test cancels or releases it) and reads back every
// request the server received. Its tests decode what it sends with the
// official SDKs, so the shapes are the SDKs' shapes, not a guess.
//
// It is a test kit: tests and the runnable examples use it; the library
// never does.
package fakeprovider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Reply is one scripted answer. Its zero value is a 200 with the text
// "ok", no tool calls, and small usage.
type Reply struct {
	// Status is the HTTP status; 0 means 200. A status of 400 or more
	// answers with the provider's error body (or Body) and no stream.
	Status int
	// Header is added to the response (Retry-After, say).
	Header http.Header
	// Body, when set, is sent verbatim as the response body in place of
	// the generated one (with Content-Type application/json).
	Body string

	// ID is the response id; empty means one the server makes up.
	ID string
	// Text is the assistant's text; it may be empty when ToolCalls is not.
	Text string
	// ToolCalls are the tool calls that follow the text.
	ToolCalls []ToolCall
	// StopReason overrides the provider's stop or finish reason, which is
	// otherwise the provider's own for "ended" or "wants tools" (end_turn
	// or tool_use; stop or tool_calls; STOP).
	StopReason string
	// Usage is reported as each provider reports it.
	Usage Usage

	// Chunk is how many bytes of text (or of a tool call's arguments) a
	// stream sends in one delta; 0 means 16.
	Chunk int
	// StallAfter, when positive, makes a stream stop after that many
	// events (flushed) until the request's context ends, Release is
	// closed, or the server closes; then the rest follows (if the client
	// is still there).
	StallAfter int
	Release    <-chan struct{}
}

// ToolCall is one tool call in a reply.
type ToolCall struct {
	ID, Name string
	// Arguments is a JSON object; empty means {}.
	Arguments string
}

// Usage is the token usage of a reply.
type Usage struct {
	Input, Output int
	// CacheRead is the tokens read from the provider's prompt cache
	// (Anthropic's cache_read_input_tokens, OpenAI's cached_tokens,
	// Gemini's cachedContentTokenCount); CacheWrite the tokens written to
	// it (Anthropic's cache_creation_input_tokens, OpenAI's
	// cache_write_tokens; Gemini reports none).
	CacheRead, CacheWrite int
}

// Request is one request the server received.
type Request struct {
	Method string
	// Path and Query are the URL's.
	Path, Query string
	Header      http.Header
	Body        []byte
	// Provider is "anthropic", "openai.chat", "openai.responses",
	// "gemini", or "" for a path the server does not know (answered 404).
	Provider string
	Stream   bool
}

// Server is a running fake provider. Close it when done.
type Server struct {
	*httptest.Server

	mu       sync.Mutex
	script   []Reply
	requests []Request
	n        int
	closed   chan struct{}
	once     sync.Once
	usage    func(provider string, body []byte) (Usage, bool)
}

// UsageFor makes the server report, for a reply whose script gives no
// usage, what fn says of the request (a fake prompt cache's read and
// write, say); fn's false leaves the default.
func (s *Server) UsageFor(fn func(provider string, body []byte) (Usage, bool)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.usage = fn
}

// New starts a server that answers with replies in order, then with the
// zero Reply.
func New(replies ...Reply) *Server {
	s := &Server{script: replies, closed: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Push appends replies to the script.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, replies...)
}

// Requests returns every request received so far, in order of arrival.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Close releases every stalled stream and shuts the server down.
func (s *Server) Close() {
	s.once.Do(func() { close(s.closed) })
	s.Server.CloseClientConnections()
	s.Server.Close()
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body}
	var head struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
		Opts   struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	_ = json.Unmarshal(body, &head)
	model := head.Model
	switch p := r.URL.Path; {
	case strings.HasSuffix(p, "/messages"):
		req.Provider, req.Stream = "anthropic", head.Stream
	case strings.HasSuffix(p, "/chat/completions"):
		req.Provider, req.Stream = "openai.chat", head.Stream
	case strings.HasSuffix(p, "/responses"):
		req.Provider, req.Stream = "openai.responses", head.Stream
	case strings.HasSuffix(p, ":generateContent"), strings.HasSuffix(p, ":streamGenerateContent"):
		req.Provider, req.Stream = "gemini", strings.HasSuffix(p, ":streamGenerateContent")
		if i := strings.LastIndex(p, "/models/"); i >= 0 {
			model = strings.TrimSuffix(strings.TrimSuffix(p[i+len("/models/"):], ":generateContent"), ":streamGenerateContent")
		}
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	rep := Reply{}
	if len(s.script) > 0 {
		rep, s.script = s.script[0], s.script[1:]
	}
	s.n++
	n := s.n
	usage := s.usage
	s.mu.Unlock()
	if rep.Usage == (Usage{}) && usage != nil && req.Provider != "" {
		if u, ok := usage(req.Provider, body); ok {
			rep.Usage = u
		}
	}

	if req.Provider == "" {
		http.NotFound(w, r)
		return
	}
	if rep.ID == "" {
		rep.ID = map[string]string{
			"anthropic": "msg_fake%02d", "openai.chat": "chatcmpl-fake%02d",
			"openai.responses": "resp_fake%02d", "gemini": "fake-response-%02d",
		}[req.Provider]
		rep.ID = fmt.Sprintf(rep.ID, n)
	}
	if rep.Text == "" && len(rep.ToolCalls) == 0 && rep.Body == "" {
		rep.Text = "ok"
	}
	if rep.Usage == (Usage{}) {
		rep.Usage = Usage{Input: 10, Output: 2}
	}
	if rep.Chunk <= 0 {
		rep.Chunk = 16
	}
	for k, vs := range rep.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	if status >= 400 || rep.Body != "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		b := rep.Body
		if b == "" {
			b = errorBody(req.Provider, status)
		}
		io.WriteString(w, b)
		return
	}
	g := gen{rep: rep, model: model, n: n}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		var b []byte
		switch req.Provider {
		case "anthropic":
			b = g.anthropic()
		case "openai.chat":
			b = g.chat()
		case "openai.responses":
			b = g.responses()
		case "gemini":
			b = g.gemini()
		}
		w.Write(b)
		return
	}
	var events []event
	switch req.Provider {
	case "anthropic":
		events = g.anthropicStream()
	case "openai.chat":
		events = g.chatStream(head.Opts.IncludeUsage)
	case "openai.responses":
		events = g.responsesStream()
	case "gemini":
		events = g.geminiStream()
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(status)
	flusher, _ := w.(http.Flusher)
	sep := "\n\n"
	if req.Provider == "gemini" {
		sep = "\r\n\r\n" // as Gemini sends it
	}
	for i, e := range events {
		if rep.StallAfter > 0 && i == rep.StallAfter {
			if flusher != nil {
				flusher.Flush()
			}
			select {
			case <-r.Context().Done():
				return
			case <-s.closed:
				return
			case <-rep.Release:
			}
		}
		var buf bytes.Buffer
		if e.name != "" {
			buf.WriteString("event: " + e.name + "\n")
		}
		buf.WriteString("data: ")
		buf.Write(e.data)
		buf.WriteString(sep)
		if _, err := w.Write(buf.Bytes()); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
}

func errorBody(provider string, status int) string {
	msg := http.StatusText(status)
	switch provider {
	case "anthropic":
		typ := map[int]string{400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
			404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 529: "overloaded_error"}[status]
		if typ == "" {
			typ = "api_error"
		}
		return string(obj("type", "error", "error", obj("type", typ, "message", msg)))
	case "gemini":
		st := map[int]string{400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
			429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}[status]
		if st == "" {
			st = "INTERNAL"
		}
		return string(obj("error", obj("code", status, "message", msg, "status", st)))
	default:
		code := any(nil)
		typ := "invalid_request_error"
		if status == 429 {
			code, typ = "rate_limit_exceeded", "requests"
		} else if status >= 500 {
			typ = "server_error"
		}
		return string(obj("error", obj("message", msg, "type", typ, "param", nil, "code", code)))
	}
}

// event is one server-sent event: a name (empty for OpenAI Chat and
// Gemini, which send data lines only) and its JSON.
type event struct {
	name string
	data []byte
}

// gen renders one reply in each provider's shapes.
type gen struct {
	rep   Reply
	model string
	n     int
}

const created = 1764633600 // a fixed time, so replies are reproducible

// obj is a JSON object of key, value pairs, in the order given; a value
// that is already a json.RawMessage is used as it is.
func obj(kv ...any) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv[i].(string))
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(kv[i+1])
		if err != nil {
			panic(err) // only ever values this file builds
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func arr(vs ...json.RawMessage) json.RawMessage {
	if len(vs) == 0 {
		return json.RawMessage("[]")
	}
	b, _ := json.Marshal(vs)
	return b
}

func (c ToolCall) args() json.RawMessage {
	if strings.TrimSpace(c.Arguments) == "" {
		return json.RawMessage("{}")
	}
	return json.RawMessage(c.Arguments)
}

func (c ToolCall) id(n, i int, prefix string) string {
	if c.ID != "" {
		return c.ID
	}
	return fmt.Sprintf("%s%02d_%d", prefix, n, i)
}

// chunks splits s into pieces of at most n bytes, on rune boundaries.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if cut == 0 {
			cut = n
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

func (g gen) stop(ended, tools string) string {
	if g.rep.StopReason != "" {
		return g.rep.StopReason
	}
	if len(g.rep.ToolCalls) > 0 {
		return tools
	}
	return ended
}

// --- Anthropic Messages ---

func (g gen) anthropicUsage() json.RawMessage {
	u := g.rep.Usage
	return obj("input_tokens", u.Input, "cache_creation_input_tokens", u.CacheWrite,
		"cache_read_input_tokens", u.CacheRead, "output_tokens", u.Output, "service_tier", "standard")
}

func (g gen) anthropicContent() []json.RawMessage {
	var content []json.RawMessage
	if g.rep.Text != "" {
		content = append(content, obj("type", "text", "text", g.rep.Text))
	}
	for i, c := range g.rep.ToolCalls {
		content = append(content, obj("type", "tool_use", "id", c.id(g.n, i, "toolu_fake"), "name", c.Name, "input", c.args()))
	}
	return content
}

func (g gen) anthropicMessage(content []json.RawMessage, stop any, usage json.RawMessage) json.RawMessage {
	return obj("id", g.rep.ID, "type", "message", "role", "assistant", "model", g.model,
		"content", arr(content...), "stop_reason", stop, "stop_sequence", nil, "usage", usage)
}

func (g gen) anthropic() []byte {
	return g.anthropicMessage(g.anthropicContent(), g.stop("end_turn", "tool_use"), g.anthropicUsage())
}

func (g gen) anthropicStream() []event {
	u := g.rep.Usage
	ev := func(name string, kv ...any) event {
		return event{name, obj(append([]any{"type", name}, kv...)...)}
	}
	startUsage := obj("input_tokens", u.Input, "cache_creation_input_tokens", u.CacheWrite,
		"cache_read_input_tokens", u.CacheRead, "output_tokens", 1, "service_tier", "standard")
	events := []event{ev("message_start", "message", g.anthropicMessage(nil, nil, startUsage)), ev("ping")}
	idx := 0
	if g.rep.Text != "" {
		events = append(events, ev("content_block_start", "index", idx, "content_block", obj("type", "text", "text", "")))
		for _, c := range chunks(g.rep.Text, g.rep.Chunk) {
			events = append(events, ev("content_block_delta", "index", idx, "delta", obj("type", "text_delta", "text", c)))
		}
		events = append(events, ev("content_block_stop", "index", idx))
		idx++
	}
	for i, c := range g.rep.ToolCalls {
		events = append(events, ev("content_block_start", "index", idx, "content_block",
			obj("type", "tool_use", "id", c.id(g.n, i, "toolu_fake"), "name", c.Name, "input", json.RawMessage("{}"))))
		events = append(events, ev("content_block_delta", "index", idx, "delta", obj("type", "input_json_delta", "partial_json", "")))
		for _, p := range chunks(string(c.args()), g.rep.Chunk) {
			events = append(events, ev("content_block_delta", "index", idx, "delta", obj("type", "input_json_delta", "partial_json", p)))
		}
		events = append(events, ev("content_block_stop", "index", idx))
		idx++
	}
	events = append(events,
		ev("message_delta", "delta", obj("stop_reason", g.stop("end_turn", "tool_use"), "stop_sequence", nil),
			"usage", obj("input_tokens", u.Input, "cache_creation_input_tokens", u.CacheWrite,
				"cache_read_input_tokens", u.CacheRead, "output_tokens", u.Output)),
		ev("message_stop"))
	return events
}

// --- OpenAI Chat Completions ---

func (g gen) chatUsage() json.RawMessage {
	u := g.rep.Usage
	return obj("prompt_tokens", u.Input, "completion_tokens", u.Output, "total_tokens", u.Input+u.Output,
		"prompt_tokens_details", obj("cached_tokens", u.CacheRead, "cache_write_tokens", u.CacheWrite, "audio_tokens", 0),
		"completion_tokens_details", obj("reasoning_tokens", 0, "audio_tokens", 0,
			"accepted_prediction_tokens", 0, "rejected_prediction_tokens", 0))
}

func (g gen) chat() []byte {
	var content any
	if g.rep.Text != "" {
		content = g.rep.Text
	}
	msg := []any{"role", "assistant", "content", content, "refusal", nil, "annotations", arr()}
	if len(g.rep.ToolCalls) > 0 {
		var calls []json.RawMessage
		for i, c := range g.rep.ToolCalls {
			calls = append(calls, obj("id", c.id(g.n, i, "call_fake"), "type", "function",
				"function", obj("name", c.Name, "arguments", string(c.args()))))
		}
		msg = append(msg, "tool_calls", arr(calls...))
	}
	return obj("id", g.rep.ID, "object", "chat.completion", "created", created, "model", g.model,
		"choices", arr(obj("index", 0, "message", obj(msg...), "logprobs", nil,
			"finish_reason", g.stop("stop", "tool_calls"))),
		"usage", g.chatUsage(), "service_tier", "default", "system_fingerprint", "fp_fake")
}

func (g gen) chatStream(includeUsage bool) []event {
	chunk := func(delta json.RawMessage, finish any) event {
		c := []any{"id", g.rep.ID, "object", "chat.completion.chunk", "created", created, "model", g.model,
			"service_tier", "default", "system_fingerprint", "fp_fake",
			"choices", arr(obj("index", 0, "delta", delta, "logprobs", nil, "finish_reason", finish))}
		if includeUsage {
			c = append(c, "usage", nil)
		}
		return event{data: obj(c...)}
	}
	events := []event{chunk(obj("role", "assistant", "content", "", "refusal", nil), nil)}
	for _, c := range chunks(g.rep.Text, g.rep.Chunk) {
		events = append(events, chunk(obj("content", c), nil))
	}
	for i, c := range g.rep.ToolCalls {
		events = append(events, chunk(obj("tool_calls", arr(obj("index", i, "id", c.id(g.n, i, "call_fake"), "type", "function",
			"function", obj("name", c.Name, "arguments", "")))), nil))
		for _, p := range chunks(string(c.args()), g.rep.Chunk) {
			events = append(events, chunk(obj("tool_calls", arr(obj("index", i, "function", obj("arguments", p)))), nil))
		}
	}
	events = append(events, chunk(obj(), g.stop("stop", "tool_calls")))
	if includeUsage {
		events = append(events, event{data: obj("id", g.rep.ID, "object", "chat.completion.chunk", "created", created,
			"model", g.model, "service_tier", "default", "system_fingerprint", "fp_fake", "choices", arr(), "usage", g.chatUsage())})
	}
	return append(events, event{data: []byte("[DONE]")})
}

// --- OpenAI Responses ---

func (g gen) responsesUsage() json.RawMessage {
	u := g.rep.Usage
	return obj("input_tokens", u.Input, "input_tokens_details", obj("cached_tokens", u.CacheRead, "cache_write_tokens", u.CacheWrite),
		"output_tokens", u.Output, "output_tokens_details", obj("reasoning_tokens", 0), "total_tokens", u.Input+u.Output)
}

func (g gen) responsesItems(status string) (message json.RawMessage, calls []json.RawMessage) {
	if g.rep.Text != "" {
		message = obj("id", fmt.Sprintf("msg_fake%02d", g.n), "type", "message", "status", status, "role", "assistant",
			"content", arr(obj("type", "output_text", "annotations", arr(), "logprobs", arr(), "text", g.rep.Text)))
	}
	for i, c := range g.rep.ToolCalls {
		calls = append(calls, obj("id", fmt.Sprintf("fc_fake%02d_%d", g.n, i), "type", "function_call", "status", status,
			"arguments", string(c.args()), "call_id", c.id(g.n, i, "call_fake"), "name", c.Name))
	}
	return message, calls
}

func (g gen) response(status string, output []json.RawMessage, usage any) json.RawMessage {
	var incomplete any
	if g.rep.StopReason != "" && status == "completed" {
		status, incomplete = "incomplete", obj("reason", g.rep.StopReason)
	}
	return obj("id", g.rep.ID, "object", "response", "created_at", created, "status", status,
		"background", false, "error", nil, "incomplete_details", incomplete, "instructions", nil,
		"max_output_tokens", nil, "model", g.model, "output", arr(output...), "parallel_tool_calls", true,
		"previous_response_id", nil, "reasoning", obj("effort", nil, "summary", nil), "service_tier", "default",
		"temperature", 1.0, "text", obj("format", obj("type", "text")), "tool_choice", "auto",
		"tools", arr(), "top_p", 1.0, "truncation", "disabled", "usage", usage, "user", nil, "metadata", obj())
}

func (g gen) responses() []byte {
	message, calls := g.responsesItems("completed")
	var output []json.RawMessage
	if message != nil {
		output = append(output, message)
	}
	return g.response("completed", append(output, calls...), g.responsesUsage())
}

func (g gen) responsesStream() []event {
	seq := 0
	ev := func(name string, kv ...any) event {
		e := event{name, obj(append([]any{"type", name, "sequence_number", seq}, kv...)...)}
		seq++
		return e
	}
	events := []event{
		ev("response.created", "response", g.response("in_progress", nil, nil)),
		ev("response.in_progress", "response", g.response("in_progress", nil, nil)),
	}
	message, calls := g.responsesItems("completed")
	var output []json.RawMessage
	out := 0
	if message != nil {
		id := fmt.Sprintf("msg_fake%02d", g.n)
		events = append(events,
			ev("response.output_item.added", "output_index", out, "item",
				obj("id", id, "type", "message", "status", "in_progress", "role", "assistant", "content", arr())),
			ev("response.content_part.added", "item_id", id, "output_index", out, "content_index", 0,
				"part", obj("type", "output_text", "annotations", arr(), "logprobs", arr(), "text", "")))
		for _, c := range chunks(g.rep.Text, g.rep.Chunk) {
			events = append(events, ev("response.output_text.delta", "item_id", id, "output_index", out,
				"content_index", 0, "delta", c, "logprobs", arr()))
		}
		events = append(events,
			ev("response.output_text.done", "item_id", id, "output_index", out, "content_index", 0,
				"text", g.rep.Text, "logprobs", arr()),
			ev("response.content_part.done", "item_id", id, "output_index", out, "content_index", 0,
				"part", obj("type", "output_text", "annotations", arr(), "logprobs", arr(), "text", g.rep.Text)),
			ev("response.output_item.done", "output_index", out, "item", message))
		output = append(output, message)
		out++
	}
	for i, c := range g.rep.ToolCalls {
		id := fmt.Sprintf("fc_fake%02d_%d", g.n, i)
		events = append(events, ev("response.output_item.added", "output_index", out, "item",
			obj("id", id, "type", "function_call", "status", "in_progress", "arguments", "",
				"call_id", c.id(g.n, i, "call_fake"), "name", c.Name)))
		for _, p := range chunks(string(c.args()), g.rep.Chunk) {
			events = append(events, ev("response.function_call_arguments.delta", "item_id", id, "output_index", out, "delta", p))
		}
		events = append(events,
			ev("response.function_call_arguments.done", "item_id", id, "output_index", out, "arguments", string(c.args())),
			ev("response.output_item.done", "output_index", out, "item", calls[i]))
		output = append(output, calls[i])
		out++
	}
	final := g.response("completed", output, g.responsesUsage())
	name := "response.completed"
	if strings.Contains(string(final), `"status":"incomplete"`) {
		name = "response.incomplete"
	}
	return append(events, ev(name, "response", final))
}

// --- Gemini ---

func (g gen) geminiUsage(final bool) json.RawMessage {
	u := g.rep.Usage
	kv := []any{"promptTokenCount", u.Input}
	if final {
		kv = append(kv, "candidatesTokenCount", u.Output)
	}
	total := u.Input
	if final {
		total += u.Output
	}
	kv = append(kv, "totalTokenCount", total)
	if u.CacheRead > 0 {
		kv = append(kv, "cachedContentTokenCount", u.CacheRead)
	}
	kv = append(kv, "promptTokensDetails", arr(obj("modality", "TEXT", "tokenCount", u.Input)))
	if u.CacheRead > 0 {
		kv = append(kv, "cacheTokensDetails", arr(obj("modality", "TEXT", "tokenCount", u.CacheRead)))
	}
	return obj(kv...)
}

func (g gen) geminiCalls() []json.RawMessage {
	var parts []json.RawMessage
	for _, c := range g.rep.ToolCalls {
		fc := []any{"name", c.Name, "args", c.args()}
		if c.ID != "" {
			fc = append([]any{"id", c.ID}, fc...)
		}
		parts = append(parts, obj("functionCall", obj(fc...)))
	}
	return parts
}

func (g gen) geminiChunk(parts []json.RawMessage, finish string, final bool) json.RawMessage {
	cand := []any{"content", obj("parts", arr(parts...), "role", "model")}
	if finish != "" {
		cand = append(cand, "finishReason", finish)
	}
	return obj("candidates", arr(obj(cand...)), "usageMetadata", g.geminiUsage(final),
		"modelVersion", g.model, "responseId", g.rep.ID)
}

func (g gen) gemini() []byte {
	var parts []json.RawMessage
	if g.rep.Text != "" {
		parts = append(parts, obj("text", g.rep.Text))
	}
	return g.geminiChunk(append(parts, g.geminiCalls()...), g.stop("STOP", "STOP"), true)
}

func (g gen) geminiStream() []event {
	var events []event
	texts := chunks(g.rep.Text, g.rep.Chunk)
	calls := g.geminiCalls()
	for i, c := range texts {
		if i == len(texts)-1 && len(calls) == 0 {
			events = append(events, event{data: g.geminiChunk([]json.RawMessage{obj("text", c)}, g.stop("STOP", "STOP"), true)})
			return events
		}
		events = append(events, event{data: g.geminiChunk([]json.RawMessage{obj("text", c)}, "", false)})
	}
	if len(calls) > 0 {
		events = append(events, event{data: g.geminiChunk(calls, g.stop("STOP", "STOP"), true)})
	}
	return events
}

// RetryAfter is a Header asking the client to retry after d, in the
// headers the SDKs read (retry-after-ms, and Retry-After in seconds).
func RetryAfter(d time.Duration) http.Header {
	h := http.Header{}
	h.Set("Retry-After-Ms", strconv.FormatInt(d.Milliseconds(), 10))
	h.Set("Retry-After", strconv.FormatInt(int64(d.Seconds()), 10))
	return h
}
