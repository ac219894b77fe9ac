package options

import (
	"github.com/promptloom/promptloom/reminder"
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
	err := eachKey(v, path, func(key string, val gjson.Result) error {
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
			r.TTLTurns, err = parseRank(val, f)
			if err == nil && r.TTLTurns < 0 {
				err = errorf(ErrValue, f, val.Index, "must not be negative, got %d", r.TTLTurns)
			}
		case "preserve_on_compact":
			r.PreserveOnCompact, err = optBool(val, f, false)
		case "authority":
			var a string
			a, err = optString(val, f)
			if r.Authority = reminder.Authority(a); err == nil && !r.Authority.Valid() {
				err = errorf(ErrValue, f, val.Index, "must be contract, corrective or advisory, got %q", a)
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

func (o *Options) parseTools(v gjson.Result) error {
	list := v
	path := "tools"
	if v.IsObject() {
		list, path = v.Get("tools"), "tools.tools"
		if !list.Exists() {
			return errorf(ErrMissing, "tools", v.Index, "an object must hold the list under \"tools\"")
		}
	}
	if list.Type == gjson.Null {
		return nil
	}
	if !list.IsArray() {
		return errorf(ErrType, path, list.Index, "must be a list of tools or {\"tools\": [...]}, got %s", kind(list))
	}
	seen := map[string]bool{}
	return eachItem(list, func(i int, item gjson.Result) error {
		t, err := parseTool(item, index(path, i))
		if err == nil && seen[t.Name] {
			err = errorf(ErrValue, field(index(path, i), "name"), item.Get("name").Index, "duplicate tool %q", t.Name)
		}
		seen[t.Name] = true
		o.Tools = append(o.Tools, t)
		return err
	})
}

// parseTool reads the keys of a tool that matter to the prompt. Tool
// definitions carry provider-specific keys (parameters, input_schema,
// strict, ...), which are left alone.
func parseTool(v gjson.Result, path string) (Tool, error) {
	t := Tool{Active: true}
	if !v.IsObject() {
		return t, errorf(ErrType, path, v.Index, "must be an object {name, description?, parameters?, guidance?}, got %s", kind(v))
	}
	name := v.Get("name")
	if !name.Exists() {
		return t, errorf(ErrMissing, path, v.Index, "missing \"name\"")
	}
	var err error
	if t.Name, err = reqString(name, field(path, "name")); err != nil {
		return t, err
	}
	if t.Name == "" {
		return t, errorf(ErrValue, field(path, "name"), name.Index, "must not be empty")
	}
	if t.Guidance, err = optString(v.Get("guidance"), field(path, "guidance")); err != nil {
		return t, err
	}
	if _, err = optString(v.Get("description"), field(path, "description")); err != nil {
		return t, err
	}
	t.Active, err = optBool(v.Get("active"), field(path, "active"), true)
	return t, err
}

// parseCaps reads a capability list, or an object whose keys count when
// their value is neither false nor null.
func parseCaps(v gjson.Result, path string) ([]string, error) {
	switch {
	case v.Type == gjson.Null:
		return nil, nil
	case v.IsArray():
		return stringList(v, path)
	case v.IsObject():
		var out []string
		err := eachKey(v, path, func(key string, val gjson.Result) error {
			if val.Type != gjson.Null && val.Type != gjson.False {
				out = append(out, key)
			}
			return nil
		})
		return out, err
	}
	return nil, errorf(ErrType, path, v.Index, "must be a list of names or an object of flags, got %s", kind(v))
}
