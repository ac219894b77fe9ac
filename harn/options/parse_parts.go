package options

import (
	"strings"

	"github.com/promptloom/promptloom"

	"github.com/tidwall/gjson"
)

var bodyHints = map[string]string{"text": "body", "prompt": "body", "content": "body"}

// partKeys are the keys Harn reads in an item of _system_fragments;
// producer, register and rank are promptloom's. Harn ignores any other key.
var partKeys = []string{"id", "source", "body", "bucket", "requires_tools", "requires_caps", "producer", "register", "rank"}

// profileKeys are the keys Harn reads in an item of
// context_profile.prompt_fragments.
var profileKeys = []string{"id", "source", "body", "content", "requires_tools", "requires_caps"}

// parsePrimaryParts reads _system_fragments as Harn does: a list makes the
// primary block exactly its items (an empty list too); anything else is
// ignored. An item that is not an object, or has no body, is skipped.
func (o *Options) parsePrimaryParts(v gjson.Result) error {
	if !v.Exists() || v.Type == gjson.Null {
		return nil
	}
	if !v.IsArray() {
		o.warn("_system_fragments", "%s is ignored: Harn reads only a list here", kind(v))
		return nil
	}
	o.HasPrimaryParts = true
	o.PrimaryParts = []Part{}
	return eachItem(v, func(i int, item gjson.Result) error {
		path := index("_system_fragments", i)
		if !item.IsObject() {
			o.warn(path, "%s is skipped: an item is an object {id?, body, ...}", kind(item))
			return nil
		}
		m := members(item)
		o.warnUnknown(path, m, partKeys)
		body, ok := m.get("body")
		if !ok {
			o.warn(path, "the item has no \"body\" and is skipped")
			return nil
		}
		p := o.readPart(m, path, i, body)
		if b, ok := m.get("bucket"); ok {
			s := asciiLower(strings.TrimSpace(display(b)))
			switch s {
			case "", "before":
				p.Bucket = promptloom.Before
			case "after":
				p.Bucket = promptloom.After
			default:
				return harnf(ErrValue, field(path, "bucket"), b.Index, "%s must be \"before\" or \"after\"; got %s", quote(s))
			}
		}
		var err error
		if v, ok := m.get("producer"); ok {
			if p.Producer, err = optString(v, field(path, "producer")); err != nil {
				return err
			}
		}
		if v, ok := m.get("register"); ok {
			if p.Register, err = parseRegister(v, is(field(path, "register"))); err != nil {
				return err
			}
		}
		if v, ok := m.get("rank"); ok {
			if p.Rank, err = parseInt(v, is(field(path, "rank")), "a rank"); err != nil {
				return err
			}
		}
		o.PrimaryParts = append(o.PrimaryParts, p)
		return nil
	})
}

// readPart reads what an item of either list shares: the body (shown as
// Harn shows it), id and source (a blank one is the default) and the gates.
func (o *Options) readPart(m object, path string, i int, body gjson.Result) Part {
	p := Part{Index: i, Body: o.text(body, field(path, "body"))}
	if v, ok := m.get("id"); ok {
		p.ID = display(v)
	}
	if v, ok := m.get("source"); ok {
		p.Source = display(v)
	}
	p.RequiresTools = o.gateList(m, path, "requires_tools")
	p.RequiresCaps = o.gateList(m, path, "requires_caps")
	return p
}

// gateList reads requires_tools or requires_caps: a list's items shown as
// text (an empty name gates on a tool or capability that cannot be set);
// anything else is ignored.
func (o *Options) gateList(m object, path, key string) []string {
	v, ok := m.get(key)
	if !ok {
		return nil
	}
	if !v.IsArray() {
		if v.Type != gjson.Null {
			o.warn(field(path, key), "%s is ignored: Harn reads only a list here, so the item is not gated", kind(v))
		}
		return nil
	}
	var out []string
	i := 0
	each(v, func(_, item gjson.Result) bool {
		out = append(out, o.text(item, index(field(path, key), i)))
		i++
		return true
	})
	return out
}

// warnUnknown warns about each key Harn does not read.
func (o *Options) warnUnknown(path string, m object, known []string) {
	for _, k := range m.keys {
		found := false
		for _, n := range known {
			if k == n {
				found = true
				break
			}
		}
		if found {
			continue
		}
		if hint, ok := bodyHints[k]; ok {
			o.warn(field(path, k), "unknown key is ignored; did you mean %q?", hint)
		} else {
			o.warn(field(path, k), "unknown key is ignored")
		}
	}
}

// parseProfile reads context_profile as Harn does: an object, or ignored;
// its caps count as capabilities; its prompt_fragments items become
// profile fragments, body (else content) shown as text and trimmed, an item
// with a blank one skipped.
func (o *Options) parseProfile(v gjson.Result) {
	if !v.Exists() || v.Type == gjson.Null {
		return
	}
	if !v.IsObject() {
		o.warn("context_profile", "%s is ignored: Harn reads only an object here", kind(v))
		return
	}
	m := members(v)
	if c, ok := m.get("caps"); ok {
		o.ProfileCaps = o.collectCaps(c, "context_profile.caps")
	}
	pf, ok := m.get("prompt_fragments")
	if !ok || pf.Type == gjson.Null {
		return
	}
	if !pf.IsArray() {
		o.warn("context_profile.prompt_fragments", "%s is ignored: Harn reads only a list here", kind(pf))
		return
	}
	i := 0
	each(pf, func(_, item gjson.Result) bool {
		path := index("context_profile.prompt_fragments", i)
		defer func() { i++ }()
		if !item.IsObject() {
			o.warn(path, "%s is skipped: an item is an object {body, requires_caps?, ...}", kind(item))
			return true
		}
		m := members(item)
		o.warnUnknown(path, m, profileKeys)
		body, ok := m.get("body")
		if c, hasContent := m.get("content"); !ok && hasContent {
			body, ok = c, true
		} else if ok && hasContent {
			o.warn(field(path, "content"), "is ignored: \"body\" is given too")
		}
		if !ok {
			o.warn(path, "the item has no \"body\" and is skipped")
			return true
		}
		p := o.readPart(m, path, i, body)
		p.Body = strings.TrimSpace(p.Body)
		if p.Body != "" {
			o.Profile = append(o.Profile, p)
		}
		return true
	})
}

// asciiLower lower-cases the ASCII letters of s only, as Rust's
// to_ascii_lowercase does (Harn's bucket check): other characters stay as
// they are, so the error quotes them as given.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
