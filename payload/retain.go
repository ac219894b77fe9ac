package payload

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/tidwall/gjson"
)

// Retain reads the system channel of a request body (as Extract does) and
// returns it with the smallest body it can be read back from: a JSON
// object holding only the top-level keys the channel is read from
// (`system`; `systemInstruction` or `system_instruction`; `instructions`
// and `input`; `messages`), and of a message list only the items with role
// system or developer. Extract with c.Provider reads the same text and
// pieces from it. User messages, tools and parameters are not in it, so a
// transcript can keep it to re-derive the payload-side digest without
// keeping the rest of the body a second time.
func Retain(body []byte, p Provider) (*Channel, []byte, error) {
	c, err := Extract(body, p)
	if err != nil {
		return nil, nil, err
	}
	root := gjson.ParseBytes(body)
	var b bytes.Buffer
	b.WriteByte('{')
	field := func(key, raw string) {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:%s", key, raw)
	}
	switch c.Provider {
	case Anthropic:
		field("system", root.Get("system").Raw)
	case Gemini:
		field(c.Field, root.Get(c.Field).Raw)
	case OpenAIChat:
		field("messages", systemItems(root.Get("messages")))
	case OpenAIResponses:
		if in := root.Get("instructions"); in.Type == gjson.String {
			field("instructions", in.Raw)
		}
		if in := root.Get("input"); in.IsArray() {
			if items := systemItems(in); items != "[]" {
				field("input", items)
			}
		}
	}
	b.WriteByte('}')
	// The reading back is the proof that nothing the channel needs was
	// left out; a difference is a bug here, and refused.
	back, err := Extract(b.Bytes(), c.Provider)
	if err != nil || back.Text != c.Text || !slices.Equal(back.Pieces, c.Pieces) || back.Breakpoints != c.Breakpoints {
		return nil, nil, &Error{Kind: ErrMalformed, Provider: c.Provider, Path: c.Field, Msg: "the system channel does not read back the same from the fields it was read from"}
	}
	return c, b.Bytes(), nil
}

// systemItems is a list of messages or input items cut to those with role
// system or developer, each kept as its exact bytes.
func systemItems(list gjson.Result) string {
	var b bytes.Buffer
	b.WriteByte('[')
	for _, m := range list.Array() {
		if role := m.Get("role"); m.IsObject() && role.Type == gjson.String && (role.Str == "system" || role.Str == "developer") {
			if b.Len() > 1 {
				b.WriteByte(',')
			}
			b.WriteString(m.Raw)
		}
	}
	b.WriteByte(']')
	return b.String()
}
