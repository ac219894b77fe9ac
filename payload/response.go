package payload

import (
	"sort"
	"strconv"
	"strings"
	"unsafe"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/harn/redact"

	pjson "github.com/promptloom/promptloom/internal/json"
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
// output, and the input read from and written to its prompt cache; and,
// where the answer carries it, the provider's own verdict on its cache.
type Usage struct {
	InputTokens      int `json:"input_tokens"`
	OutputTokens     int `json:"output_tokens"`
	CacheReadTokens  int `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	// CacheMissReason is the provider's own reason the request could
	// not reuse the prefix of the one it was compared with, as its cache
	// diagnostics name it (docs/caching.md, "The provider's verdict"):
	// Anthropic's diagnostics.cache_miss_reason.type ("tools_changed",
	// "system_changed", …; "pending" for a comparison still running),
	// OpenAI's prompt_cache_diagnostics reason for a miss or its type
	// otherwise ("cache_hit", "unavailable", …). "" when the answer
	// carries none. CacheMissedTokens is the provider's estimate of the
	// input tokens after the divergence: a magnitude, not a billed count.
	CacheMissReason   string `json:"cache_miss_reason,omitempty"`
	CacheMissedTokens int    `json:"cache_missed_tokens,omitempty"`
}

// Prompt is the whole prompt the provider reported, in tokens, cached
// tokens included, for an answer of shape p: Anthropic's input_tokens
// leaves out the tokens read from and written to the cache, so they are
// added back; OpenAI's and Gemini's input counts them already. It is what
// a hit rate divides by, and OpenTelemetry's gen_ai.usage.input_tokens.
// A nil Usage is 0.
func (u *Usage) Prompt(p Provider) int {
	if u == nil {
		return 0
	}
	if p == Anthropic {
		return u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens
	}
	return u.InputTokens
}

// event is one server sent event: its type and its data.
type event struct {
	name string
	data string
}

// events splits a stream of server sent events as received into events
// (lines "event:" and "data:", a blank line ending each; CRLF or LF).
// The stream is one string, read in place: each event's data is a piece of
// it, read without a copy.
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

// lenient is how an answer is read: as its SDK reads it (a key twice, a
// lone surrogate, a large number are the provider's to answer for).
var lenient = &pjson.Options{LoneSurrogates: true, DuplicateKeys: true, LargeNumbers: true}

// parse reads s as one JSON value; ok is false when it is not one.
func parse(s string) (node, bool) {
	if pjson.Check(unsafe.Slice(unsafe.StringData(s), len(s)), lenient) != nil {
		return node{}, false
	}
	return node{raw: strings.Trim(s, " \t\r\n")}, true
}

// field is an object's member key, the first when it is given twice
// ("" for anything else); path follows several.
func (v node) field(key string) node {
	var out node
	if v.isObject() {
		v.each(func(k string, x node) bool {
			if k[1:len(k)-1] == key || pjson.Unquote(k) == key {
				out = x
				return false
			}
			return true
		})
	}
	return out
}

func (v node) path(keys ...string) node {
	for _, k := range keys {
		v = v.field(k)
	}
	return v
}

// first is an array's first item.
func (v node) first() node {
	var out node
	if v.isArray() {
		v.each(func(_ string, x node) bool { out = x; return false })
	}
	return out
}

// integer is a number's value as an int (a fraction cut off), 0 for
// anything else.
func (v node) integer() int {
	if n, err := strconv.ParseInt(v.raw, 10, 64); err == nil {
		return int(n)
	}
	if f, err := strconv.ParseFloat(v.raw, 64); err == nil {
		return int(f)
	}
	return 0
}

// argsHash is the digest of a tool call's arguments, redacted: of their
// canonical JSON through redact_json when they are JSON, else of the text.
func argsHash(raw string) digest.Digest {
	if _, ok := parse(raw); ok {
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
	// The body is read in place; the summary's strings are copied out, so
	// whoever keeps them does not keep the body.
	s := unsafe.String(unsafe.SliceData(body), len(body))
	var r Response
	whole := false
	if !stream {
		if v, ok := parse(s); ok {
			whole = true
			switch shape {
			case Anthropic:
				anthropicMessage(&r, v)
			case OpenAIChat:
				chatCompletion(&r, v)
			case OpenAIResponses:
				responsesObject(&r, v)
			case Gemini:
				geminiChunks(&r, []node{v})
			}
			r.Text = strings.Clone(r.Text)
		}
	} else {
		r, whole = streamSummary(shape, events(s))
	}
	r.ID, r.Model, r.StopReason = strings.Clone(r.ID), strings.Clone(r.Model), strings.Clone(r.StopReason)
	for i := range r.ToolCalls {
		c := &r.ToolCalls[i]
		c.ID, c.Name = strings.Clone(c.ID), strings.Clone(c.Name)
	}
	return r, whole
}

// streamSummary is Summarize of a stream, read into its events.
func streamSummary(shape Provider, evs []event) (Response, bool) {
	r := Response{}
	switch shape {
	case Anthropic:
		return anthropicStream(evs)
	case OpenAIChat:
		return chatStream(evs)
	case OpenAIResponses:
		for _, e := range evs {
			v, _ := parse(e.data)
			switch v.field("type").str() {
			case "response.completed", "response.incomplete", "response.failed":
				responsesObject(&r, v.field("response"))
				return r, true
			}
		}
		return r, false
	case Gemini:
		var chunks []node
		done := false
		for _, e := range evs {
			if v, ok := parse(e.data); ok {
				chunks = append(chunks, v)
				done = done || v.field("candidates").first().field("finishReason").str() != ""
			}
		}
		geminiChunks(&r, chunks)
		return r, done
	}
	return r, false
}

// usageOf is the usage of four counts, nil when the first two are not
// there.
func usageOf(in, out, read, write node) *Usage {
	if !in.exists() && !out.exists() {
		return nil
	}
	return &Usage{InputTokens: in.integer(), OutputTokens: out.integer(),
		CacheReadTokens: read.integer(), CacheWriteTokens: write.integer()}
}

func anthropicMessage(r *Response, v node) {
	r.ID, r.Model, r.StopReason = v.field("id").str(), v.field("model").str(), v.field("stop_reason").str()
	var text strings.Builder
	v.field("content").each(func(_ string, b node) bool {
		switch b.field("type").str() {
		case "text":
			text.WriteString(b.field("text").str())
		case "tool_use", "server_tool_use":
			r.ToolCalls = append(r.ToolCalls, ToolCall{ID: b.field("id").str(), Name: b.field("name").str(), ArgumentsHash: argsHash(b.field("input").raw)})
		}
		return true
	})
	r.Text = text.String()
	u := v.field("usage")
	r.Usage = usageOf(u.field("input_tokens"), u.field("output_tokens"), u.field("cache_read_input_tokens"), u.field("cache_creation_input_tokens"))
	anthropicVerdict(r.Usage, v.field(anthropicDiagnostics))
}

// anthropicStream assembles message_start, the content blocks' starts and
// deltas, message_delta (stop reason, usage) and message_stop.
func anthropicStream(evs []event) (Response, bool) {
	r := Response{}
	// A block's text and arguments are kept as the deltas' pieces (of the
	// stream, mostly: only a string with escapes is decoded to a copy) and
	// joined once at the end, into a string of their exact size.
	type block struct {
		kind, id, name string
		text, args     []string
	}
	blocks := map[int64]*block{}
	var in, out, read, write node
	// The verdict rides on message_start's message; a later event that
	// carries one (message_delta, at its top or in its delta) is newer.
	var diagnostics node
	done := false
	for _, e := range evs {
		v, ok := parse(e.data)
		if !ok {
			continue
		}
		if e.name == "content_block_delta" {
			// Most of a stream: read its three members in one pass.
			var index int64
			var delta node
			v.each(func(k string, x node) bool {
				switch k {
				case `"index"`:
					index = int64(x.integer())
				case `"delta"`:
					delta = x
				}
				return true
			})
			if b := blocks[index]; b != nil {
				delta.each(func(k string, x node) bool {
					switch k {
					case `"text"`:
						b.text = append(b.text, x.str())
					case `"partial_json"`:
						b.args = append(b.args, x.str())
					}
					return true
				})
			}
			continue
		}
		switch v.field("type").str() {
		case "message_start":
			m := v.field("message")
			r.ID, r.Model = m.field("id").str(), m.field("model").str()
			u := m.field("usage")
			in, out, read, write = u.field("input_tokens"), u.field("output_tokens"), u.field("cache_read_input_tokens"), u.field("cache_creation_input_tokens")
			if d := m.field(anthropicDiagnostics); d.isObject() {
				diagnostics = d
			}
		case "content_block_start":
			cb := v.field("content_block")
			b := &block{kind: cb.field("type").str(), id: cb.field("id").str(), name: cb.field("name").str()}
			b.text = append(b.text, cb.field("text").str())
			blocks[int64(v.field("index").integer())] = b
		case "content_block_delta":
			b := blocks[int64(v.field("index").integer())]
			if b == nil {
				continue
			}
			d := v.field("delta")
			b.text = append(b.text, d.field("text").str())
			b.args = append(b.args, d.field("partial_json").str())
		case "message_delta":
			if s := v.path("delta", "stop_reason"); s.isString() {
				r.StopReason = s.str()
			}
			for _, d := range []node{v.field(anthropicDiagnostics), v.path("delta", anthropicDiagnostics)} {
				if d.isObject() {
					diagnostics = d
				}
			}
			u := v.field("usage")
			for _, f := range []struct {
				dst  *node
				name string
			}{{&in, "input_tokens"}, {&out, "output_tokens"}, {&read, "cache_read_input_tokens"}, {&write, "cache_creation_input_tokens"}} {
				if x := u.field(f.name); x.exists() && x.raw != "null" {
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
	anthropicVerdict(r.Usage, diagnostics)
	return r, done
}

func chatCompletion(r *Response, v node) {
	r.ID, r.Model = v.field("id").str(), v.field("model").str()
	c := v.field("choices").first()
	r.StopReason, r.Text = c.field("finish_reason").str(), c.path("message", "content").str()
	c.path("message", "tool_calls").each(func(_ string, t node) bool {
		name, args := t.path("function", "name").str(), t.path("function", "arguments").str()
		if !t.field("function").exists() {
			name, args = t.path("custom", "name").str(), t.path("custom", "input").str()
		}
		r.ToolCalls = append(r.ToolCalls, ToolCall{ID: t.field("id").str(), Name: name, ArgumentsHash: argsHash(args)})
		return true
	})
	chatUsage(r, v.field("usage"))
}

func chatUsage(r *Response, u node) {
	if u.isObject() {
		r.Usage = usageOf(u.field("prompt_tokens"), u.field("completion_tokens"), u.path("prompt_tokens_details", "cached_tokens"), node{})
	}
}

// chatStream assembles chat.completion.chunk events up to data: [DONE],
// and none after it: the SDKs stop reading there, so what follows is
// nothing the harness saw.
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
			break
		}
		v, ok := parse(e.data)
		if !ok {
			continue
		}
		if id := v.field("id").str(); id != "" {
			r.ID = id
		}
		if m := v.field("model").str(); m != "" {
			r.Model = m
		}
		// The choice of index 0, or else the first.
		var c node
		choices := v.field("choices")
		choices.each(func(_ string, x node) bool {
			if x.field("index").raw == "0" {
				c = x
				return false
			}
			return true
		})
		if !c.exists() {
			c = choices.first()
		}
		if f := c.field("finish_reason"); f.isString() {
			r.StopReason = f.str()
		}
		text.WriteString(c.path("delta", "content").str())
		c.path("delta", "tool_calls").each(func(_ string, t node) bool {
			i := int64(t.field("index").integer())
			k := calls[i]
			if k == nil {
				k = &call{}
				calls[i] = k
				order = append(order, i)
			}
			if id := t.field("id").str(); id != "" {
				k.id = id
			}
			if n := t.path("function", "name").str(); n != "" {
				k.name = n
			}
			k.args.WriteString(t.path("function", "arguments").str())
			return true
		})
		chatUsage(&r, v.field("usage"))
	}
	for _, i := range order {
		k := calls[i]
		r.ToolCalls = append(r.ToolCalls, ToolCall{ID: k.id, Name: k.name, ArgumentsHash: argsHash(k.args.String())})
	}
	r.Text = text.String()
	return r, done
}

func responsesObject(r *Response, v node) {
	r.ID, r.Model, r.StopReason = v.field("id").str(), v.field("model").str(), v.field("status").str()
	if reason := v.path("incomplete_details", "reason").str(); reason != "" {
		r.StopReason = reason
	}
	var text strings.Builder
	v.field("output").each(func(_ string, o node) bool {
		switch o.field("type").str() {
		case "message":
			o.field("content").each(func(_ string, c node) bool {
				if c.field("type").str() == "output_text" {
					text.WriteString(c.field("text").str())
				}
				return true
			})
		case "function_call":
			r.ToolCalls = append(r.ToolCalls, ToolCall{ID: o.field("call_id").str(), Name: o.field("name").str(), ArgumentsHash: argsHash(o.field("arguments").str())})
		case "custom_tool_call":
			r.ToolCalls = append(r.ToolCalls, ToolCall{ID: o.field("call_id").str(), Name: o.field("name").str(), ArgumentsHash: argsHash(o.field("input").str())})
		}
		return true
	})
	r.Text = text.String()
	u := v.field("usage")
	r.Usage = usageOf(u.field("input_tokens"), u.field("output_tokens"), u.path("input_tokens_details", "cached_tokens"), node{})
	openAIVerdict(r.Usage, v.field(openAIDiagnostics))
}

// geminiChunks assembles generateContent responses: one, or the chunks of
// a stream (texts and function calls in order; the last finish reason and
// usage).
func geminiChunks(r *Response, chunks []node) {
	var text strings.Builder
	for _, v := range chunks {
		if id := v.field("responseId").str(); id != "" {
			r.ID = id
		}
		if m := v.field("modelVersion").str(); m != "" {
			r.Model = m
		}
		c := v.field("candidates").first()
		if f := c.field("finishReason").str(); f != "" {
			r.StopReason = f
		}
		c.path("content", "parts").each(func(_ string, p node) bool {
			if p.field("thought").raw == "true" {
				return true
			}
			text.WriteString(p.field("text").str())
			if fc := p.field("functionCall"); fc.exists() {
				r.ToolCalls = append(r.ToolCalls, ToolCall{ID: fc.field("id").str(), Name: fc.field("name").str(), ArgumentsHash: argsHash(fc.field("args").raw)})
			}
			return true
		})
		if u := v.field("usageMetadata"); u.isObject() {
			r.Usage = usageOf(u.field("promptTokenCount"), u.field("candidatesTokenCount"), u.field("cachedContentTokenCount"), node{})
		}
	}
	r.Text = text.String()
}
