package payload

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	pjson "github.com/promptloom/promptloom/internal/json"
)

// Part is one block of a request as its provider's prompt cache sees it:
// a tool definition, a block of the system channel, or a content block of
// a message. A provider caches a prefix of the whole request, so a
// request's parts, in the order Parts returns them, are the units a cache
// entry can end on and a change can be blamed on.
type Part struct {
	// Section is "tools", "system" or "messages".
	Section string
	// Path is where the part is in the body, an RFC 6901 JSON pointer
	// (/tools/3, /system/0, /messages/5/content/0).
	Path string
	// Raw is the part's JSON as the body writes it (a slice of the body).
	Raw []byte
	// Role is a message's role ("" for tools and system blocks); Type is
	// the block's type ("text", "tool_use", "image", "function_call", …;
	// "" for a bare string); Name is a tool's name.
	Role, Type, Name string
	// Cache is the part's own cache breakpoint (Anthropic's cache_control
	// on a block; OpenAI's prompt_cache_breakpoint, its mode the Type), nil
	// when it has none.
	Cache *CacheControl
}

// Cache is what a request asks of its provider's prompt cache besides the
// marks on its parts.
type Cache struct {
	// Auto is Anthropic's top-level cache_control: the breakpoint the
	// provider places on the last block it can cache.
	Auto *CacheControl
	// Key and Retention are OpenAI's prompt_cache_key and its lifetime
	// (prompt_cache_retention, or prompt_cache_options.ttl); Mode is
	// prompt_cache_options.mode ("implicit", "explicit"; "" when not given).
	Key, Retention, Mode string
	// Content is the Gemini cachedContent the request names.
	Content string
	// Settings are the body's other top-level members, as canonical JSON
	// (as written when they have no canonical form), by key: the cache
	// models read those that change the rendered prefix (tool_choice,
	// thinking, reasoning, …).
	Settings map[string]string
}

// Parts returns the request's parts in its provider's cache order:
// Anthropic's and OpenAI's tools, then the system channel, then the
// messages; Gemini's system instruction, then its tools, then its
// contents. Each message's content is a part when it is a string, and one
// part a block when it is a list; an item with no content (an OpenAI
// assistant turn of tool calls only, a Responses function call) is one
// part. A part that is not what its provider writes (a tool that is not
// an object, a cache_control given twice) is an *Error of kind
// ErrMalformed naming its path, and so is a body whose shape is unknown
// ({} under Auto), or that, read as its shape, has none of its messages
// but another shape's: a Gemini body read as Anthropic would be a request
// of its tools alone.
func (r *Request) Parts() ([]Part, error) {
	if err := r.unread(); err != nil {
		return nil, err
	}
	own, ok := messagesKey[r.Provider]
	if !ok {
		return nil, &Error{Kind: ErrMalformed, Provider: r.Provider,
			Msg: "no top-level member says the body's shape (system, messages, instructions, input, systemInstruction, contents): name the provider"}
	}
	if r.Messages == nil {
		for _, key := range []string{"messages", "input", "contents"} {
			if key != own && r.root.get(key).exists() {
				return nil, &Error{Kind: ErrMalformed, Provider: r.Provider, Path: "/" + key,
					Msg: fmt.Sprintf("read as %s the body has no %s, but it has %s: is it another shape?", r.Provider, own, key)}
			}
		}
	}
	w := partsReader{rd: reader{r.Provider, r.root}, body: r.body}
	return w.parts(r.Provider)
}

// Cache reads what the request asks of the provider's cache.
func (r *Request) Cache() (Cache, error) {
	var c Cache
	if err := r.unread(); err != nil {
		return c, err
	}
	rd := reader{r.Provider, r.root}
	for i := range r.root.members {
		m := &r.root.members[i]
		v := node{raw: r.root.s[m.Start:m.End], at: m.Start}
		switch m.Key {
		case "cache_control":
			if r.Provider == Anthropic {
				cc, err := rd.cacheControl(v, "/cache_control")
				if err != nil {
					return c, err
				}
				c.Auto = cc
				continue
			}
		case "prompt_cache_key":
			c.Key = v.str()
		case "prompt_cache_retention":
			c.Retention = v.str()
		case "prompt_cache_options":
			if ttl, err := rd.get(v, "prompt_cache_options", "ttl"); err == nil && ttl.isString() {
				c.Retention = ttl.str()
			}
			if mode, err := rd.get(v, "prompt_cache_options", "mode"); err == nil && mode.isString() {
				c.Mode = mode.str()
			}
		case "cachedContent", "cached_content":
			c.Content = v.str()
		}
		if systemKeys[m.Key] || m.Key == messagesKey[r.Provider] || m.Key == "tools" {
			continue
		}
		if c.Settings == nil {
			c.Settings = map[string]string{}
		}
		// Canonical, so that white space or key order in tool_choice is
		// not a change of the prefix. A key twice leaves the setting two
		// readings; a value with no canonical form (1e999) is the
		// provider's to judge, and kept as written.
		val := v.raw
		if canon, err := pjson.Encode([]byte(v.raw)); err == nil {
			val = string(canon)
		} else if errors.Is(err, pjson.ErrDuplicateKey) {
			return c, rd.bad("/"+m.Key, "%v", err)
		}
		c.Settings[m.Key] = val
	}
	return c, nil
}

type partsReader struct {
	rd   reader
	body []byte
	out  []Part
}

func (w *partsReader) add(section, path string, v node, role, typ, name string, cc *CacheControl) {
	w.out = append(w.out, Part{Section: section, Path: path, Raw: w.body[v.at : v.at+len(v.raw) : v.at+len(v.raw)],
		Role: role, Type: typ, Name: name, Cache: cc})
}

func (w *partsReader) parts(p Provider) ([]Part, error) {
	root := w.rd.root
	var err error
	switch p {
	case Anthropic:
		err = firstErr(w.tools(root.get("tools"), "/tools"), w.anthropicSystem(root.get("system")),
			w.messages(root.get("messages"), "/messages", "content"))
	case OpenAIChat:
		err = firstErr(w.tools(root.get("tools"), "/tools"), w.tools(root.get("functions"), "/functions"),
			w.messages(root.get("messages"), "/messages", "content"))
	case OpenAIResponses:
		err = w.tools(root.get("tools"), "/tools")
		if err == nil {
			if in := root.get("instructions"); in.exists() && !in.absent() {
				w.add("system", "/instructions", in, "", "", "", nil)
			}
			err = w.messages(root.get("input"), "/input", "content")
		}
	case Gemini:
		key := "systemInstruction"
		if !root.get(key).exists() {
			key = "system_instruction"
		}
		si := root.get(key)
		if !si.absent() && !si.isObject() {
			return nil, w.rd.bad("/"+key, "want a Content object ({\"parts\": [...]}), got %s", kind(si))
		}
		if si.isObject() {
			parts, err := w.rd.get(si, key, "parts")
			if err != nil {
				return nil, err
			}
			if err := w.each(parts, "/"+key+"/parts", func(x node, at string) error {
				w.add("system", at, x, "", "", "", nil)
				return nil
			}); err != nil {
				return nil, err
			}
		}
		err = firstErr(w.tools(root.get("tools"), "/tools"), w.messages(root.get("contents"), "/contents", "parts"))
	}
	if err != nil {
		return nil, err
	}
	return w.out, nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// each calls fn for each item of list with its pointer. A list that is
// missing or null has no items; anything else that is not a list (for
// Gemini, nor an object) is the body's error, not a section quietly left
// out.
func (w *partsReader) each(list node, path string, fn func(x node, at string) error) error {
	if list.absent() {
		return nil
	}
	if w.rd.p == Gemini && list.isObject() {
		// Google's JSON reads one object where a list is expected
		// ("parts": {"text": …} in its own examples): one item, at the
		// list's place.
		// (Copies of path here and below: kept, it would escape to the
		// heap for every list, and every block's path with it.)
		return fn(list, strings.Clone(path))
	}
	if !list.isArray() {
		return w.rd.bad(strings.Clone(path), "want a list, got %s", kind(list))
	}
	var err error
	i := 0
	list.each(func(_ string, x node) bool {
		if len(w.out) >= maxParts {
			err = w.rd.bad(path+"/"+strconv.Itoa(i), "more than %d parts (tools, system blocks and content blocks): more than any provider takes, and more than promptloom reads", maxParts)
			return false
		}
		err = fn(x, path+"/"+strconv.Itoa(i))
		i++
		return err == nil
	})
	return err
}

// maxParts bounds the parts of one request, and so the memory a body of
// tiny blocks costs (each part is a few hundred bytes of view over a few
// bytes of body): 64 MB of them would be millions.
const maxParts = 1 << 20

func (w *partsReader) tools(list node, path string) error {
	return w.each(list, path, func(t node, at string) error {
		if !t.isObject() {
			return w.rd.bad(at, "want a tool definition (an object), got %s", kind(t))
		}
		name, typ := w.str(t, "name"), w.str(t, "type")
		for _, inner := range []string{"function", "custom"} {
			if f, _ := w.rd.get(t, at, inner); f.isObject() && name == "" {
				name = w.str(f, "name")
			}
		}
		if w.rd.p == Gemini {
			// One entry holds many declarations: each is a part.
			for _, key := range []string{"functionDeclarations", "function_declarations"} {
				decls, err := w.rd.get(t, at, key)
				if err != nil {
					return err
				}
				if decls.isArray() {
					return w.each(decls, at+"/"+key, func(d node, dat string) error {
						w.add("tools", dat, d, "", "function", w.str(d, "name"), nil)
						return nil
					})
				}
			}
		}
		var cc *CacheControl
		if w.rd.p == Anthropic { // OpenAI's markers go on message content only
			var err error
			if cc, err = w.mark(t, at); err != nil {
				return err
			}
		}
		w.add("tools", at, t, "", typ, name, cc)
		return nil
	})
}

func (w *partsReader) anthropicSystem(sys node) error {
	switch {
	case sys.absent():
		return nil
	case sys.isString():
		w.add("system", "/system", sys, "", "", "", nil)
		return nil
	}
	return w.each(sys, "/system", func(b node, at string) error {
		cc, err := w.mark(b, at)
		if err != nil {
			return err
		}
		w.add("system", at, b, "", w.str(b, "type"), "", cc)
		return nil
	})
}

// messages reads a message list: each message's content (key: content,
// or Gemini's parts) as one part a block. Messages with role system or
// developer are the system section.
func (w *partsReader) messages(list node, path, key string) error {
	if list.isString() && w.rd.p == OpenAIResponses { // input as one string
		w.add("messages", path, list, "user", "", "", nil)
		return nil
	}
	return w.each(list, path, func(m node, at string) error {
		if !m.isObject() {
			return w.rd.bad(at, "want a message (an object), got %s", kind(m))
		}
		var f [3]node // role, content, type
		if err := w.rd.fields(m, at, []string{"role", key, "type"}, f[:]); err != nil {
			return err
		}
		role, content := strings.Clone(f[0].str()), f[1]
		section := "messages"
		if role == "system" || role == "developer" {
			section = "system"
		}
		switch {
		case content.isArray() && !content.empty():
			keys := []string{"type", markKey(w.rd.p)}
			if keys[1] == "" {
				keys = keys[:1] // Gemini marks no block
			}
			return w.each(content, at+"/"+key, func(b node, bat string) error {
				var f [2]node // type, mark
				if err := w.rd.fields(b, bat, keys, f[:]); err != nil {
					return err
				}
				cc, err := w.markOf(f[1], bat)
				if err != nil {
					return err
				}
				w.add(section, bat, b, role, strings.Clone(f[0].str()), "", cc)
				return nil
			})
		case content.exists() && !content.absent():
			w.add(section, at+"/"+key, content, role, "", "", nil)
		default:
			w.add(section, at, m, role, strings.Clone(f[2].str()), "", nil)
		}
		return nil
	})
}

func (w *partsReader) str(obj node, key string) string {
	v, _ := w.rd.get(obj, "", key)
	return strings.Clone(v.str())
}

// mark reads a block's cache breakpoint: Anthropic's cache_control, or
// OpenAI's prompt_cache_breakpoint (its mode as the Type).
func (w *partsReader) mark(b node, at string) (*CacheControl, error) {
	if !b.isObject() {
		return nil, nil
	}
	key := markKey(w.rd.p)
	if key == "" {
		return nil, nil
	}
	v, err := w.rd.get(b, at, key)
	if err != nil {
		return nil, err
	}
	return w.markOf(v, at)
}

// markOf reads the value of a block's mark member (the provider's
// MarkKey), at being the block's path.
func (w *partsReader) markOf(v node, at string) (*CacheControl, error) {
	key := markKey(w.rd.p)
	if key == "cache_control" {
		return w.rd.cacheControl(v, at+"/cache_control")
	}
	if v.absent() {
		return nil, nil
	}
	if !v.isObject() {
		return nil, w.rd.bad(at+"/"+key, "want a prompt_cache_breakpoint object, got %s", kind(v))
	}
	mode, err := w.rd.get(v, at+"/"+key, "mode")
	switch {
	case err != nil:
		return nil, err
	case mode.exists() && !mode.isString():
		return nil, w.rd.bad(at+"/"+key+"/mode", "want a string, got %s", kind(mode))
	case mode.exists():
		return &CacheControl{Type: strings.Clone(mode.str())}, nil
	}
	return &CacheControl{Type: "explicit"}, nil
}

// markKey is the member by which a provider's block marks a cache
// breakpoint ("" for a provider with no marks on blocks): a block's
// digest leaves it out, since moving a breakpoint changes no content.
func markKey(p Provider) string {
	switch p {
	case Anthropic:
		return "cache_control"
	case OpenAIChat, OpenAIResponses:
		return "prompt_cache_breakpoint"
	}
	return ""
}

// cacheControl reads a cache_control object: its type and ttl.
func (r reader) cacheControl(v node, at string) (*CacheControl, error) {
	if v.absent() {
		return nil, nil
	}
	if !v.isObject() {
		return nil, r.bad(at, "want a cache_control object, got %s", kind(v))
	}
	cc := &CacheControl{}
	for _, f := range []struct {
		key string
		to  *string
	}{{"type", &cc.Type}, {"ttl", &cc.TTL}} {
		x, err := r.get(v, at, f.key)
		if err != nil {
			return nil, err
		}
		if x.exists() && !x.isString() {
			return nil, r.bad(at+"/"+f.key, "want a string, got %s", kind(x))
		}
		*f.to = strings.Clone(x.str())
	}
	return cc, nil
}

// Text is the part's text when it is text: a bare string, or the member
// named text of a text block (type text, input_text or output_text, or a
// Gemini part, which has no type), as package request counts a text
// block's tokens. A tool definition is never text, whatever its members
// are named. ok is false for anything else (a tool call, an image).
func (p Part) Text() (text string, ok bool) {
	raw := string(p.Raw)
	if raw != "" && raw[0] == '"' {
		return pjson.Unquote(raw), true
	}
	if p.Section == "tools" {
		return "", false
	}
	switch p.Type {
	case "text", "input_text", "output_text", "":
	default:
		return "", false
	}
	it := pjson.NewIter(raw)
	for {
		k, _, v, _, ok := it.Next()
		if !ok {
			return "", false
		}
		if pjson.Unquote(k) == "text" {
			if v == "" || v[0] != '"' {
				return "", false
			}
			return pjson.Unquote(v), true
		}
	}
}
