package payload

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	pjson "github.com/promptloom/promptloom/internal/json"
)

// The marks PlaceBreakpoints writes: Anthropic's default lifetime (5
// minutes), and OpenAI's explicit breakpoint, which takes the request's
// TTL.
const (
	anthropicMark = `"cache_control":{"type":"ephemeral"}`
	openAIMark    = `"prompt_cache_breakpoint":{"mode":"explicit"}`
	// anthropicLookback is how many positions a breakpoint's read checks,
	// its own block the first (docs/caching.md, "the 20-block lookback").
	anthropicLookback = 20
)

// placeBreakpoints is the body with cache breakpoints placed by the
// provider's documented rules, for a request that sets none, on behalf
// of a client that never set them (docs/caching.md):
//
//   - Anthropic: cache_control on the last tool, on the last system
//     block, and on the last block of the message list the cache takes
//     (not a thinking block, not an empty text); when that block is a
//     message's string content, the top-level cache_control (automatic
//     caching) marks it instead, so no message is rewritten. A fourth,
//     within the limit of four, goes on the end of the previous turn (the
//     message before the last assistant message) when the last
//     breakpoint's 20-block lookback would not reach the entry the
//     previous call wrote there. A system string becomes one text block
//     to carry its mark.
//   - OpenAI, GPT-5.6 and later, implicit mode: an explicit
//     prompt_cache_breakpoint on the last block of the first run of
//     system and developer messages (the implicit breakpoint already ends
//     the latest eligible message, and only writes there), so the tools
//     and instructions are written once and read by every conversation
//     that shares them. A string content becomes one text block
//     (input_text in Responses) to carry it. Responses' instructions take
//     no mark.
//
// Every other byte is the body's as read. at lists the pointers of the
// blocks marked (/tools/11, /system/0, /cache_control for automatic
// caching), in cache order; it is empty, and body is the body as read,
// when nothing was placed: a request that marks anything already (a
// block's cache_control or prompt_cache_breakpoint, Anthropic's top-level
// cache_control, OpenAI's explicit mode, or the mark's name anywhere in
// the body, a nested block's included), another shape or model, or a body
// Parts refuses (the provider's to judge).
func (r *Request) placeBreakpoints() (body []byte, at []string) {
	if r.unread() != nil {
		return r.bytes(), nil
	}
	key := markKey(r.Provider)
	if key == "" || bytes.Contains(r.body, []byte(`"`+key+`"`)) {
		return r.body, nil
	}
	parts, err := r.Parts()
	if err != nil {
		return r.body, nil
	}
	c, err := r.Cache()
	if err != nil || c.Auto != nil || c.Mode == "explicit" {
		return r.body, nil
	}
	for _, p := range parts {
		if p.Cache != nil {
			return r.body, nil
		}
	}
	var eds []edit
	switch r.Provider {
	case Anthropic:
		eds = r.anthropicBreakpoints(parts)
	case OpenAIChat, OpenAIResponses:
		if c.Mode == "implicit" || breakpointModel(r.Model) {
			eds = r.openAIBreakpoints(parts)
		}
	}
	if len(eds) == 0 {
		return r.body, nil
	}
	at = make([]string, len(eds))
	for i, e := range eds {
		at[i] = e.path
	}
	slices.SortFunc(eds, func(a, b edit) int { return a.from - b.from })
	return apply(r.body, eds), at
}

// edit replaces the body's bytes [from, to) with text (to == from: an
// insertion); path is the block marked.
type edit struct {
	from, to int
	text     []byte
	path     string
}

// apply makes the edits, ordered by place and not overlapping, into a new
// body.
func apply(body []byte, eds []edit) []byte {
	n := len(body)
	for _, e := range eds {
		n += len(e.text) - (e.to - e.from)
	}
	out := make([]byte, 0, n)
	last := 0
	for _, e := range eds {
		out = append(append(out, body[last:e.from]...), e.text...)
		last = e.to
	}
	return append(out, body[last:]...)
}

// mark is the edit that adds member to the block p (an object), before
// its closing brace.
func (r *Request) mark(p Part, member string) (edit, bool) {
	off := r.offset(p.Raw)
	if off < 0 || len(p.Raw) < 2 || p.Raw[0] != '{' {
		return edit{}, false
	}
	closing := off + len(p.Raw) - 1
	text := []byte(member)
	if !(node{raw: string(p.Raw)}).empty() {
		text = append([]byte{','}, text...)
	}
	return edit{from: closing, to: closing, text: text, path: p.Path}, true
}

// wrap is the edit that makes the string p (a system string, a message's
// string content) one text block of type typ carrying member: the same
// text, as the providers read a string there. Path is the new block's.
func (r *Request) wrap(p Part, typ, member string) (edit, bool) {
	off := r.offset(p.Raw)
	if off < 0 || !(node{raw: string(p.Raw)}).isString() || len(p.Raw) <= 2 {
		return edit{}, false // not a string, or an empty one: nothing to cache
	}
	text := append([]byte(`[{"type":`), pjson.AppendString(nil, typ)...)
	text = append(append(text, `,"text":`...), p.Raw...)
	text = append(append(append(text, ','), member...), "}]"...)
	return edit{from: off, to: off + len(p.Raw), text: text, path: p.Path + "/0"}, true
}

// offset is where raw, a slice of the body that Parts cut, starts in
// the body; -1 when it is not one. Parts hands out slices, not offsets,
// and the body is edited where they are.
func (r *Request) offset(raw []byte) int {
	if len(raw) == 0 || len(r.body) == 0 {
		return -1
	}
	d := uintptr(unsafe.Pointer(unsafe.SliceData(raw))) - uintptr(unsafe.Pointer(unsafe.SliceData(r.body)))
	if d >= uintptr(len(r.body)) || int(d)+len(raw) > len(r.body) {
		return -1
	}
	return int(d)
}

// cacheable reports whether the cache takes a breakpoint on block p: an
// object that is not a thinking block nor an empty text (caching.md's
// reading of "what can be cached").
func (r *Request) cacheable(p Part) bool {
	if len(p.Raw) == 0 || p.Raw[0] != '{' || p.Type == "thinking" || p.Type == "redacted_thinking" {
		return false
	}
	if p.Type == "text" || p.Type == "input_text" {
		t, err := reader{r.Provider, r.root}.get(node{raw: string(p.Raw)}, "", "text")
		if err != nil || t.isString() && len(t.raw) == 2 {
			return false
		}
	}
	return true
}

// message is the index of the message a part of the message list
// belongs to (-1 for a part outside the list), and what the part is: a
// block of its content list, or its content as one string (neither: the
// message itself, which has no content).
func message(path string) (m int, block, str bool) {
	for _, list := range []string{"/messages/", "/input/"} {
		if rest, ok := strings.CutPrefix(path, list); ok {
			n, tail, _ := strings.Cut(rest, "/")
			i, err := strconv.Atoi(n)
			if err != nil {
				return -1, false, false
			}
			return i, strings.HasPrefix(tail, "content/"), tail == "content"
		}
	}
	return -1, false, false
}

func (r *Request) anthropicBreakpoints(parts []Part) []edit {
	var eds []edit
	lastTool, lastSystem := -1, -1
	for i, p := range parts {
		switch {
		case strings.HasPrefix(p.Path, "/tools/"):
			lastTool = i
		case p.Path == "/system" || strings.HasPrefix(p.Path, "/system/"):
			if p.Path == "/system" || r.cacheable(p) {
				lastSystem = i
			}
		}
	}
	if lastTool >= 0 {
		if e, ok := r.mark(parts[lastTool], anthropicMark); ok {
			eds = append(eds, e)
		}
	}
	if lastSystem >= 0 {
		p := parts[lastSystem]
		e, ok := r.mark(p, anthropicMark)
		if p.Path == "/system" {
			e, ok = r.wrap(p, "text", anthropicMark)
		}
		if ok {
			eds = append(eds, e)
		}
	}
	// The end of the message list: the last block the cache takes.
	end, auto := -1, false
	for i := len(parts) - 1; i >= 0; i-- {
		p := parts[i]
		m, block, str := message(p.Path)
		if m < 0 {
			break // past the messages
		}
		if str && len(p.Raw) > 2 && p.Raw[0] == '"' {
			end, auto = i, true
			break
		}
		if block && r.cacheable(p) {
			end = i
			break
		}
	}
	if end < 0 {
		return eds
	}
	var tail []edit
	if prev := r.previousTurn(parts, end); prev >= 0 && end-prev >= anthropicLookback {
		if e, ok := r.mark(parts[prev], anthropicMark); ok {
			tail = append(tail, e)
		}
	}
	if auto {
		// Automatic caching marks the last block the cache takes, which
		// is this one: the message's string is left as it is.
		closing := closingBrace(r.body)
		text := []byte(anthropicMark)
		if len(r.root.members) > 0 {
			text = append([]byte{','}, text...)
		}
		tail = append(tail, edit{from: closing, to: closing, text: text, path: "/cache_control"})
	} else if e, ok := r.mark(parts[end], anthropicMark); ok {
		tail = append(tail, e)
	}
	return append(eds, tail...)
}

// previousTurn is the last block the cache takes of the message before
// the last assistant message ahead of parts[end]'s message: where the
// previous call's request ended, and so where its breakpoint wrote; -1
// when there is none, or it is a string.
func (r *Request) previousTurn(parts []Part, end int) int {
	last, _, _ := message(parts[end].Path)
	assistant := -1
	for i := end; i >= 0; i-- {
		m, _, _ := message(parts[i].Path)
		if m < 0 {
			return -1
		}
		if m < last && parts[i].Role == "assistant" {
			assistant = m
			break
		}
	}
	for i := end; i >= 0; i-- {
		m, block, str := message(parts[i].Path)
		switch {
		case m < 0 || m < assistant-1:
			return -1
		case m == assistant-1 && block && r.cacheable(parts[i]):
			return i
		case m == assistant-1 && str:
			return -1
		}
	}
	return -1
}

// openAIBreakpoints marks the end of the first run of system and
// developer messages.
func (r *Request) openAIBreakpoints(parts []Part) []edit {
	run, end := -1, -1
	for i, p := range parts {
		m, _, _ := message(p.Path)
		if m < 0 {
			continue
		}
		if p.Section != "system" {
			if run >= 0 {
				break
			}
			continue
		}
		if run >= 0 && m > run+1 {
			break // another run, after other messages
		}
		run, end = m, i
	}
	typ := "text"
	if r.Provider == OpenAIResponses {
		typ = "input_text"
	}
	for i := end; i >= 0; i-- {
		p := parts[i]
		m, block, str := message(p.Path)
		if m < 0 || p.Section != "system" {
			break
		}
		if str {
			if e, ok := r.wrap(p, typ, openAIMark); ok {
				return []edit{e}
			}
			continue
		}
		// Chat takes the mark on a text part of these messages; Responses
		// on any content block of an input message.
		if block && (p.Type == "text" || r.Provider == OpenAIResponses) && r.cacheable(p) {
			if e, ok := r.mark(p, openAIMark); ok {
				return []edit{e}
			}
		}
	}
	return nil
}

// breakpointModel reports whether a model takes explicit breakpoints:
// OpenAI's GPT-5.6 and later, by name.
func breakpointModel(model string) bool {
	rest, ok := strings.CutPrefix(strings.ToLower(model), "gpt-")
	if !ok {
		return false
	}
	major, rest := leadingInt(rest)
	minor := 0
	if r, ok := strings.CutPrefix(rest, "."); ok {
		minor, _ = leadingInt(r)
	}
	return major > 5 || major == 5 && minor >= 6
}

// leadingInt reads the decimal digits s starts with (-1 for none) and
// returns what follows them.
func leadingInt(s string) (int, string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' && i < 9 {
		i++
	}
	n, err := strconv.Atoi(s[:i])
	if err != nil {
		return -1, s
	}
	return n, s[i:]
}
