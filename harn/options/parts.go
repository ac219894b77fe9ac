package options

import (
	"slices"
	"strings"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/budget"

	"github.com/tidwall/gjson"
)

// The decomposed primary block (_system_fragments) and the profile's
// prompt fragments (context_profile): parts with a body, an id, a source
// and gates.

var bodyHints = map[string]string{"text": "body", "prompt": "body", "content": "body"}

// partKeys are the keys Harn reads in an item of _system_fragments;
// producer, register and rank are promptloom's. Harn ignores any other key.
var partKeys = []string{"id", "source", "body", "bucket", "requires_tools", "requires_caps", "producer", "register", "rank"}

// profileKeys are the keys Harn reads in an item of
// context_profile.prompt_fragments.
var profileKeys = []string{"id", "source", "body", "content", "requires_tools", "requires_caps"}

// part is one item of _system_fragments or of
// context_profile.prompt_fragments, before it is a fragment. A profile item
// has no producer, bucket, register or rank (Harn does not read those keys
// there), so they stay zero.
type part struct {
	index         int
	id, source    string // "" means the default: primary[index] or profile[index]; primary or profile
	producer      string
	bucket        promptloom.Bucket
	body          string
	requiresTools []string
	requiresCaps  []string
	register      budget.Register
	rank          int
	template      *promptloom.Template // a templated item's (template.go)
}

// fragment is the part as a fragment, over base (its default id and source).
func (p part) fragment(base promptloom.Fragment) promptloom.Fragment {
	if p.id != "" {
		base.ID = p.id
	}
	if p.source != "" {
		base.Source = p.source
	}
	base.Producer, base.Bucket = p.producer, p.bucket
	base.RequiresTools, base.RequiresCaps = p.requiresTools, p.requiresCaps
	base.Register, base.Rank = p.register, p.rank
	base.Template = p.template
	return base
}

// parsePrimaryParts reads _system_fragments as Harn does: a list makes the
// primary block exactly its items (an empty list too); anything else is
// ignored. An item that is not an object, or has no body, is skipped.
func (r *reader) parsePrimaryParts(v gjson.Result) error {
	if !v.Exists() || v.Type == gjson.Null {
		return nil
	}
	if !v.IsArray() {
		r.warn("_system_fragments", "%s is ignored: Harn reads only a list here", kind(v))
		return nil
	}
	r.hasPrimary = true
	return r.eachItem(v, func(i int, item gjson.Result) error {
		path := index("_system_fragments", i)
		if !item.IsObject() {
			r.warn(path, "%s is skipped: an item is an object {id?, body, ...}", kind(item))
			return nil
		}
		m := r.members(item)
		r.warnUnknown(path, m, withTemplateKeys(partKeys))
		body, ok := m.get("body")
		tmpl, err := r.renderPart(m, path, &body, &ok)
		if err != nil {
			return err
		}
		if !ok {
			r.warn(path, "the item has no \"body\" and is skipped")
			return nil
		}
		p := r.readPart(m, path, i, body)
		p.template = tmpl
		if b, ok := m.get("bucket"); ok {
			s := asciiLower(strings.TrimSpace(r.display(b)))
			switch s {
			case "", "before":
				p.bucket = promptloom.Before
			case "after":
				p.bucket = promptloom.After
			default:
				return harnf(ErrInvalid, field(path, "bucket"), b.Index, "%s must be \"before\" or \"after\"; got %s", quote(s))
			}
		}
		if v, ok := m.get("producer"); ok {
			if p.producer, err = optString(v, field(path, "producer")); err != nil {
				return err
			}
		}
		if v, ok := m.get("register"); ok {
			if p.register, err = parseRegister(v, is(field(path, "register"))); err != nil {
				return err
			}
		}
		if v, ok := m.get("rank"); ok {
			if p.rank, err = parseInt(v, is(field(path, "rank")), "a rank"); err != nil {
				return err
			}
		}
		r.primary = append(r.primary, p)
		return nil
	})
}

// readPart reads what an item of either list shares: the body (shown as
// Harn shows it), id and source (a blank one is the default) and the gates.
func (r *reader) readPart(m object, path string, i int, body gjson.Result) part {
	p := part{index: i, body: r.text(body, field(path, "body"))}
	if v, ok := m.get("id"); ok {
		p.id = r.display(v)
	}
	if v, ok := m.get("source"); ok {
		p.source = r.display(v)
	}
	p.requiresTools = r.gateList(m, path, "requires_tools")
	p.requiresCaps = r.gateList(m, path, "requires_caps")
	return p
}

// gateList reads requires_tools or requires_caps: a list's items shown as
// text (an empty name gates on a tool or capability that cannot be set);
// anything else is ignored.
func (r *reader) gateList(m object, path, key string) []string {
	v, ok := m.get(key)
	if !ok {
		return nil
	}
	if !v.IsArray() {
		if v.Type != gjson.Null {
			r.warn(field(path, key), "%s is ignored: Harn reads only a list here, so the item is not gated", kind(v))
		}
		return nil
	}
	var out []string
	i := 0
	r.each(v, func(_, item gjson.Result) bool {
		out = append(out, r.text(item, index(field(path, key), i)))
		i++
		return true
	})
	return out
}

// warnUnknown warns about each key Harn does not read.
func (r *reader) warnUnknown(path string, m object, known []string) {
	for _, k := range m.keys {
		if slices.Contains(known, k) {
			continue
		}
		if hint, ok := bodyHints[k]; ok {
			r.warn(field(path, k), "unknown key is ignored; did you mean %q?", hint)
		} else if hint, ok := nearestKey(k, known); ok {
			r.warn(field(path, k), "unknown key is ignored; did you mean %q?", hint)
		} else {
			r.warn(field(path, k), "unknown key is ignored")
		}
	}
}

// parseProfile reads context_profile as Harn does: an object, or ignored;
// its caps count as capabilities; its prompt_fragments items become
// profile fragments, body (else content) shown as text and trimmed, an item
// with a blank one skipped. Beside a replacement root its prompt_fragments
// are not read, as Harn does not read them.
func (r *reader) parseProfile(v gjson.Result) error {
	if !v.Exists() || v.Type == gjson.Null {
		return nil
	}
	if !v.IsObject() {
		r.warn("context_profile", "%s is ignored: Harn reads only an object here", kind(v))
		return nil
	}
	m := r.members(v)
	r.warnNearMiss("context_profile", m, profileObjectKeys, nil)
	if c, ok := m.get("caps"); ok {
		r.profileCaps = r.collectCaps(c, "context_profile.caps")
	}
	pf, ok := m.get("prompt_fragments")
	if !ok || pf.Type == gjson.Null {
		return nil
	}
	if r.replacement != nil {
		r.suppressed(pf, "context_profile.prompt_fragments")
		return nil
	}
	if !pf.IsArray() {
		r.warn("context_profile.prompt_fragments", "%s is ignored: Harn reads only a list here", kind(pf))
		return nil
	}
	i := 0
	var perr error
	r.each(pf, func(_, item gjson.Result) bool {
		path := index("context_profile.prompt_fragments", i)
		defer func() { i++ }()
		if !item.IsObject() {
			r.warn(path, "%s is skipped: an item is an object {body, requires_caps?, ...}", kind(item))
			return true
		}
		m := r.members(item)
		r.warnUnknown(path, m, withTemplateKeys(profileKeys))
		body, ok := m.get("body")
		if c, hasContent := m.get("content"); !ok && hasContent {
			body, ok = c, true
		} else if ok && hasContent {
			r.warn(field(path, "content"), "is ignored: \"body\" is given too")
		}
		tmpl, err := r.renderPart(m, path, &body, &ok)
		if err != nil {
			perr = err
			return false
		}
		if !ok {
			r.warn(path, "the item has no \"body\" and is skipped")
			return true
		}
		p := r.readPart(m, path, i, body)
		p.template = fit(tmpl, p.body, strings.TrimSpace(p.body))
		p.body = strings.TrimSpace(p.body)
		if p.body != "" {
			r.profile = append(r.profile, p)
		}
		return true
	})
	return perr
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

// suppressed warns that v, given beside the replacement root, is not read:
// Harn accepts it there unread, whatever it holds, but it is likely a
// mistake.
func (r *reader) suppressed(v gjson.Result, path string) {
	if v.Exists() && v.Type != gjson.Null {
		r.warn(path, "is not read: the replacement root is the whole prompt")
	}
}
