package payload

import (
	"slices"
)

// retain reads the system channel of a request body (as extract does) and
// returns it with the smallest body it can be read back from: a JSON
// object holding only the top-level keys the channel is read from
// (`system`; `systemInstruction` or `system_instruction`; `instructions`
// and `input`; `messages`), and of a message list only the items with role
// system or developer. extract with c.Provider reads the same text and
// pieces from it. User messages, tools and parameters are not in it, so a
// transcript can keep it to re-derive the payload-side digest without
// keeping the rest of the body a second time.
func retain(body []byte, p Provider) (*Channel, []byte, error) {
	c, err := extract(body, p)
	if err != nil {
		return nil, nil, err
	}
	r, _ := read(body, c.Provider)
	kept := r.retained()
	// The reading back is the proof that nothing the channel needs was
	// left out; a difference is a bug here, and refused.
	back, err := extract(kept, c.Provider)
	if err != nil || back.Text != c.Text || !slices.Equal(back.Pieces, c.Pieces) || back.Breakpoints != c.Breakpoints {
		return nil, nil, &Error{Kind: ErrMalformed, Provider: c.Provider, Path: c.Field, Msg: "the system channel does not read back the same from the fields it was read from"}
	}
	return c, kept, nil
}

// retained is the part of the body its system channel is read from, as
// retain returns it (nil when the request has no system channel): the
// members the channel is read from, each as written, and of a message
// list only the system and developer items.
func (r *Request) retained() []byte {
	c, err := r.System()
	if err != nil {
		return nil
	}
	b := make([]byte, 0, 64+len(c.Text)+len(c.Text)/8)
	b = append(b, '{')
	field := func(key, raw string) {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, key...)
		b = append(b, `":`...)
		b = append(b, raw...)
	}
	root := r.root
	switch c.Provider {
	case Anthropic:
		field("system", root.get("system").raw)
	case Gemini:
		field(c.Field, root.get(c.Field).raw)
	case OpenAIChat:
		field("messages", systemItems(root.get("messages")))
	case OpenAIResponses:
		if in := root.get("instructions"); in.isString() {
			field("instructions", in.raw)
		}
		if in := root.get("input"); in.isArray() {
			if items := systemItems(in); items != "[]" {
				field("input", items)
			}
		}
	}
	return append(b, '}')
}

// systemItems is a list of messages or input items cut to those with role
// system or developer, each kept as its exact bytes.
func systemItems(list node) string {
	b := []byte{'['}
	rd := reader{}
	list.each(func(_ string, m node) bool {
		if role, _ := rd.get(m, "", "role"); m.isObject() && role.isString() {
			if s := role.str(); s == "system" || s == "developer" {
				if len(b) > 1 {
					b = append(b, ',')
				}
				b = append(b, m.raw...)
			}
		}
		return true
	})
	return string(append(b, ']'))
}
