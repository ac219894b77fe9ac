package options

import (
	"github.com/promptloom/promptloom"
	pjson "github.com/promptloom/promptloom/internal/json"

	"github.com/tidwall/gjson"
)

// The system option: a string (the primary block), a list of items, or the
// replacement root.

// parseSystem reads the system option, the member m of the document s.
// The list form is walked with what the check recorded of it: its length,
// so the fragments are allocated once at their number (ten thousand grown
// by doubling would allocate three times what they hold), and where each
// item ends. Up front it takes at most one fragment per 128 bytes of the
// list, and grows past that as items are read: a list of a million bare
// zeros that fails at its first item must not first reserve memory for a
// million fragments.
func (r *reader) parseSystem(v gjson.Result, s string, m *pjson.Member) error {
	switch {
	case !v.Exists() || v.Type == gjson.Null:
		return nil
	case v.Type == gjson.String:
		s := v.String()
		r.systemText = &s
		return nil
	case v.IsArray():
		if n := min(m.Items, len(v.Raw)/128); n > 0 {
			r.o.System = make([]promptloom.Fragment, 0, n)
		}
		it := m.Iter(s)
		for i := 0; ; i++ {
			_, _, raw, at, ok := it.Next()
			if !ok {
				return nil
			}
			f, enabled, err := r.parseSystemItem(r.readValue(raw, at+m.Start), i)
			if err != nil {
				return err
			}
			if enabled {
				r.o.System = append(r.o.System, f)
			}
		}
	case v.IsObject():
		return r.parseReplacement(v)
	}
	r.warn("system", "%s is ignored: Harn reads system as a string, a list or {\"mode\":\"replace\",\"content\":...}", kind(v))
	return nil
}

func (r *reader) parseReplacement(v gjson.Result) error {
	m := r.members(v)
	if k, ok := m.firstUnknown("mode", "content"); ok {
		kv, _ := m.get(k)
		return errorf(ErrInvalid, "system", kv.Index,
			"unknown replacement key `%s`: the replacement root is {mode: \"replace\", content: string}", clip(k))
	}
	mode, ok := m.get("mode")
	if !ok {
		return errorf(ErrInvalid, "system", v.Index, "an object must be the replacement root {\"mode\":\"replace\",\"content\":...}: missing \"mode\"")
	}
	if mode.Type != gjson.String {
		return errorf(ErrInvalid, "system.mode", mode.Index, "expected \"replace\", got %s", kind(mode))
	}
	if mode.String() != "replace" {
		return errorf(ErrInvalid, "system.mode", mode.Index, "expected \"replace\", got %s", quote(mode.String()))
	}
	content, ok := m.get("content")
	if !ok {
		return errorf(ErrInvalid, "system", v.Index, "replacement root is missing \"content\"")
	}
	if content.Type != gjson.String {
		return errorf(ErrInvalid, "system.content", content.Index, "expected a string, got %s", kind(content))
	}
	c := content.String()
	r.replacement = &c
	return nil
}

var systemItemHints = map[string]string{"text": "content", "prompt": "content", "label": "title", "name": "title"}

// systemItemShape is the shape of a system list item, as Harn's errors
// spell it (promptloom's register and rank are documented in options.md).
const systemItemShape = `{content: string, title?: string, position?: "before"|"after", enabled?: bool}`

// parseSystemItem reads item i of the system list as Harn does: every key
// checked (register and rank are promptloom's), then a disabled item
// dropped unread (enabled false), then content required and position
// checked.
func (r *reader) parseSystemItem(v gjson.Result, i int) (f promptloom.Fragment, enabled bool, err error) {
	// The item's path is built only for an error or a warning: the usual
	// item has neither, and ten thousand paths are ten thousand strings.
	path := func() string { return index("system", i) }
	if v.Type == gjson.String {
		return promptloom.SystemItem(i, "", v.String(), promptloom.Before), true, nil
	}
	if !v.IsObject() {
		return f, false, errorf(ErrInvalid, path(), v.Index, "must be a string or {content, title?, position?, enabled?}, got %s", kind(v))
	}
	// The members are read in one pass into their own variables (a present
	// value always Exists, even null), keeping the least unknown key: the
	// first in byte order, the one Harn names.
	var content, title, position, enabledV, register, rank, unknown gjson.Result
	var unknownKey string
	var tm templateItem
	for it := pjson.NewIter(v.Raw); ; {
		k, keyAt, raw, at, ok := it.Next()
		if !ok {
			break
		}
		val := r.readValue(raw, at+v.Index)
		switch key := r.key(k, keyAt+v.Index); key {
		case "content":
			content = val
		case "title":
			title = val
		case "position":
			position = val
		case "enabled":
			enabledV = val
		case "register":
			register = val
		case "rank":
			rank = val
		default:
			if tm.take(key, val) { // promptloom's template keys (template.go)
				break
			}
			if !unknown.Exists() || key < unknownKey {
				unknown, unknownKey = val, key
			}
		}
	}
	if unknown.Exists() {
		return f, false, systemItemKey(path(), unknownKey, unknown.Index)
	}
	if register.Exists() {
		if f.Register, err = parseRegister(register, at(path, "register")); err != nil {
			return f, false, err
		}
	}
	if rank.Exists() {
		if f.Rank, err = parseInt(rank, at(path, "rank"), "a rank"); err != nil {
			return f, false, err
		}
	}
	if e := enabledV; e.Exists() {
		switch e.Type {
		case gjson.False, gjson.Null:
			return f, false, nil
		case gjson.True:
		default:
			r.warn(field(path(), "enabled"), "%s is neither false nor null, so the item is enabled", kind(e))
		}
	}
	var body string
	var tmpl *promptloom.Template
	switch {
	case tm.given() || tm.bindings.Exists():
		if body, tmpl, err = r.render(path(), &tm, content.Exists(), "content"); err != nil {
			return f, false, err
		}
	case !content.Exists():
		return f, false, errorf(ErrInvalid, path(), v.Index, "missing \"content\"")
	default:
		body = r.textAt(content, path, "content")
	}
	var heading string
	if title.Exists() {
		heading = r.textAt(title, path, "title")
	}
	bucket := promptloom.Before
	if position.Exists() {
		if bucket, err = parsePosition(position, field(path(), "position")); err != nil {
			return f, false, err
		}
	}
	register0, rank0 := f.Register, f.Rank
	f = promptloom.SystemItem(i, heading, body, bucket)
	f.Register, f.Rank = register0, rank0
	f.Template = fit(tmpl, body, f.Body)
	return f, true, nil
}

// systemItemKey reports a key a system list item does not take in Harn's
// words: a removed alias names the key to use, anything else is an unknown
// fragment key; both spell the item's shape.
func systemItemKey(path, key string, offset int) *Error {
	if hint, ok := systemItemHints[key]; ok {
		return errorf(ErrInvalid, path, offset, "`%s` was removed; use `%s` (a fragment is %s)", clip(key), hint, systemItemShape)
	}
	return errorf(ErrInvalid, path, offset, "unknown fragment key `%s` (a fragment is %s)", clip(key), systemItemShape)
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
		return promptloom.Before, errorf(ErrInvalid, path, v.Index, "expected \"before\" or \"after\", got %s", quote(v.String()))
	}
	return promptloom.Before, errorf(ErrInvalid, path, v.Index, "expected a string, got %s", kind(v))
}
