package payload

import (
	"sort"
	"strings"
	"unsafe"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/harn/redact"

	"github.com/tidwall/gjson"
)

// Response is what a provider's answer says, read by its format: the
// text, the stop or finish reason, the tool calls, the usage with the
// cache tokens, the response id and model.
type Response struct {
	Text       string
	StopReason string
	ToolCalls  []ToolCall
	Usage      *Usage
	ID, Model  string
}

// ToolCall is a tool call of a response: the digest of its arguments
// (redacted), never the arguments.
type ToolCall struct {
	ID            string        `json:"id,omitempty"`
	Name          string        `json:"name"`
	ArgumentsHash digest.Digest `json:"arguments_hash"`
}

// Usage is what the provider says a call cost, in tokens: the input and
// output, and the input read from and written to its prompt cache.
type Usage struct {
	InputTokens      int `json:"input_tokens"`
	OutputTokens     int `json:"output_tokens"`
	CacheReadTokens  int `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
}

// event is one server sent event: its type and its data.
type event struct {
	name string
	data string
}

// events splits a stream of server sent events as received into events
// (lines "event:" and "data:", a blank line ending each; CRLF or LF).
// The stream is one string, read in place: each event's data is a piece of
// it, parsed by gjson without a copy.
func events(b string) []event {
	var out []event
	var cur event
	var data []string
	flush := func() {
		switch {
		case len(data) == 1:
			cur.data = data[0] // the common case: no copy
			out = append(out, cur)
		case cur.name != "" || data != nil:
			cur.data = strings.Join(data, "\n")
			out = append(out, cur)
		}
		cur, data = event{}, nil
	}
	for len(b) > 0 {
		line := b
		if i := strings.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = ""
		}
		line = strings.TrimSuffix(line, "\r")
		switch {
		case len(line) == 0:
			flush()
		case line[0] == ':':
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				cur.name = value
			case "data":
				data = append(data, value)
			}
		}
	}
	flush()
	return out
}

// argsHash is the digest of a tool call's arguments, redacted: of their
// canonical JSON through redact_json when they are JSON, else of the text.
func argsHash(raw string) digest.Digest {
	if gjson.Valid(raw) {
		if b, err := redact.JSON([]byte(raw)); err == nil {
			return digest.Bytes(b)
		}
	}
	return digest.Of(raw)
}

// Summarize reads a response body as received (JSON, or with stream a
// stream of server sent events as it came) by shape's format, and says
// whether the body is whole: a JSON value, or a stream that reached its
// provider's last event (Anthropic's message_stop, OpenAI Chat's [DONE],
// Responses' response.completed, incomplete or failed, Gemini's chunk
// with a finishReason). A stream is assembled from its events.
func Summarize(shape Provider, body []byte, stream bool) (Response, bool) {
	r := Response{}
	if !stream {
		if !gjson.ValidBytes(body) {
			return r, false
		}
		v := gjson.ParseBytes(body)
		switch shape {
		case Anthropic:
			anthropicMessage(&r, v)
		case OpenAIChat:
			chatCompletion(&r, v)
		case OpenAIResponses:
			responsesObject(&r, v)
		case Gemini:
			geminiChunks(&r, []gjson.Result{v})
		}
		return r, true
	}
	// The body is not changed again (the recorder gave it up): the events
	// are read from it in place. The summary's short strings are copied
	// out, so a span keeping them does not keep the stream.
	r, whole := streamSummary(shape, events(unsafe.String(unsafe.SliceData(body), len(body))))
	r.ID, r.Model, r.StopReason = strings.Clone(r.ID), strings.Clone(r.Model), strings.Clone(r.StopReason)
	for i := range r.ToolCalls {
		c := &r.ToolCalls[i]
		c.ID, c.Name = strings.Clone(c.ID), strings.Clone(c.Name)
	}
	return r, whole
}

// streamSummary is summary of a stream, read into its events.
func streamSummary(shape Provider, evs []event) (Response, bool) {
	r := Response{}
	switch shape {
	case Anthropic:
		return anthropicStream(evs)
	case OpenAIChat:
		return chatStream(evs)
	case OpenAIResponses:
		for _, e := range evs {
			v := gjson.Parse(e.data)
			switch v.Get("type").Str {
			case "response.completed", "response.incomplete", "response.failed":
				responsesObject(&r, v.Get("response"))
				return r, true
			}
		}
		return r, false
	case Gemini:
		var chunks []gjson.Result
		done := false
		for _, e := range evs {
			if gjson.Valid(e.data) {
				v := gjson.Parse(e.data)
				chunks = append(chunks, v)
				done = done || v.Get("candidates.0.finishReason").Str != ""
			}
		}
		geminiChunks(&r, chunks)
		return r, done
	}
	return r, false
}

func usageOf(in, out, read, write gjson.Result) *Usage {
	if !in.Exists() && !out.Exists() {
		return nil
	}
	return &Usage{InputTokens: int(in.Int()), OutputTokens: int(out.Int()),
		CacheReadTokens: int(read.Int()), CacheWriteTokens: int(write.Int())}
}

func anthropicMessage(r *Response, v gjson.Result) {
	r.ID, r.Model, r.StopReason = v.Get("id").Str, v.Get("model").Str, v.Get("stop_reason").Str
	var text strings.Builder
	v.Get("content").ForEach(func(_, b gjson.Result) bool {
		switch b.Get("type").Str {
		case "text":
			text.WriteString(b.Get("text").Str)
		case "tool_use", "server_tool_use":
			r.ToolCalls = append(r.ToolCalls, ToolCall{ID: b.Get("id").Str, Name: b.Get("name").Str, ArgumentsHash: argsHash(b.Get("input").Raw)})
		}
		return true
	})
	r.Text = text.String()
	u := v.Get("usage")
	r.Usage = usageOf(u.Get("input_tokens"), u.Get("output_tokens"), u.Get("cache_read_input_tokens"), u.Get("cache_creation_input_tokens"))
}

// anthropicStream assembles message_start, the content blocks' starts and
// deltas, message_delta (stop reason, usage) and message_stop.
func anthropicStream(evs []event) (Response, bool) {
	r := Response{}
	// A block's text and arguments are kept as the deltas' pieces (of the
	// stream, mostly: gjson copies only a string with escapes) and joined
	// once at the end, into a string of their exact size.
	type block struct {
		kind, id, name string
		text, args     []string
	}
	blocks := map[int64]*block{}
	var in, out, read, write gjson.Result
	done := false
	for _, e := range evs {
		var typ string
		var v gjson.Result
		if e.name == "content_block_delta" {
			// Most of a stream: read its three members in one pass.
			var index int64
			var delta gjson.Result
			gjson.Parse(e.data).ForEach(func(k, x gjson.Result) bool {
				switch k.Str {
				case "index":
					index = x.Int()
				case "delta":
					delta = x
				}
				return true
			})
			if b := blocks[index]; b != nil {
				delta.ForEach(func(k, x gjson.Result) bool {
					switch k.Str {
					case "text":
						b.text = append(b.text, x.Str)
					case "partial_json":
						b.args = append(b.args, x.Str)
					}
					return true
				})
			}
			continue
		}
		v = gjson.Parse(e.data)
		typ = v.Get("type").Str
		switch typ {
		case "message_start":
			m := v.Get("message")
			r.ID, r.Model = m.Get("id").Str, m.Get("model").Str
			u := m.Get("usage")
			in, out, read, write = u.Get("input_tokens"), u.Get("output_tokens"), u.Get("cache_read_input_tokens"), u.Get("cache_creation_input_tokens")
		case "content_block_start":
			cb := v.Get("content_block")
			b := &block{kind: cb.Get("type").Str, id: cb.Get("id").Str, name: cb.Get("name").Str}
			b.text = append(b.text, cb.Get("text").Str)
			blocks[v.Get("index").Int()] = b
		case "content_block_delta":
			b := blocks[v.Get("index").Int()]
			if b == nil {
				continue
			}
			d := v.Get("delta")
			b.text = append(b.text, d.Get("text").Str)
			b.args = append(b.args, d.Get("partial_json").Str)
		case "message_delta":
			if s := v.Get("delta.stop_reason"); s.Type == gjson.String {
				r.StopReason = s.Str
			}
			u := v.Get("usage")
			for _, f := range []struct {
				dst  *gjson.Result
				name string
			}{{&in, "input_tokens"}, {&out, "output_tokens"}, {&read, "cache_read_input_tokens"}, {&write, "cache_creation_input_tokens"}} {
				if x := u.Get(f.name); x.Exists() && x.Type != gjson.Null {
					*f.dst = x
				}
			}
		case "message_stop":
			done = true
		}
	}
	idx := make([]int64, 0, len(blocks))
	for i := range blocks {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(a, b int) bool { return idx[a] < idx[b] })
	var text []string
	for _, i := range idx {
		b := blocks[i]
		switch b.kind {
		case "text":
			text = append(text, b.text...)
		case "tool_use", "server_tool_use":
			args := strings.Join(b.args, "")
			if args == "" {
				args = "{}"
			}
			r.ToolCalls = append(r.ToolCalls, ToolCall{ID: b.id, Name: b.name, ArgumentsHash: argsHash(args)})
		}
	}
	r.Text = strings.Join(text, "")
	r.Usage = usageOf(in, out, read, write)
	return r, done
}

func chatCompletion(r *Response, v gjson.Result) {
	r.ID, r.Model = v.Get("id").Str, v.Get("model").Str
	c := v.Get("choices.0")
	r.StopReason, r.Text = c.Get("finish_reason").Str, c.Get("message.content").Str
	c.Get("message.tool_calls").ForEach(func(_, t gjson.Result) bool {
		name, args := t.Get("function.name").Str, t.Get("function.arguments").Str
		if !t.Get("function").Exists() {
			name, args = t.Get("custom.name").Str, t.Get("custom.input").Str
		}
		r.ToolCalls = append(r.ToolCalls, ToolCall{ID: t.Get("id").Str, Name: name, ArgumentsHash: argsHash(args)})
		return true
	})
	chatUsage(r, v.Get("usage"))
}

func chatUsage(r *Response, u gjson.Result) {
	if u.IsObject() {
		r.Usage = usageOf(u.Get("prompt_tokens"), u.Get("completion_tokens"), u.Get("prompt_tokens_details.cached_tokens"), gjson.Result{})
	}
}

// chatStream assembles chat.completion.chunk events up to data: [DONE].
func chatStream(evs []event) (Response, bool) {
	r := Response{}
	type call struct {
		id, name string
		args     strings.Builder
	}
	calls := map[int64]*call{}
	var order []int64
	var text strings.Builder
	done := false
	for _, e := range evs {
		if strings.TrimSpace(e.data) == "[DONE]" {
			done = true
			continue
		}
		v := gjson.Parse(e.data)
		if id := v.Get("id").Str; id != "" {
			r.ID = id
		}
		if m := v.Get("model").Str; m != "" {
			r.Model = m
		}
		c := v.Get("choices.#(index==0)")
		if !c.Exists() {
			c = v.Get("choices.0")
		}
		if f := c.Get("finish_reason"); f.Type == gjson.String {
			r.StopReason = f.Str
		}
		text.WriteString(c.Get("delta.content").Str)
		c.Get("delta.tool_calls").ForEach(func(_, t gjson.Result) bool {
			i := t.Get("index").Int()
			k := calls[i]
			if k == nil {
				k = &call{}
				calls[i] = k
				order = append(order, i)
			}
			if id := t.Get("id").Str; id != "" {
				k.id = id
			}
			if n := t.Get("function.name").Str; n != "" {
				k.name = n
			}
			k.args.WriteString(t.Get("function.arguments").Str)
			return true
		})
		chatUsage(&r, v.Get("usage"))
	}
	for _, i := range order {
		k := calls[i]
		r.ToolCalls = append(r.ToolCalls, ToolCall{ID: k.id, Name: k.name, ArgumentsHash: argsHash(k.args.String())})
	}
	r.Text = text.String()
	return r, done
}

func responsesObject(r *Response, v gjson.Result) {
	r.ID, r.Model, r.StopReason = v.Get("id").Str, v.Get("model").Str, v.Get("status").Str
	if reason := v.Get("incomplete_details.reason").Str; reason != "" {
		r.StopReason = reason
	}
	var text strings.Builder
	v.Get("output").ForEach(func(_, o gjson.Result) bool {
		switch o.Get("type").Str {
		case "message":
			o.Get("content").ForEach(func(_, c gjson.Result) bool {
				if c.Get("type").Str == "output_text" {
					text.WriteString(c.Get("text").Str)
				}
				return true
			})
		case "function_call":
			r.ToolCalls = append(r.ToolCalls, ToolCall{ID: o.Get("call_id").Str, Name: o.Get("name").Str, ArgumentsHash: argsHash(o.Get("arguments").Str)})
		case "custom_tool_call":
			r.ToolCalls = append(r.ToolCalls, ToolCall{ID: o.Get("call_id").Str, Name: o.Get("name").Str, ArgumentsHash: argsHash(o.Get("input").Str)})
		}
		return true
	})
	r.Text = text.String()
	u := v.Get("usage")
	r.Usage = usageOf(u.Get("input_tokens"), u.Get("output_tokens"), u.Get("input_tokens_details.cached_tokens"), gjson.Result{})
}

// geminiChunks assembles generateContent responses: one, or the chunks of
// a stream (texts and function calls in order; the last finish reason and
// usage).
func geminiChunks(r *Response, chunks []gjson.Result) {
	var text strings.Builder
	for _, v := range chunks {
		if id := v.Get("responseId").Str; id != "" {
			r.ID = id
		}
		if m := v.Get("modelVersion").Str; m != "" {
			r.Model = m
		}
		c := v.Get("candidates.0")
		if f := c.Get("finishReason").Str; f != "" {
			r.StopReason = f
		}
		c.Get("content.parts").ForEach(func(_, p gjson.Result) bool {
			if p.Get("thought").Bool() {
				return true
			}
			text.WriteString(p.Get("text").Str)
			if fc := p.Get("functionCall"); fc.Exists() {
				r.ToolCalls = append(r.ToolCalls, ToolCall{ID: fc.Get("id").Str, Name: fc.Get("name").Str, ArgumentsHash: argsHash(fc.Get("args").Raw)})
			}
			return true
		})
		if u := v.Get("usageMetadata"); u.IsObject() {
			r.Usage = usageOf(u.Get("promptTokenCount"), u.Get("candidatesTokenCount"), u.Get("cachedContentTokenCount"), gjson.Result{})
		}
	}
	r.Text = text.String()
}
