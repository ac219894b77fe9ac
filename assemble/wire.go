package assemble

import (
	"strconv"

	"github.com/promptloom/promptloom/budget"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/payload"
)

// wire writes one provider's request body. Units are a turn's JSON as
// the body holds it: an Anthropic content block; an OpenAI message, or
// an entry of an assistant message's tool_calls.
type wire struct {
	p       payload.Provider
	counter budget.Counter // nil: the estimate, a token every four bytes
}

func (w wire) counterName() string {
	if w.counter == nil {
		return "estimate"
	}
	return w.counter.Encoding()
}

// count counts a unit of JSON: the request manifest's estimate (a token
// every four bytes) where the provider's tokenizer is not public, so a
// block counts at least what request.FromPayload counts for it.
func (w wire) count(b []byte) int {
	if w.counter == nil {
		return (len(b) + 3) / 4
	}
	return w.counter.Count(string(b))
}

func str(b []byte, s string) []byte { return pjson.AppendString(b, s) }

// tool is a tool definition.
func (w wire) tool(t *Tool, schema []byte) []byte {
	var b []byte
	switch w.p {
	case payload.Anthropic:
		b = append(b, `{"name":`...)
		b = str(b, t.Name)
		b = append(b, `,"description":`...)
		b = str(b, t.Description)
		b = append(b, `,"input_schema":`...)
	case payload.OpenAIChat:
		b = append(b, `{"type":"function","function":{"name":`...)
		b = str(b, t.Name)
		b = append(b, `,"description":`...)
		b = str(b, t.Description)
		b = append(b, `,"parameters":`...)
		b = append(b, schema...)
		return append(b, "}}"...)
	case payload.OpenAIResponses:
		b = append(b, `{"type":"function","name":`...)
		b = str(b, t.Name)
		b = append(b, `,"description":`...)
		b = str(b, t.Description)
		b = append(b, `,"parameters":`...)
	default: // Gemini: a function declaration
		b = append(b, `{"name":`...)
		b = str(b, t.Name)
		b = append(b, `,"description":`...)
		b = str(b, t.Description)
		b = append(b, `,"parameters":`...)
	}
	b = append(b, schema...)
	return append(b, '}')
}

// system is the system channel: Anthropic's one block, OpenAI Chat's
// system message, Responses' instructions string, Gemini's one part.
func (w wire) system(text string) []byte {
	switch w.p {
	case payload.Anthropic:
		return append(str([]byte(`{"type":"text","text":`), text), '}')
	case payload.OpenAIChat:
		return append(str([]byte(`{"role":"system","content":`), text), '}')
	case payload.OpenAIResponses:
		return str(nil, text)
	}
	return append(str([]byte(`{"text":`), text), '}')
}

// unit is turn t as the body holds it, its text alt when alt is given
// (a stub or a summary). tool names the tool a result answers (Gemini's
// functionResponse carries it).
func (w wire) unit(t *Turn, alt string) []byte {
	text := t.Text
	if alt != "" {
		text = alt
	}
	// Sized once: a tool result of 30 KB would otherwise grow its buffer
	// a dozen times.
	b := make([]byte, 0, len(text)+len(text)/16+len(t.Input)+len(t.Call)+len(t.Tool)+96)
	switch w.p {
	case payload.Anthropic:
		switch t.Kind {
		case ToolCall:
			b = append(b, `{"type":"tool_use","id":`...)
			b = str(b, t.Call)
			b = append(b, `,"name":`...)
			b = str(b, t.Tool)
			b = append(b, `,"input":`...)
			b = append(b, t.Input...)
		case ToolResult:
			b = append(b, `{"type":"tool_result","tool_use_id":`...)
			b = str(b, t.Call)
			b = append(b, `,"content":`...)
			b = str(b, text)
			if t.IsError && alt == "" {
				b = append(b, `,"is_error":true`...)
			}
		default:
			b = append(b, `{"type":"text","text":`...)
			b = str(b, text)
		}
		return append(b, '}')
	case payload.OpenAIResponses:
		switch t.Kind {
		case ToolCall:
			b = append(b, `{"type":"function_call","call_id":`...)
			b = str(b, t.Call)
			b = append(b, `,"name":`...)
			b = str(b, t.Tool)
			b = append(b, `,"arguments":`...)
			b = str(b, string(t.Input))
			return append(b, '}')
		case ToolResult:
			b = append(b, `{"type":"function_call_output","call_id":`...)
			b = str(b, t.Call)
			b = append(b, `,"output":`...)
		default:
			b = append(b, `{"role":`...)
			b = str(b, t.Kind)
			b = append(b, `,"content":`...)
		}
		return append(str(b, text), '}')
	case payload.Gemini:
		switch t.Kind {
		case ToolCall:
			b = append(b, `{"functionCall":{"name":`...)
			b = str(b, t.Tool)
			b = append(b, `,"args":`...)
			b = append(b, t.Input...)
			return append(b, "}}"...)
		case ToolResult:
			b = append(b, `{"functionResponse":{"name":`...)
			b = str(b, t.Tool)
			b = append(b, `,"response":{"content":`...)
			b = str(b, text)
			return append(b, "}}}"...)
		}
		return append(str(append(b, `{"text":`...), text), '}')
	}
	switch t.Kind {
	case ToolCall:
		b = append(b, `{"id":`...)
		b = str(b, t.Call)
		b = append(b, `,"type":"function","function":{"name":`...)
		b = str(b, t.Tool)
		b = append(b, `,"arguments":`...)
		b = str(b, string(t.Input))
		return append(b, "}}"...)
	case ToolResult:
		b = append(b, `{"role":"tool","tool_call_id":`...)
		b = str(b, t.Call)
		b = append(b, `,"content":`...)
	default:
		b = append(b, `{"role":`...)
		b = str(b, t.Kind)
		b = append(b, `,"content":`...)
	}
	return append(str(b, text), '}')
}

// role is the message role a turn belongs to, where turns are grouped
// into messages by role (Anthropic, Gemini).
func (w wire) role(t *Turn) string {
	switch t.Kind {
	case ToolCall, Assistant:
		if w.p == payload.Gemini {
			return "model"
		}
		return "assistant"
	}
	return "user"
}

// mark is a breakpoint to write on a block.
type mark struct {
	ttl string
}

// layout is a written body and where each part landed.
type layout struct {
	body      []byte
	toolPaths []string
	sysPath   string
	paths     []string // each unit's path ("" when dropped)
}

// write writes the body. units are the turns with their states; marks
// puts a breakpoint on a unit (by index), on the system block (-1) or on
// a tool (-2-i).
func (w wire) write(c *Conversation, tools [][]byte, sys []byte, units []unit, marks map[int]mark) *layout {
	l := &layout{paths: make([]string, len(units)), toolPaths: make([]string, len(tools))}
	size := 256 + len(sys)
	for _, t := range tools {
		size += len(t) + 64
	}
	for i := range units {
		size += len(units[i].sent()) + 64
	}
	b := make([]byte, 0, size)
	toolList := func(prefix string) {
		for i, t := range tools {
			if i > 0 {
				b = append(b, ',')
			}
			l.toolPaths[i] = prefix + strconv.Itoa(i)
			b = withMark(b, t, marks, -2-i)
		}
	}
	switch w.p {
	case payload.Gemini:
		b = append(b, '{')
		if sys != nil {
			l.sysPath = "/systemInstruction/parts/0"
			b = append(b, `"systemInstruction":{"parts":[`...)
			b = append(append(b, sys...), "]},"...)
		}
		if len(tools) > 0 {
			b = append(b, `"tools":[{"functionDeclarations":[`...)
			toolList("/tools/0/functionDeclarations/")
			b = append(b, "]}],"...)
		}
		b = append(b, `"contents":[`...)
		b = w.grouped(b, l, units, marks, "/contents/", "parts")
		b = append(b, `],"generationConfig":{"maxOutputTokens":`...)
		b = strconv.AppendInt(b, int64(c.OutputReserve), 10)
		return l.done(append(b, "}}"...))
	}
	b = append(b, `{"model":`...)
	b = str(b, c.Model)
	switch w.p {
	case payload.Anthropic:
		b = append(b, `,"max_tokens":`...)
	case payload.OpenAIChat:
		b = append(b, `,"max_completion_tokens":`...)
	default:
		b = append(b, `,"max_output_tokens":`...)
	}
	b = strconv.AppendInt(b, int64(c.OutputReserve), 10)
	if len(tools) > 0 {
		b = append(b, `,"tools":[`...)
		toolList("/tools/")
		b = append(b, ']')
	}
	switch w.p {
	case payload.Anthropic:
		if sys != nil {
			l.sysPath = "/system/0"
			b = append(b, `,"system":[`...)
			b = withMark(b, sys, marks, -1)
			b = append(b, ']')
		}
		b = append(b, `,"messages":[`...)
		b = w.grouped(b, l, units, marks, "/messages/", "content")
	case payload.OpenAIResponses:
		if sys != nil {
			l.sysPath = "/instructions"
			b = append(append(b, `,"instructions":`...), sys...)
		}
		b = append(b, `,"input":[`...)
		item := 0
		for i := range units {
			u := &units[i]
			if u.state == drop {
				continue
			}
			if item > 0 {
				b = append(b, ',')
			}
			l.paths[i] = "/input/" + strconv.Itoa(item)
			if t := u.turn.Kind; t == User || t == Assistant {
				l.paths[i] += "/content"
			}
			item++
			b = append(b, u.sent()...)
		}
	default:
		b = w.chat(b, l, sys, units)
	}
	return l.done(append(b, "]}"...))
}

// grouped writes the turns as messages of blocks, a message a run of
// turns of one role (Anthropic's content blocks, Gemini's parts).
func (w wire) grouped(b []byte, l *layout, units []unit, marks map[int]mark, prefix, blocks string) []byte {
	msg, blk, role := -1, 0, ""
	for i := range units {
		u := &units[i]
		if u.state == drop {
			continue
		}
		r := w.role(u.turn)
		if r != role {
			if msg >= 0 {
				b = append(b, "]},"...)
			}
			msg, blk, role = msg+1, 0, r
			b = append(b, `{"role":`...)
			b = str(b, r)
			b = append(b, `,"`...)
			b = append(b, blocks...)
			b = append(b, `":[`...)
		} else {
			b = append(b, ',')
		}
		l.paths[i] = prefix + strconv.Itoa(msg) + "/" + blocks + "/" + strconv.Itoa(blk)
		blk++
		b = withMark(b, u.sent(), marks, i)
	}
	if msg >= 0 {
		b = append(b, "]}"...)
	}
	return b
}

// chat writes OpenAI Chat Completions' messages: the system message, and
// an assistant message holding its text and the tool calls after it.
func (w wire) chat(b []byte, l *layout, sys []byte, units []unit) []byte {
	b = append(b, `,"messages":[`...)
	msg := -1
	if sys != nil {
		msg = 0
		l.sysPath = "/messages/0/content"
		b = append(b, sys...)
	}
	calls := -1 // the tool_calls entries of the open assistant message; -1: none open
	for i := range units {
		u := &units[i]
		if u.state == drop {
			continue
		}
		t := u.turn
		if t.Kind == ToolCall {
			if calls < 0 {
				if msg >= 0 && openAssistant(units, i) {
					b = append(b[:len(b)-1], `,"tool_calls":[`...)
				} else {
					if msg >= 0 {
						b = append(b, ',')
					}
					msg++
					b = append(b, `{"role":"assistant","content":null,"tool_calls":[`...)
				}
				calls = 0
			} else {
				b = append(b, ',')
			}
			l.paths[i] = "/messages/" + strconv.Itoa(msg) + "/tool_calls/" + strconv.Itoa(calls)
			calls++
			b = append(b, u.sent()...)
			continue
		}
		if calls >= 0 {
			b = append(b, "]}"...)
			calls = -1
		}
		if msg >= 0 {
			b = append(b, ',')
		}
		msg++
		l.paths[i] = "/messages/" + strconv.Itoa(msg) + "/content"
		b = append(b, u.sent()...)
	}
	if calls >= 0 {
		b = append(b, "]}"...)
	}
	return b
}

// openAssistant says the message just written is the assistant text unit
// right before unit i, so i's tool call joins it.
func openAssistant(units []unit, i int) bool {
	for j := i - 1; j >= 0; j-- {
		if units[j].state == drop {
			continue
		}
		return units[j].turn.Kind == Assistant
	}
	return false
}

func (l *layout) done(b []byte) *layout {
	l.body = b
	return l
}

// sent is the unit as it stands.
func (u *unit) sent() []byte {
	if u.state == keep {
		return u.js[0]
	}
	return u.js[1]
}

// withMark appends a unit, with its breakpoint when it has one.
func withMark(b, unit []byte, marks map[int]mark, at int) []byte {
	m, ok := marks[at]
	if !ok {
		return append(b, unit...)
	}
	b = append(b, unit[:len(unit)-1]...)
	b = append(b, `,"cache_control":{"type":"ephemeral"`...)
	if m.ttl == "1h" {
		b = append(b, `,"ttl":"1h"`...)
	}
	return append(b, "}}"...)
}
