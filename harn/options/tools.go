package options

import (
	"strings"

	"github.com/tidwall/gjson"
)

// The tools the call declares, and the capabilities it has.

// parseTools reads tools as Harn does: a list of tools, or {"tools": [...]};
// anything else is ignored. A tool that is not an object, or whose name
// shows as empty text, is skipped; a tool named twice is declared twice, and
// each copy's guidance counts. Other keys of a tool (parameters, strict,
// ...) belong to the provider.
func (r *reader) parseTools(v gjson.Result) {
	if !v.Exists() || v.Type == gjson.Null {
		return
	}
	list, path := v, "tools"
	if v.IsObject() {
		list, _ = r.members(v).get("tools")
		path = "tools.tools"
	}
	if !list.IsArray() {
		r.warn(path, "%s is ignored: Harn reads a list of tools or {\"tools\": [...]}", kind(list))
		return
	}
	seen := map[string]bool{}
	i := 0
	r.each(list, func(_, item gjson.Result) bool {
		p := index(path, i)
		i++
		if !item.IsObject() {
			r.warn(p, "%s is skipped: a tool is an object {name, guidance?, ...}", kind(item))
			return true
		}
		m := r.members(item)
		r.warnNearMiss(p, m, toolKeys, toolOtherKeys)
		name, ok := m.get("name")
		t := Tool{Active: true}
		if ok {
			t.Name = r.text(name, field(p, "name"))
		}
		if t.Name == "" {
			r.warn(p, "the tool has no name and is skipped")
			return true
		}
		if seen[t.Name] {
			r.warn(field(p, "name"), "tool %s is declared twice; the guidance of each copy counts", quote(t.Name))
		}
		seen[t.Name] = true
		guidance := ""
		if g, ok := m.get("guidance"); ok {
			guidance = strings.TrimSpace(r.text(g, field(p, "guidance")))
		}
		if _, ok := m.get("active"); ok {
			r.warn(field(p, "active"), "is not read: Harn treats every declared tool as active")
		}
		r.o.Tools = append(r.o.Tools, t)
		r.guidance = append(r.guidance, guidance)
		return true
	})
}

// collectCaps reads capabilities as Harn does: a list's items shown as text
// (empty ones dropped); an object's keys whose value is neither false nor
// null; any other value is one capability, shown as text.
func (r *reader) collectCaps(v gjson.Result, path string) []string {
	switch {
	case !v.Exists():
		return nil
	case v.IsArray():
		var out []string
		i := 0
		r.each(v, func(_, item gjson.Result) bool {
			if c := r.text(item, index(path, i)); c != "" {
				out = append(out, c)
			}
			i++
			return true
		})
		return out
	case v.IsObject():
		var out []string
		m := r.members(v)
		for i, k := range m.keys {
			if val := m.vals[i]; val.Type != gjson.Null && val.Type != gjson.False {
				out = append(out, k)
			}
		}
		return out
	}
	c := r.text(v, path)
	if c == "" {
		return nil
	}
	return []string{c}
}
