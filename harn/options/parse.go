package options

import (
	"encoding/json"
	"strings"
	"unsafe"

	"github.com/promptloom/promptloom"
	pjson "github.com/promptloom/promptloom/internal/json"

	"github.com/tidwall/gjson"
)

// DefaultMaxBytes is the largest input Parse accepts unless told otherwise.
const DefaultMaxBytes = 64 << 20

// ParseOption configures Parse.
type ParseOption func(*parseConfig)

type parseConfig struct {
	maxBytes int
	inPlace  bool
}

// MaxBytes sets the largest input Parse accepts.
func MaxBytes(n int) ParseOption { return func(c *parseConfig) { c.maxBytes = n } }

// InPlace lets Parse read data where it lies instead of copying it first:
// the strings of the returned Options (and of the fragments, rows and
// prompt pieces built from them) share data's bytes, so the caller must
// never change data afterwards. It is for a caller that reads the options
// into a buffer of its own and drops it, as the CLI does: a large input is
// then held in memory once, not twice.
func InPlace() ParseOption { return func(c *parseConfig) { c.inPlace = true } }

// Parse reads Harn-shaped options. Input over the size limit, invalid UTF-8,
// malformed JSON and a key given twice anywhere are rejected before anything
// is read, with the limit, the offset or the path in the error. Then the
// options are read as Harn reads them: what Harn refuses is an error naming
// its JSON path, what Harn accepts is accepted (a value it reads as text is
// shown as Harn shows it), and what Harn accepts but is likely a mistake is
// recorded in Options.Warnings.
func Parse(data []byte, opts ...ParseOption) (*Options, error) {
	cfg := parseConfig{maxBytes: DefaultMaxBytes}
	for _, o := range opts {
		o(&cfg)
	}
	if len(data) > cfg.maxBytes {
		return nil, errorf(ErrTooLarge, "", -1, "input is %d bytes, over the limit of %d", len(data), cfg.maxBytes)
	}
	// One copy of the input, which gjson reads without copying again; one
	// pass over it checks everything checked before reading, and finds
	// where each member of the root lies.
	var text string
	if cfg.inPlace {
		text = unsafe.String(unsafe.SliceData(data), len(data))
	} else {
		text = string(data)
	}
	doc, err := pjson.Scan(text, readOptions)
	if err != nil {
		return nil, malformed(text, err)
	}
	root := gjson.Parse(text)
	if !root.IsObject() {
		return nil, errorf(ErrType, "", 0, "must be a JSON object, got %s", kind(root))
	}
	// The scan found the root's members and where each ends: they are read
	// from there, not found again.
	top := object{keys: make([]string, len(doc.Members)), vals: make([]gjson.Result, len(doc.Members))}
	systemItems := 0
	for i, m := range doc.Members {
		top.keys[i], top.vals[i] = m.Key, readValue(text[m.Start:m.End], m.Start)
		if m.Key == "system" {
			systemItems = m.Items
		}
	}
	top.sort()
	// Harn checks every key before reading any (validate.rs), in key order.
	for _, k := range top.keys {
		if fix, ok := removedOptions[k]; ok {
			v, _ := top.get(k)
			return nil, errorf(ErrRemoved, k, v.Index, "option was removed — %s", fix)
		}
	}
	o := &Options{CallRole: DefaultCallRole}
	get := func(k string) gjson.Result { v, _ := top.get(k); return v }
	// The order Harn assembles in (system_prompt.rs): the call role, the
	// replacement root, the system list, the decomposed primary block.
	if err := o.parseCallRole(get("call_role"), get("mock_scope")); err != nil {
		return nil, err
	}
	if err := o.parseSystem(get("system"), systemItems); err != nil {
		return nil, err
	}
	if err := o.parsePrimaryParts(get("_system_fragments")); err != nil {
		return nil, err
	}
	o.parseProfile(get("context_profile"))
	o.parseTools(get("tools"))
	o.Capabilities = o.collectCaps(get("capabilities"), "capabilities")
	if err := o.parseReminders(get("reminders")); err != nil {
		return nil, err
	}
	if v := get("actor_chain"); v.Exists() && v.Type != gjson.Null {
		// It is copied into the manifest, whose content hash is taken over a
		// canonical encoding: it must have one.
		// (The message names canon, the package that said so once.)
		if err := pjson.Check([]byte(v.Raw), nil); err != nil {
			return nil, errorf(ErrValue, "actor_chain", v.Index, "cannot be written canonically: canon: %v", err)
		}
		o.ActorChain = json.RawMessage(v.Raw)
	}
	return o, nil
}

// parseCallRole reads call_role and its alias mock_scope as Harn does: each
// trimmed, blank refused, and the two equal when both are given.
func (o *Options) parseCallRole(role, scope gjson.Result) error {
	read := func(v gjson.Result, key string) (string, error) {
		if !v.Exists() || v.Type == gjson.Null {
			return "", nil
		}
		if v.Type != gjson.String {
			return "", errorf(ErrType, key, v.Index, "must be a string, got %s", kind(v))
		}
		s := strings.TrimSpace(v.String())
		if s == "" {
			return "", errorf(ErrValue, key, v.Index, "must be a non-blank string")
		}
		return s, nil
	}
	r, err := read(role, "call_role")
	if err != nil {
		return err
	}
	s, err := read(scope, "mock_scope")
	if err != nil {
		return err
	}
	if r != "" && s != "" && r != s {
		return errorf(ErrConflict, "mock_scope", scope.Index, "%s conflicts with call_role %s (mock_scope is its alias)", quote(s), quote(r))
	}
	if r == "" {
		r = s
	}
	if r != "" {
		o.CallRole = r
	}
	return nil
}

// parseSystem reads the system option; n is the length of the list form,
// so the list is allocated once at its size (ten thousand items grown by
// doubling would allocate three times what they hold). Up front it takes
// at most one item per 64 bytes of the list, and grows past that as items
// are read: a list of a million bare zeros that fails at its first item
// must not first reserve memory for a million items.
func (o *Options) parseSystem(v gjson.Result, n int) error {
	switch {
	case !v.Exists() || v.Type == gjson.Null:
		return nil
	case v.Type == gjson.String:
		s := v.String()
		o.SystemText = &s
		return nil
	case v.IsArray():
		if n = min(n, len(v.Raw)/64); n > 0 {
			o.SystemItems = make([]SystemItem, 0, n)
		}
		return eachItem(v, func(i int, item gjson.Result) error {
			it, err := o.parseSystemItem(item, i)
			o.SystemItems = append(o.SystemItems, it)
			return err
		})
	case v.IsObject():
		return o.parseReplacement(v)
	}
	o.warn("system", "%s is ignored: Harn reads system as a string, a list or {\"mode\":\"replace\",\"content\":...}", kind(v))
	return nil
}

func (o *Options) parseReplacement(v gjson.Result) error {
	m := members(v)
	if k, ok := m.firstUnknown("mode", "content"); ok {
		kv, _ := m.get(k)
		return errorf(ErrUnknownKey, "system", kv.Index,
			"unknown replacement key `%s`: the replacement root is {mode: \"replace\", content: string}", clip(k))
	}
	mode, ok := m.get("mode")
	if !ok {
		return errorf(ErrMissing, "system", v.Index, "an object must be the replacement root {\"mode\":\"replace\",\"content\":...}: missing \"mode\"")
	}
	if mode.Type != gjson.String {
		return errorf(ErrType, "system.mode", mode.Index, "expected \"replace\", got %s", kind(mode))
	}
	if mode.String() != "replace" {
		return errorf(ErrValue, "system.mode", mode.Index, "expected \"replace\", got %s", quote(mode.String()))
	}
	content, ok := m.get("content")
	if !ok {
		return errorf(ErrMissing, "system", v.Index, "replacement root is missing \"content\"")
	}
	if content.Type != gjson.String {
		return errorf(ErrType, "system.content", content.Index, "expected a string, got %s", kind(content))
	}
	c := content.String()
	o.Replacement = &c
	return nil
}

var systemItemHints = map[string]string{"text": "content", "prompt": "content", "label": "title", "name": "title"}

// parseSystemItem reads item i of the system list as Harn does: every key
// checked (register and rank are promptloom's), then a disabled item
// dropped unread, then content required and position checked.
func (o *Options) parseSystemItem(v gjson.Result, i int) (SystemItem, error) {
	// The item's path is built only for an error or a warning: the usual
	// item has neither, and ten thousand paths are ten thousand strings.
	path := func() string { return index("system", i) }
	it := SystemItem{Index: i, Enabled: true}
	if v.Type == gjson.String {
		it.Content = v.String()
		return it, nil
	}
	if !v.IsObject() {
		return it, errorf(ErrType, path(), v.Index, "must be a string or {content, title?, position?, enabled?}, got %s", kind(v))
	}
	// The members are read in one pass into their own variables (a present
	// value always Exists, even null), keeping the least unknown key: the
	// first in byte order, the one Harn names.
	var content, title, position, enabled, register, rank, unknown gjson.Result
	var unknownKey string
	each(v, func(k, val gjson.Result) bool {
		switch key := k.Str; key {
		case "content":
			content = val
		case "title":
			title = val
		case "position":
			position = val
		case "enabled":
			enabled = val
		case "register":
			register = val
		case "rank":
			rank = val
		default:
			if !unknown.Exists() || key < unknownKey {
				unknown, unknownKey = val, key
			}
		}
		return true
	})
	if unknown.Exists() {
		return it, systemItemKey(path(), unknownKey, unknown.Index, systemItemHints)
	}
	var err error
	if register.Exists() {
		if it.Register, err = parseRegister(register, at(path, "register")); err != nil {
			return it, err
		}
	}
	if rank.Exists() {
		if it.Rank, err = parseInt(rank, at(path, "rank"), "a rank"); err != nil {
			return it, err
		}
	}
	if e := enabled; e.Exists() {
		switch e.Type {
		case gjson.False, gjson.Null:
			it.Enabled = false
			return it, nil
		case gjson.True:
		default:
			o.warn(field(path(), "enabled"), "%s is neither false nor null, so the item is enabled", kind(e))
		}
	}
	if !content.Exists() {
		return it, errorf(ErrMissing, path(), v.Index, "missing \"content\"")
	}
	it.Content = o.textAt(content, path, "content")
	if title.Exists() {
		it.Title = o.textAt(title, path, "title")
	}
	if position.Exists() {
		it.Bucket, err = parsePosition(position, field(path(), "position"))
	}
	return it, err
}

// parsePosition reads a system item's position: null or absent is before.
func parsePosition(v gjson.Result, path string) (promptloom.Bucket, error) {
	switch v.Type {
	case gjson.Null:
		return promptloom.Before, nil
	case gjson.String:
		switch v.String() {
		case "before":
			return promptloom.Before, nil
		case "after":
			return promptloom.After, nil
		}
		return promptloom.Before, errorf(ErrValue, path, v.Index, "expected \"before\" or \"after\", got %s", quote(v.String()))
	}
	return promptloom.Before, errorf(ErrType, path, v.Index, "expected a string, got %s", kind(v))
}

// text returns v as Harn uses it as text (display), warning when v is not a
// string: Harn does not refuse it, but the text is rarely what was meant.
// textAt is text with the path built only when there is a warning.
func (o *Options) textAt(v gjson.Result, path func() string, key string) string {
	if v.Type == gjson.String {
		return v.String()
	}
	return o.text(v, field(path(), key))
}

func (o *Options) text(v gjson.Result, path string) string {
	if v.Type != gjson.String {
		o.warn(path, "%s is used as the text %s", kind(v), quote(display(v)))
	}
	return display(v)
}
