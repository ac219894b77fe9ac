package payload

import (
	"errors"
	"fmt"
	"strings"
)

// messageSeparator joins the texts of several system messages (OpenAI Chat
// Completions, OpenAI Responses): the reducer's separator, so a harness
// that sends one fragment per message sends the assembled prompt.
const messageSeparator = "\n\n"

// Channel is the system channel of one request body.
type Channel struct {
	// Provider is the shape the body was read as.
	Provider Provider `json:"provider"`
	// Field is where the text was read from: "system", "messages",
	// "instructions" (with input messages, "instructions+input") or
	// "systemInstruction".
	Field string `json:"field"`
	// Text is the system text by the provider's rule (docs/payload.md):
	// blocks and parts of one field concatenate, messages join with
	// messageSeparator. JSON escapes are decoded to the exact bytes.
	Text string `json:"text"`
	// Pieces are the smallest units in order: each block, part, or message
	// whose content is a string.
	Pieces []string `json:"pieces"`
	// Breakpoints counts the cache_control markers on system blocks
	// (Anthropic).
	Breakpoints int `json:"breakpoints"`
}

// extract reads the system channel of a request body. With Auto the shape
// is detected: `system` is Anthropic; `systemInstruction`,
// `system_instruction` or `contents` is Gemini; `instructions` or `input`
// is OpenAI Responses; `messages` is OpenAI Chat Completions, or Anthropic
// when only Anthropic sends what the body holds (messagesShape). A body that
// another shape also reads a system text from (Anthropic's `system` beside
// a system message in `messages`) is ambiguous, and refused as malformed
// under Auto: name the provider to read it as one shape. A body that
// is not a JSON object, or whose channel has a field of the wrong type or a
// key twice, is an *Error of kind ErrMalformed; a body with no system text
// is one of kind ErrNoSystem.
func extract(body []byte, p Provider) (*Channel, error) {
	r, err := read(body, p)
	if err != nil {
		return nil, err
	}
	return r.System()
}

// extractAs reads root's system channel as shape p.
func extractAs(root *root, p Provider) (*Channel, error) {
	switch p {
	case Anthropic:
		return anthropic(root)
	case OpenAIChat:
		return openAIChat(root)
	case OpenAIResponses:
		return openAIResponses(root)
	case Gemini:
		return gemini(root)
	}
	return nil, &Error{Kind: ErrUnknownProvider, Msg: string(p)}
}

// ambiguous is the error for a body that another shape than the one
// detected (p, read as c or failing with err) also reads a system text
// from: Anthropic's `system` beside a system message in `messages`, say.
// An endpoint of the other shape would serve that other text, so no shape
// can be assumed; nil when no other shape reads one, or when the detected
// shape found the body malformed (that error stands).
func ambiguous(root *root, p Provider, c *Channel, err error) error {
	if err != nil && !errors.Is(err, ErrNoSystem) {
		return nil
	}
	for _, q := range providers {
		if q == p {
			continue
		}
		other, oerr := extractAs(root, q)
		if oerr != nil {
			continue
		}
		found := "no system text"
		if c != nil {
			found = "its system text in `" + c.Field + "`"
		}
		return &Error{Kind: ErrMalformed, Provider: Auto, Path: other.Field, Msg: fmt.Sprintf(
			"ambiguous shape: read as %s the body has %s, read as %s its system text is in `%s`, and an endpoint of either shape would serve its own; name the provider", p, found, q, other.Field)}
	}
	return nil
}

// detect finds a body's shape by the keys at its top level.
func detect(root *root) (Provider, error) {
	has := func(keys ...string) bool {
		for _, k := range keys {
			if root.get(k).exists() {
				return true
			}
		}
		return false
	}
	switch {
	case has("system"):
		return Anthropic, nil
	case has("systemInstruction", "system_instruction", "contents"):
		return Gemini, nil
	case has("instructions", "input"):
		return OpenAIResponses, nil
	case has("messages"):
		return messagesShape(root), nil
	}
	return Auto, &Error{Kind: ErrNoSystem}
}

// Members only one of the two shapes with a top-level messages list has.
var (
	chatOnly      = []string{"n", "logprobs", "response_format", "max_completion_tokens", "prompt_cache_key", "prompt_cache_retention", "frequency_penalty", "presence_penalty", "seed", "parallel_tool_calls", "reasoning_effort", "modalities"}
	anthropicOnly = []string{"anthropic_version", "thinking", "top_k", "stop_sequences", "cache_control", "anthropic_beta"}
)

// messagesShape tells Anthropic Messages from Chat Completions for a body
// with messages and no system member, which both shapes send (an
// Anthropic call need not have a system prompt): a system, developer or
// tool message, a tool_calls member or a function tool is Chat's; a
// member only Anthropic reads, a tool with an input_schema, or a Claude
// model is Anthropic's. Evidence of Chat is taken first, since an
// Anthropic endpoint refuses a system message; with none either way, the
// body is Chat's, as it always was.
func messagesShape(root *root) Provider {
	for _, k := range chatOnly {
		if root.get(k).exists() {
			return OpenAIChat
		}
	}
	chat := false
	root.get("messages").each(func(_ string, msg node) bool {
		msg.each(func(key string, v node) bool {
			switch key {
			case `"role"`:
				r := v.str()
				chat = r == "system" || r == "developer" || r == "tool" || r == "function"
			case `"tool_calls"`, `"function_call"`:
				chat = true
			}
			return !chat
		})
		return !chat
	})
	// A tool's members say its shape: Chat's {"type":"function",
	// "function":{…}}, Anthropic's {"name", "input_schema", …}.
	var first node
	root.get("tools").each(func(_ string, t node) bool { first = t; return false })
	anth := false
	first.each(func(key string, _ node) bool {
		chat = chat || key == `"function"`
		anth = anth || key == `"input_schema"`
		return true
	})
	if chat {
		return OpenAIChat
	}
	for _, k := range anthropicOnly {
		if root.get(k).exists() {
			return Anthropic
		}
	}
	if anth || strings.HasPrefix(root.get("model").str(), "claude-") {
		return Anthropic
	}
	return OpenAIChat
}

func anthropic(root *root) (*Channel, error) {
	r := reader{Anthropic, root}
	sys := root.get("system")
	if sys.absent() {
		return nil, &Error{Kind: ErrNoSystem, Provider: Anthropic}
	}
	c := &Channel{Field: "system"}
	switch {
	case sys.isString():
		t := sys.str()
		c.Text, c.Pieces = t, []string{t}
	case sys.isArray():
		var b strings.Builder
		for i, block := range sys.items() {
			path := fmt.Sprintf("system.%d", i)
			s, err := r.text(block, path, "text")
			if err != nil {
				return nil, err
			}
			cc, err := r.get(block, path, "cache_control")
			if err != nil {
				return nil, err
			}
			if !cc.absent() {
				c.Breakpoints++
			}
			b.WriteString(s)
			c.Pieces = append(c.Pieces, s)
		}
		c.Text = b.String()
	default:
		return nil, r.bad("system", "want a string or an array of text blocks, got %s", kind(sys))
	}
	return c, nil
}

// content reads a message's content: a string, or an array of text parts
// that concatenate.
func (r reader) content(m node, path string, partTypes ...string) (string, []string, error) {
	v, err := r.get(m, path, "content")
	if err != nil {
		return "", nil, err
	}
	path = join(path, "content")
	switch {
	case v.isString():
		t := v.str()
		return t, []string{t}, nil
	case v.isArray():
		var b strings.Builder
		var pieces []string
		for i, part := range v.items() {
			s, err := r.text(part, fmt.Sprintf("%s.%d", path, i), partTypes...)
			if err != nil {
				return "", nil, err
			}
			b.WriteString(s)
			pieces = append(pieces, s)
		}
		return b.String(), pieces, nil
	}
	return "", nil, r.bad(path, "want a string or an array of text parts, got %s", kind(v))
}

// systemMessages reads the system and developer messages of a list, in
// order; items of other roles are skipped.
func (r reader) systemMessages(list node, path string, partTypes ...string) (texts, pieces []string, err error) {
	if !list.isArray() {
		return nil, nil, r.bad(path, "want an array, got %s", kind(list))
	}
	i := -1
	list.each(func(_ string, m node) bool {
		i++
		texts, pieces, err = r.systemMessage(m, fmt.Sprintf("%s.%d", path, i), texts, pieces, partTypes)
		return err == nil
	})
	if err != nil {
		return nil, nil, err
	}
	return texts, pieces, nil
}

// systemMessage appends the text and pieces of m, an item of a message
// list at path, when it is a system or developer message.
func (r reader) systemMessage(m node, at string, texts, pieces []string, partTypes []string) ([]string, []string, error) {
	{
		if !m.isObject() {
			if r.p == OpenAIResponses {
				return texts, pieces, nil // an input item that is not a message
			}
			return nil, nil, r.bad(at, "want a message object, got %s", kind(m))
		}
		role, err := r.get(m, at, "role")
		if err != nil {
			return nil, nil, err
		}
		if !role.exists() && r.p == OpenAIResponses {
			return texts, pieces, nil // a function call output, a reasoning item, ...
		}
		if !role.isString() {
			return nil, nil, r.bad(join(at, "role"), "want a string, got %s", kind(role))
		}
		if role := role.str(); role != "system" && role != "developer" {
			return texts, pieces, nil
		}
		text, ps, err := r.content(m, at, partTypes...)
		if err != nil {
			return nil, nil, err
		}
		return append(texts, text), append(pieces, ps...), nil
	}
}

func openAIChat(root *root) (*Channel, error) {
	r := reader{OpenAIChat, root}
	msgs := root.get("messages")
	if msgs.absent() {
		return nil, &Error{Kind: ErrNoSystem, Provider: OpenAIChat}
	}
	texts, pieces, err := r.systemMessages(msgs, "messages", "text")
	if err != nil {
		return nil, err
	}
	if len(texts) == 0 {
		return nil, &Error{Kind: ErrNoSystem, Provider: OpenAIChat}
	}
	return &Channel{Field: "messages", Text: strings.Join(texts, messageSeparator), Pieces: pieces}, nil
}

func openAIResponses(root *root) (*Channel, error) {
	r := reader{OpenAIResponses, root}
	c := &Channel{Field: "instructions"}
	var texts []string
	in := root.get("instructions")
	switch {
	case in.absent():
	case in.isString():
		t := in.str()
		texts, c.Pieces = []string{t}, []string{t}
	default:
		return nil, r.bad("instructions", "want a string, got %s", kind(in))
	}
	input := root.get("input")
	if input.isArray() {
		more, pieces, err := r.systemMessages(input, "input", "input_text")
		if err != nil {
			return nil, err
		}
		if len(more) > 0 {
			c.Field = "instructions+input"
			texts, c.Pieces = append(texts, more...), append(c.Pieces, pieces...)
		}
	} else if !input.absent() && !input.isString() {
		return nil, r.bad("input", "want a string or an array of items, got %s", kind(input))
	}
	if len(texts) == 0 {
		return nil, &Error{Kind: ErrNoSystem, Provider: OpenAIResponses}
	}
	c.Text = strings.Join(texts, messageSeparator)
	return c, nil
}

func gemini(root *root) (*Channel, error) {
	r := reader{Gemini, root}
	key := "systemInstruction"
	si, snake := root.get(key), root.get("system_instruction")
	switch {
	case si.exists() && snake.exists():
		return nil, r.bad("system_instruction", "both systemInstruction and system_instruction are set")
	case snake.exists():
		key, si = "system_instruction", snake
	}
	if si.absent() {
		return nil, &Error{Kind: ErrNoSystem, Provider: Gemini}
	}
	if !si.isObject() {
		return nil, r.bad(key, "want a Content object, got %s", kind(si))
	}
	parts, err := r.get(si, key, "parts")
	if err != nil {
		return nil, err
	}
	if !parts.isArray() {
		return nil, r.bad(join(key, "parts"), "want an array of parts, got %s", kind(parts))
	}
	c := &Channel{Field: key}
	var b strings.Builder
	for i, part := range parts.items() {
		path := fmt.Sprintf("%s.parts.%d", key, i)
		if !part.isObject() {
			return nil, r.bad(path, "want a text part, got %s", kind(part))
		}
		s, err := r.get(part, path, "text")
		if err != nil {
			return nil, err
		}
		if !s.isString() {
			return nil, r.bad(join(path, "text"), "want a string, got %s", kind(s))
		}
		t := s.str()
		b.WriteString(t)
		c.Pieces = append(c.Pieces, t)
	}
	c.Text = b.String()
	return c, nil
}
