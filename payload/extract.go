package payload

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
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

// Extract reads the system channel of a request body. With Auto the shape
// is detected: `system` is Anthropic; `systemInstruction`,
// `system_instruction` or `contents` is Gemini; `instructions` or `input`
// is OpenAI Responses; `messages` is OpenAI Chat Completions. A body that
// another shape also reads a system text from (Anthropic's `system` beside
// a system message in `messages`) is ambiguous, and refused as malformed
// under Auto: name the provider to read it as one shape. A body that
// is not a JSON object, or whose channel has a field of the wrong type or a
// key twice, is an *Error of kind ErrMalformed; a body with no system text
// is one of kind ErrNoSystem.
func Extract(body []byte, p Provider) (*Channel, error) {
	if err := checkBody(body, p); err != nil {
		return nil, err
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return nil, malformed(p, "", 0, "the body is not a JSON object")
	}
	auto := p == Auto
	if auto {
		var err error
		if p, err = detect(root); err != nil {
			return nil, err
		}
	}
	c, err := extractAs(root, p)
	if auto {
		if amb := ambiguous(root, p, c, err); amb != nil {
			return nil, amb
		}
	}
	if err != nil {
		var none *Error
		if auto && errors.As(err, &none) && none.Kind == ErrNoSystem {
			none.Provider = Auto
		}
		return nil, err
	}
	c.Provider = p
	return c, nil
}

// extractAs reads root's system channel as shape p.
func extractAs(root gjson.Result, p Provider) (*Channel, error) {
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
func ambiguous(root gjson.Result, p Provider, c *Channel, err error) error {
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

func detect(root gjson.Result) (Provider, error) {
	has := func(keys ...string) bool {
		for _, k := range keys {
			if root.Get(k).Exists() {
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
		return OpenAIChat, nil
	}
	return Auto, &Error{Kind: ErrNoSystem}
}

func anthropic(root gjson.Result) (*Channel, error) {
	r := reader{Anthropic}
	sys, err := r.get(root, "", "system")
	if err != nil {
		return nil, err
	}
	if absent(sys) {
		return nil, &Error{Kind: ErrNoSystem, Provider: Anthropic}
	}
	c := &Channel{Field: "system"}
	switch {
	case sys.Type == gjson.String:
		c.Text, c.Pieces = sys.Str, []string{sys.Str}
	case sys.IsArray():
		var b strings.Builder
		for i, block := range sys.Array() {
			path := fmt.Sprintf("system.%d", i)
			s, err := r.text(block, path, "text")
			if err != nil {
				return nil, err
			}
			cc, err := r.get(block, path, "cache_control")
			if err != nil {
				return nil, err
			}
			if !absent(cc) {
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
func (r reader) content(m gjson.Result, path string, partTypes ...string) (string, []string, error) {
	v, err := r.get(m, path, "content")
	if err != nil {
		return "", nil, err
	}
	path = join(path, "content")
	switch {
	case v.Type == gjson.String:
		return v.Str, []string{v.Str}, nil
	case v.IsArray():
		var b strings.Builder
		var pieces []string
		for i, part := range v.Array() {
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
func (r reader) systemMessages(list gjson.Result, path string, partTypes ...string) (texts, pieces []string, err error) {
	if !list.IsArray() {
		return nil, nil, r.bad(path, "want an array, got %s", kind(list))
	}
	for i, m := range list.Array() {
		at := fmt.Sprintf("%s.%d", path, i)
		if !m.IsObject() {
			if r.p == OpenAIResponses {
				continue // an input item that is not a message
			}
			return nil, nil, r.bad(at, "want a message object, got %s", kind(m))
		}
		role, err := r.get(m, at, "role")
		if err != nil {
			return nil, nil, err
		}
		if !role.Exists() && r.p == OpenAIResponses {
			continue // a function call output, a reasoning item, ...
		}
		if role.Type != gjson.String {
			return nil, nil, r.bad(join(at, "role"), "want a string, got %s", kind(role))
		}
		if role.Str != "system" && role.Str != "developer" {
			continue
		}
		text, ps, err := r.content(m, at, partTypes...)
		if err != nil {
			return nil, nil, err
		}
		texts, pieces = append(texts, text), append(pieces, ps...)
	}
	return texts, pieces, nil
}

func openAIChat(root gjson.Result) (*Channel, error) {
	r := reader{OpenAIChat}
	msgs, err := r.get(root, "", "messages")
	if err != nil {
		return nil, err
	}
	if absent(msgs) {
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

func openAIResponses(root gjson.Result) (*Channel, error) {
	r := reader{OpenAIResponses}
	c := &Channel{Field: "instructions"}
	var texts []string
	in, err := r.get(root, "", "instructions")
	if err != nil {
		return nil, err
	}
	switch {
	case absent(in):
	case in.Type == gjson.String:
		texts, c.Pieces = []string{in.Str}, []string{in.Str}
	default:
		return nil, r.bad("instructions", "want a string, got %s", kind(in))
	}
	input, err := r.get(root, "", "input")
	if err != nil {
		return nil, err
	}
	if input.IsArray() {
		more, pieces, err := r.systemMessages(input, "input", "input_text")
		if err != nil {
			return nil, err
		}
		if len(more) > 0 {
			c.Field = "instructions+input"
			texts, c.Pieces = append(texts, more...), append(c.Pieces, pieces...)
		}
	} else if !absent(input) && input.Type != gjson.String {
		return nil, r.bad("input", "want a string or an array of items, got %s", kind(input))
	}
	if len(texts) == 0 {
		return nil, &Error{Kind: ErrNoSystem, Provider: OpenAIResponses}
	}
	c.Text = strings.Join(texts, messageSeparator)
	return c, nil
}

func gemini(root gjson.Result) (*Channel, error) {
	r := reader{Gemini}
	key := "systemInstruction"
	si, err := r.get(root, "", key)
	if err != nil {
		return nil, err
	}
	snake, err := r.get(root, "", "system_instruction")
	if err != nil {
		return nil, err
	}
	switch {
	case si.Exists() && snake.Exists():
		return nil, r.bad("system_instruction", "both systemInstruction and system_instruction are set")
	case snake.Exists():
		key, si = "system_instruction", snake
	}
	if absent(si) {
		return nil, &Error{Kind: ErrNoSystem, Provider: Gemini}
	}
	if !si.IsObject() {
		return nil, r.bad(key, "want a Content object, got %s", kind(si))
	}
	parts, err := r.get(si, key, "parts")
	if err != nil {
		return nil, err
	}
	if !parts.IsArray() {
		return nil, r.bad(join(key, "parts"), "want an array of parts, got %s", kind(parts))
	}
	c := &Channel{Field: key}
	var b strings.Builder
	for i, part := range parts.Array() {
		path := fmt.Sprintf("%s.parts.%d", key, i)
		if !part.IsObject() {
			return nil, r.bad(path, "want a text part, got %s", kind(part))
		}
		s, err := r.get(part, path, "text")
		if err != nil {
			return nil, err
		}
		if s.Type != gjson.String {
			return nil, r.bad(join(path, "text"), "want a string, got %s", kind(s))
		}
		b.WriteString(s.Str)
		c.Pieces = append(c.Pieces, s.Str)
	}
	c.Text = b.String()
	return c, nil
}
