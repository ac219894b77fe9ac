package transport

import (
	"net/url"
	"strings"

	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/payload"

	"github.com/tidwall/gjson"
)

// endpoint is a request RoundTrip recognised as a model call.
type endpoint struct {
	shape     payload.Provider // the body's shape
	provider  string           // gen_ai.provider.name
	operation string           // gen_ai.operation.name
	model     string
	stream    bool
	server    *url.URL // the request's URL, for its span
}

// detect finds the provider from the URL and the body: Anthropic Messages
// (…/messages), OpenAI Chat Completions (…/chat/completions) and Responses
// (…/responses), Gemini (…/models/M:generateContent and
// :streamGenerateContent). Anything else (a model list, token counting, a
// batch) is not a model call: ok is false and the request passes through.
func detect(u *url.URL, method string, body []byte) (e endpoint, ok bool) {
	if u == nil {
		return endpoint{}, false
	}
	path := strings.TrimSuffix(u.Path, "/")
	if method != "POST" || !modelPath(path) || !gjson.ValidBytes(body) {
		return endpoint{}, false
	}
	b := gjson.ParseBytes(body)
	if !b.IsObject() {
		return endpoint{}, false
	}
	switch {
	case strings.HasSuffix(path, "/messages") && !strings.Contains(path, "/threads/"):
		e = endpoint{shape: payload.Anthropic, provider: "anthropic", operation: "chat"}
	case strings.HasSuffix(path, "/chat/completions"):
		e = endpoint{shape: payload.OpenAIChat, provider: "openai", operation: "chat"}
	case strings.HasSuffix(path, "/responses"):
		e = endpoint{shape: payload.OpenAIResponses, provider: "openai", operation: "chat"}
	case strings.HasSuffix(path, ":generateContent"), strings.HasSuffix(path, ":streamGenerateContent"):
		e = endpoint{shape: payload.Gemini, provider: "gcp.gemini", operation: "generate_content"}
		i := strings.LastIndex(path, "/models/")
		j := strings.LastIndexByte(path, ':')
		if i >= 0 && j > i {
			e.model = path[i+len("/models/") : j]
		}
		e.stream = strings.HasSuffix(path, ":streamGenerateContent")
		if strings.Contains(u.Host, "aiplatform") {
			e.provider = "gcp.vertex_ai"
		}
		return e, true
	default:
		return endpoint{}, false
	}
	e.model = b.Get("model").Str
	e.stream = b.Get("stream").Bool()
	return e, true
}

// detectBody finds the provider from the body alone, for a request whose
// URL is none detect knows (a gateway, Anthropic on a cloud's
// rawPredict) but whose context says it is a model call: the body's shape
// by payload's rules (system: Anthropic; systemInstruction or contents:
// Gemini; instructions or input: OpenAI Responses; messages: OpenAI Chat).
func detectBody(u *url.URL, method string, body []byte) (endpoint, bool) {
	if method != "POST" || u == nil || !gjson.ValidBytes(body) || !gjson.ParseBytes(body).IsObject() {
		return endpoint{}, false
	}
	b := gjson.ParseBytes(body)
	var e endpoint
	switch {
	case b.Get("system").Exists():
		e = endpoint{shape: payload.Anthropic, provider: "anthropic", operation: "chat"}
	case b.Get("systemInstruction").Exists(), b.Get("system_instruction").Exists(), b.Get("contents").Exists():
		e = endpoint{shape: payload.Gemini, provider: "gcp.gemini", operation: "generate_content"}
	case b.Get("instructions").Exists(), b.Get("input").Exists():
		e = endpoint{shape: payload.OpenAIResponses, provider: "openai", operation: "chat"}
	case b.Get("messages").Exists():
		e = endpoint{shape: payload.OpenAIChat, provider: "openai", operation: "chat"}
	default:
		return endpoint{}, false
	}
	e.model = b.Get("model").Str
	e.stream = b.Get("stream").Bool() || strings.Contains(strings.ToLower(u.Path), "stream")
	return e, true
}

// modelPath reports whether a URL path may be one detect knows, before
// the body is parsed.
func modelPath(path string) bool {
	return strings.HasSuffix(path, "/messages") || strings.HasSuffix(path, "/completions") ||
		strings.HasSuffix(path, "/responses") || strings.HasSuffix(path, "Content")
}

// parts splits a body into what the transcript retains: the messages, the
// tools, and the parameters (every other top-level member, the system
// channel's fields left out: the payload receipt keeps those).
func parts(body []byte, shape payload.Provider) (messages, tools, params []byte) {
	msgKey := map[payload.Provider]string{payload.Anthropic: "messages", payload.OpenAIChat: "messages",
		payload.OpenAIResponses: "input", payload.Gemini: "contents"}[shape]
	skip := map[string]bool{msgKey: true, "tools": true, "system": true, "instructions": true,
		"systemInstruction": true, "system_instruction": true}
	out := []byte{'{'}
	n := 0
	gjson.ParseBytes(body).ForEach(func(k, v gjson.Result) bool {
		switch {
		case k.Str == msgKey:
			messages = []byte(v.Raw)
		case k.Str == "tools":
			tools = []byte(v.Raw)
		case !skip[k.Str]:
			if n > 0 {
				out = append(out, ',')
			}
			out = pjson.AppendString(out, k.Str)
			out = append(out, ':')
			out = append(out, v.Raw...)
			n++
		}
		return true
	})
	if n > 0 {
		params = append(out, '}')
	}
	return messages, tools, params
}

// toolNames lists the names of the tools a body sends, in order: Anthropic
// tools[].name, OpenAI Chat tools[].function.name (or custom.name),
// Responses tools[].name, Gemini tools[].functionDeclarations[].name; Chat
// Completions' older functions[].name too.
func toolNames(body []byte, shape payload.Provider) []string {
	var names []string
	add := func(r gjson.Result) {
		if r.Type == gjson.String && r.Str != "" {
			names = append(names, r.Str)
		}
	}
	gjson.GetBytes(body, "tools").ForEach(func(_, t gjson.Result) bool {
		switch shape {
		case payload.Anthropic, payload.OpenAIResponses:
			add(t.Get("name"))
		case payload.OpenAIChat:
			if f := t.Get("function.name"); f.Exists() {
				add(f)
			} else {
				add(t.Get("custom.name"))
			}
		case payload.Gemini:
			decls := t.Get("functionDeclarations")
			if !decls.Exists() {
				decls = t.Get("function_declarations")
			}
			decls.ForEach(func(_, d gjson.Result) bool { add(d.Get("name")); return true })
		}
		return true
	})
	if shape == payload.OpenAIChat {
		// The older form of Chat Completions' tools.
		gjson.GetBytes(body, "functions").ForEach(func(_, f gjson.Result) bool { add(f.Get("name")); return true })
	}
	return names
}
