package options

import (
	"strings"

	"github.com/promptloom/promptloom/harn/reminder"

	"github.com/tidwall/gjson"
)

func (o *Options) parseReminders(v gjson.Result) error {
	if v.Type == gjson.Null {
		return nil
	}
	if !v.IsArray() {
		return errorf(ErrType, "reminders", v.Index, "must be a list, got %s", kind(v))
	}
	return eachItem(v, func(i int, item gjson.Result) error {
		r, err := parseReminder(item, i)
		o.Reminders = append(o.Reminders, r)
		return err
	})
}

func parseReminder(v gjson.Result, i int) (reminder.Reminder, error) {
	path := index("reminders", i)
	var r reminder.Reminder
	if !v.IsObject() {
		return r, errorf(ErrType, path, v.Index, "must be an object {body, ...}, got %s", kind(v))
	}
	hasBody := false
	err := eachKey(v, func(key string, val gjson.Result) error {
		var err error
		f := field(path, key)
		switch key {
		case "body":
			hasBody = true
			r.Body, err = reqString(val, f)
		case "tags":
			r.Tags, err = stringList(val, f)
		case "dedupe_key":
			r.DedupeKey, err = optString(val, f)
		case "ttl_turns":
			r.TTLTurns, err = parseInt(val, is(f), "ttl_turns")
			if err == nil && r.TTLTurns < 0 {
				err = errorf(ErrValue, f, val.Index, "must not be negative, got %d", r.TTLTurns)
			}
		case "preserve_on_compact":
			r.PreserveOnCompact, err = optBool(val, f, false)
		case "authority":
			var a string
			a, err = optString(val, f)
			if r.Authority = reminder.Authority(a); err == nil && !r.Authority.Valid() {
				err = errorf(ErrValue, f, val.Index, "must be contract, corrective or advisory, got %s", quote(a))
			}
		default:
			return unknownKey(path, key, val.Index, bodyHints)
		}
		return err
	})
	if err == nil && (!hasBody || isBlank(r.Body)) {
		err = errorf(ErrMissing, path, v.Index, "a reminder needs a non-blank \"body\"")
	}
	return r, err
}

// parseTools reads tools as Harn does: a list of tools, or {"tools": [...]};
// anything else is ignored. A tool that is not an object, or whose name
// shows as empty text, is skipped; a tool named twice is declared twice, and
// each copy's guidance counts. Other keys of a tool (parameters, strict,
// ...) belong to the provider.
func (o *Options) parseTools(v gjson.Result) {
	if !v.Exists() || v.Type == gjson.Null {
		return
	}
	list, path := v, "tools"
	if v.IsObject() {
		list, _ = members(v).get("tools")
		path = "tools.tools"
	}
	if !list.IsArray() {
		o.warn(path, "%s is ignored: Harn reads a list of tools or {\"tools\": [...]}", kind(list))
		return
	}
	seen := map[string]bool{}
	i := 0
	each(list, func(_, item gjson.Result) bool {
		p := index(path, i)
		i++
		if !item.IsObject() {
			o.warn(p, "%s is skipped: a tool is an object {name, guidance?, ...}", kind(item))
			return true
		}
		m := members(item)
		name, ok := m.get("name")
		t := Tool{Active: true}
		if ok {
			t.Name = o.text(name, field(p, "name"))
		}
		if t.Name == "" {
			o.warn(p, "the tool has no name and is skipped")
			return true
		}
		if seen[t.Name] {
			o.warn(field(p, "name"), "tool %s is declared twice; the guidance of each copy counts", quote(t.Name))
		}
		seen[t.Name] = true
		if g, ok := m.get("guidance"); ok {
			t.Guidance = strings.TrimSpace(o.text(g, field(p, "guidance")))
		}
		if _, ok := m.get("active"); ok {
			o.warn(field(p, "active"), "is not read: Harn treats every declared tool as active")
		}
		o.Tools = append(o.Tools, t)
		return true
	})
}

// collectCaps reads capabilities as Harn does: a list's items shown as text
// (empty ones dropped); an object's keys whose value is neither false nor
// null; any other value is one capability, shown as text.
func (o *Options) collectCaps(v gjson.Result, path string) []string {
	switch {
	case !v.Exists():
		return nil
	case v.IsArray():
		var out []string
		i := 0
		each(v, func(_, item gjson.Result) bool {
			if c := o.text(item, index(path, i)); c != "" {
				out = append(out, c)
			}
			i++
			return true
		})
		return out
	case v.IsObject():
		var out []string
		m := members(v)
		for i, k := range m.keys {
			if val := m.vals[i]; val.Type != gjson.Null && val.Type != gjson.False {
				out = append(out, k)
			}
		}
		return out
	}
	c := o.text(v, path)
	if c == "" {
		return nil
	}
	return []string{c}
}

// eachKey calls fn for each member of the object v, in input order, and
// stops at the first error.
func eachKey(v gjson.Result, fn func(key string, val gjson.Result) error) error {
	var err error
	each(v, func(k, val gjson.Result) bool {
		err = fn(k.String(), val)
		return err == nil
	})
	return err
}
