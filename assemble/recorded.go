package assemble

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/budget"
	pwire "github.com/promptloom/promptloom/internal/wire"
	"github.com/promptloom/promptloom/payload"
)

// FromRequest reads an Anthropic Messages request body, as a harness sent
// it, back into a conversation: its tools, its system blocks (a fragment
// each, recorded[i]), and its messages' blocks as turns, each named by
// its place in the body (messages/J/content/K), so that the calls of one
// session name their common turns alike. Every turn may be cut
// (Considered); the rules still keep the task, the latest user turn and
// what is new in a call. The window is left to the caller (zero), the
// output reserve is the body's max_tokens. A block Assemble does not send
// (an image, a thinking block) is an *Error naming its path.
func FromRequest(body []byte) (*Conversation, error) {
	r, err := payload.Read(body, payload.Anthropic)
	if err != nil {
		return nil, invalid("", "body", "%v", err)
	}
	parts, err := r.Parts()
	if err != nil {
		return nil, invalid("", "body", "%v", err)
	}
	c := &Conversation{Provider: payload.Anthropic, Model: r.Model}
	if s := pwire.SamplingOf(r); s.MaxTokens != nil {
		c.OutputReserve = *s.MaxTokens
	}
	for _, p := range parts {
		id := strings.TrimPrefix(p.Path, "/")
		switch p.Section {
		case "tools":
			var t struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Schema      json.RawMessage `json:"input_schema"`
			}
			if err := json.Unmarshal(p.Raw, &t); err != nil {
				return nil, invalid(id, "tool", "%v", err)
			}
			c.Tools = append(c.Tools, Tool{Name: t.Name, Description: t.Description, Schema: raw(t.Schema)})
		case "system":
			text, err := blockText(p.Raw)
			if err != nil {
				return nil, invalid(id, "system", "%v", err)
			}
			c.System = append(c.System, promptloom.Fragment{ID: "recorded[" + strconv.Itoa(len(c.System)) + "]", Source: "recorded", Body: text})
		default:
			t, err := turnOf(p, id)
			if err != nil {
				return nil, err
			}
			c.Turns = append(c.Turns, t)
		}
	}
	return c, nil
}

// turnOf reads one message block as a turn.
func turnOf(p payload.Part, id string) (Turn, error) {
	t := Turn{ID: id, Register: budget.Considered, Source: "user", Kind: User}
	if p.Role == "assistant" {
		t.Source, t.Kind = "model", Assistant
	}
	switch p.Type {
	case "", "text":
		text, err := blockText(p.Raw)
		if err != nil {
			return t, invalid(id, "text", "%v", err)
		}
		t.Text = text
	case "tool_use":
		var b struct {
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		}
		if err := json.Unmarshal(p.Raw, &b); err != nil {
			return t, invalid(id, "tool_use", "%v", err)
		}
		t.Kind, t.Call, t.Tool, t.Input = ToolCall, b.ID, b.Name, raw(b.Input)
	case "tool_result":
		var b struct {
			ID      string          `json:"tool_use_id"`
			Content json.RawMessage `json:"content"`
			IsError bool            `json:"is_error"`
		}
		if err := json.Unmarshal(p.Raw, &b); err != nil {
			return t, invalid(id, "tool_result", "%v", err)
		}
		text, err := contentText(b.Content)
		if err != nil {
			return t, invalid(id, "content", "%v", err)
		}
		t.Kind, t.Source, t.Call, t.Text, t.IsError = ToolResult, "tool", b.ID, text, b.IsError
	default:
		return t, invalid(id, "type", "a %s block is not assembled (text, tool_use and tool_result are)", p.Type)
	}
	return t, nil
}

// blockText is a text block's text, or a bare string's.
func blockText(b []byte) (string, error) {
	var s string
	if json.Unmarshal(b, &s) == nil {
		return s, nil
	}
	var blk struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(b, &blk); err != nil {
		return "", err
	}
	if blk.Type != "text" {
		return "", &Error{Msg: "a " + blk.Type + " block is not assembled", kind: ErrInvalid}
	}
	return blk.Text, nil
}

// contentText is a tool result's content: a string, or text blocks
// joined by a blank line.
func contentText(b json.RawMessage) (string, error) {
	if len(b) == 0 {
		return "", nil
	}
	var s string
	if json.Unmarshal(b, &s) == nil {
		return s, nil
	}
	var blocks []json.RawMessage
	if err := json.Unmarshal(b, &blocks); err != nil {
		return "", err
	}
	texts := make([]string, 0, len(blocks))
	for _, x := range blocks {
		t, err := blockText(x)
		if err != nil {
			return "", err
		}
		texts = append(texts, t)
	}
	return strings.Join(texts, "\n\n"), nil
}
