package payload

import (
	"errors"
	"strconv"
	"strings"
	"unsafe"

	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/internal/wire"
)

// Request is a request body read once, for everything that reads it: the
// shape, the model, the system channel, the tools, and the byte ranges of
// the messages, the tools and the other parameters. The transport's gate,
// the journal's record of the request and its payload receipt all read
// this one value; nothing reads the body again.
type Request struct {
	// Provider is the body's shape: the one Read was given, or the one
	// the body's keys say.
	Provider Provider
	// Model is the body's model, and Stream its "stream": true (a URL
	// may say more).
	Model  string
	Stream bool
	// Messages and Tools are the body's message list (messages, or
	// OpenAI Responses' input, or Gemini's contents) and tool list as
	// sent: slices of the body, nil when it has none. Parameters are its
	// other members but the system channel's, as one object (nil when
	// there are none).
	Messages, Tools, Parameters []byte
	// ToolNames are the names of the tools the body sends, in order:
	// Anthropic and OpenAI Responses tools[].name, OpenAI Chat
	// tools[].function.name (or custom.name) and the older
	// functions[].name, Gemini tools[].functionDeclarations[].name.
	ToolNames []string

	body       []byte
	root       *root
	channel    *Channel
	channelErr error
}

// Read reads a request body as shape p. With Auto the shape is the one
// its keys say: `system` is Anthropic; `systemInstruction`,
// `system_instruction` or `contents` is Gemini; `instructions` or `input`
// is OpenAI Responses; `messages` is OpenAI Chat Completions, or Anthropic
// when only Anthropic sends what the body holds (docs/payload.md). A body
// that another shape also reads a system text from (Anthropic's `system`
// beside a system message in `messages`) is ambiguous, and under Auto its
// System is malformed: name the provider to read it as one shape. A body
// that is not a JSON object, that gives a top-level key twice, or a
// tool's name twice, is an *Error of kind ErrMalformed. A system channel
// that is missing or malformed is not Read's error but System's: a
// request without one is still a request (an unattributed call has none
// to hold). The Request keeps body and slices of it; body must not change
// after.
func Read(body []byte, p Provider) (*Request, error) {
	return read(body, p)
}

func read(body []byte, p Provider) (*Request, error) {
	switch p {
	case Auto, Anthropic, OpenAIChat, OpenAIResponses, Gemini:
	default:
		return nil, &Error{Kind: ErrUnknownProvider, Msg: string(p)}
	}
	root, err := scan(unsafe.String(unsafe.SliceData(body), len(body)), p)
	if err != nil {
		return nil, err
	}
	r := &Request{Provider: p, body: body, root: root}
	if p == Auto {
		r.Provider, r.channelErr = detect(root)
	}
	if root.twice != "" {
		return nil, &Error{Kind: ErrMalformed, Provider: r.Provider, Path: root.twice, Msg: "the key appears more than once"}
	}
	if r.channelErr == nil {
		r.channel, r.channelErr = extractAs(root, r.Provider)
		var none *Error
		if p == Auto && errors.As(r.channelErr, &none) && none.Kind == ErrNoSystem {
			none.Provider = Auto
		}
		if p == Auto {
			if amb := ambiguous(root, r.Provider, r.channel, r.channelErr); amb != nil {
				r.channel, r.channelErr = nil, amb
			}
		}
		if r.channel != nil {
			c := r.channel
			c.Provider = r.Provider
			c.Text = strings.Clone(c.Text)
			for i := range c.Pieces {
				c.Pieces[i] = strings.Clone(c.Pieces[i])
			}
		}
	}
	if m := root.get("model"); m.isString() {
		r.Model = strings.Clone(m.str())
	}
	r.Stream = root.get("stream").raw == "true"
	if err := r.parts(); err != nil {
		return nil, err
	}
	return r, nil
}

// System returns the body's system channel, or why it has none: an
// *Error of kind ErrNoSystem or ErrMalformed.
func (r *Request) System() (*Channel, error) {
	if err := r.unread(); err != nil {
		return nil, err
	}
	if r.channelErr != nil {
		return nil, r.channelErr
	}
	return r.channel, nil
}

// unread is the error of every method of a Request that Read did not make
// (nil, or a struct literal): its exported fields are what Read found,
// but the body they were read from, which the methods read, is not in
// it. The error is of kind ErrMalformed, so a caller that handles a body
// it cannot read handles this one too.
func (r *Request) unread() error {
	if r != nil && r.root != nil {
		return nil
	}
	return &Error{Kind: ErrMalformed, Offset: -1, Msg: "the *payload.Request was not made by payload.Read: it holds no body read"}
}

// messagesKey is where each shape keeps its messages.
var messagesKey = map[Provider]string{Anthropic: "messages", OpenAIChat: "messages", OpenAIResponses: "input", Gemini: "contents"}

// joinBody is a body of shape p put back together from the members Read cut
// it into, as a transcript keeps them: parameters (Request.Parameters),
// messages (Request.Messages, under the shape's key: messages, input or
// contents), tools (Request.Tools) and the system channel's members
// (retained, whose system messages the messages hold already).
// The members come in that order, each as given; one absent or null is
// left out. The bytes are not the body as sent (its keys were in another
// order), but every member is.
func joinBody(p Provider, parameters, messages, tools, retained []byte) []byte {
	msgKey := messagesKey[p]
	out := make([]byte, 1, 2+len(parameters)+len(messages)+len(tools)+len(retained)+16)
	out[0] = '{'
	member := func(key, raw string) {
		if raw == "" || raw == "null" {
			return
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(pjson.AppendString(out, key), ':'), raw...)
	}
	members := func(obj []byte, system bool) {
		v := node{raw: string(obj)}
		if !v.isObject() {
			return
		}
		v.each(func(k string, x node) bool {
			// The messages hold the system messages already (and OpenAI
			// Responses' input items, whatever the shape).
			if k := pjson.Unquote(k); !system || k != msgKey && k != "input" {
				member(k, x.raw)
			}
			return true
		})
	}
	members(parameters, false)
	member(msgKey, string(messages))
	member("tools", string(tools))
	members(retained, true)
	return append(out, '}')
}

// systemKeys are the members a system channel is read from.
var systemKeys = map[string]bool{"system": true, "instructions": true, "systemInstruction": true, "system_instruction": true}

// parts cuts the body into what a transcript retains (messages, tools,
// parameters) and reads the tools' names.
func (r *Request) parts() error {
	msgKey := messagesKey[r.Provider]
	var params []byte
	for i := range r.root.members {
		m := &r.root.members[i]
		raw := r.body[m.Start:m.End:m.End]
		switch {
		case m.Key == msgKey:
			r.Messages = raw
		case m.Key == "tools":
			r.Tools = raw
		case !systemKeys[m.Key]:
			if params == nil {
				params = append(make([]byte, 0, 256), '{')
			} else {
				params = append(params, ',')
			}
			params = pjson.AppendString(params, m.Key)
			params = append(append(params, ':'), raw...)
		}
	}
	if params != nil {
		r.Parameters = append(params, '}')
	}
	return r.toolNames()
}

// toolNames reads the names of the tools the body sends. A tool's name
// given twice, or not as a string, is refused: the gate would hold one
// name and the provider could read another.
func (r *Request) toolNames() error {
	rd := reader{r.Provider, r.root}
	add := func(obj node, path string) error {
		n, err := rd.get(obj, path, "name")
		if err != nil {
			return err
		}
		if s := n.str(); s != "" {
			r.ToolNames = append(r.ToolNames, strings.Clone(s))
		}
		return nil
	}
	each := func(list node, path string, fn func(t node, at string) error) error {
		if !list.isArray() {
			return nil
		}
		var err error
		i := -1
		list.each(func(_ string, t node) bool {
			i++
			err = fn(t, path+"."+itoa(i))
			return err == nil
		})
		return err
	}
	err := each(r.root.get("tools"), "tools", func(t node, at string) error {
		switch r.Provider {
		case Anthropic, OpenAIResponses:
			return add(t, at)
		case OpenAIChat:
			f, err := rd.get(t, at, "function")
			if err != nil {
				return err
			}
			if f.exists() {
				return add(f, join(at, "function"))
			}
			c, err := rd.get(t, at, "custom")
			if err != nil {
				return err
			}
			return add(c, join(at, "custom"))
		case Gemini:
			key := "functionDeclarations"
			decls, err := rd.get(t, at, key)
			if err != nil {
				return err
			}
			if !decls.exists() {
				key = "function_declarations"
				if decls, err = rd.get(t, at, key); err != nil {
					return err
				}
			}
			return each(decls, join(at, key), add)
		}
		return nil
	})
	if err == nil && r.Provider == OpenAIChat {
		// The older form of Chat Completions' tools.
		err = each(r.root.get("functions"), "functions", add)
	}
	return err
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// Route reads a URL path as a model endpoint: the shape of the bodies it
// takes (…/messages: Anthropic Messages; …/chat/completions: OpenAI Chat
// Completions; …/responses: OpenAI Responses; …/models/M:generateContent
// and :streamGenerateContent: Gemini, whose model and streaming the path
// says, not the body). A harness that builds a request manifest of a
// Gemini body gives request.Options.Model the model Route reads from the
// URL it sends to. Anything else (a model list, token counting, a batch)
// is not a model call: ok is false, p is Auto, and stream says whether
// the path names a stream anyway (a gateway's, a cloud's
// streamRawPredict).
func Route(path string) (p Provider, model string, stream, ok bool) {
	path = strings.TrimSuffix(path, "/")
	switch {
	case strings.HasSuffix(path, "/messages") && !strings.Contains(path, "/threads/"):
		return Anthropic, "", false, true
	case strings.HasSuffix(path, "/chat/completions"):
		return OpenAIChat, "", false, true
	case strings.HasSuffix(path, "/responses"):
		return OpenAIResponses, "", false, true
	case strings.HasSuffix(path, ":generateContent"), strings.HasSuffix(path, ":streamGenerateContent"):
		i := strings.LastIndex(path, "/models/")
		j := strings.LastIndexByte(path, ':')
		if i >= 0 && j > i {
			model = path[i+len("/models/") : j]
		}
		return Gemini, model, strings.HasSuffix(path, ":streamGenerateContent"), true
	}
	return Auto, "", strings.Contains(strings.ToLower(path), "stream"), false
}

// sampling reads the request's sampling parameters (wire.SamplingOf).
func (r *Request) sampling() wire.Sampling {
	if r.unread() != nil {
		return wire.Sampling{}
	}
	fields := map[string]node{}
	for i := range r.root.members {
		m := &r.root.members[i]
		v := node{raw: r.root.s[m.Start:m.End], at: m.Start}
		switch {
		case r.Provider == Gemini && (m.Key == "generationConfig" || m.Key == "generation_config"):
			v.each(func(k string, x node) bool {
				fields[pjson.Unquote(k)] = x
				return true
			})
		case r.Provider != Gemini && len(v.raw) < 1024: // a parameter, not the messages
			fields[m.Key] = v
		}
	}
	first := func(keys ...string) (node, bool) {
		for _, k := range keys {
			if v, ok := fields[k]; ok && (v.isString() || v.isArray() || kind(v) == "a number") {
				return v, true
			}
		}
		return node{}, false
	}
	num := func(keys ...string) *float64 {
		if v, ok := first(keys...); ok {
			if f, err := strconv.ParseFloat(v.raw, 64); err == nil {
				return &f
			}
		}
		return nil
	}
	integer := func(keys ...string) *int {
		if v, ok := first(keys...); ok {
			if n, err := strconv.Atoi(v.raw); err == nil {
				return &n
			}
			if f, err := strconv.ParseFloat(v.raw, 64); err == nil {
				n := int(f)
				return &n
			}
		}
		return nil
	}
	s := wire.Sampling{
		MaxTokens:        integer("max_tokens", "max_completion_tokens", "max_output_tokens", "maxOutputTokens"),
		Temperature:      num("temperature"),
		TopP:             num("top_p", "topP"),
		TopK:             num("top_k", "topK"),
		FrequencyPenalty: num("frequency_penalty", "frequencyPenalty"),
		PresencePenalty:  num("presence_penalty", "presencePenalty"),
		Seed:             integer("seed"),
		Choices:          integer("n", "candidateCount", "candidate_count"),
	}
	if v, ok := first("stop_sequences", "stop", "stopSequences"); ok {
		if v.isArray() {
			s.Stop = []string{}
			v.each(func(_ string, x node) bool {
				if x.isString() {
					s.Stop = append(s.Stop, strings.Clone(x.str()))
				} else {
					s.Stop = append(s.Stop, x.raw)
				}
				return true
			})
		} else if v.isString() {
			s.Stop = []string{strings.Clone(v.str())}
		} else {
			s.Stop = []string{v.raw}
		}
	}
	return s
}
