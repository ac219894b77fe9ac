package payload

import (
	"errors"
	"fmt"
	"strings"

	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/internal/redact"
)

// node is one JSON value of a body that Read checked: its text as
// written ("" for a value that is not there) and where it starts. A member
// of the root object also carries what the scan recorded of it, so a long
// list at the top level (the messages) is walked without finding the end
// of each item again.
type node struct {
	raw string
	at  int
	m   *pjson.Member
	doc string // the whole body, for m
}

func (v node) exists() bool   { return v.raw != "" }
func (v node) isObject() bool { return v.raw != "" && v.raw[0] == '{' }
func (v node) isArray() bool  { return v.raw != "" && v.raw[0] == '[' }
func (v node) isString() bool { return v.raw != "" && v.raw[0] == '"' }

// absent: missing or null.
func (v node) absent() bool { return v.raw == "" || v.raw == "null" }

// str is a string value's text, its escapes decoded ("" for anything else).
func (v node) str() string {
	if !v.isString() {
		return ""
	}
	return pjson.Unquote(v.raw)
}

// each calls fn for every item of an array or member of an object, with
// the member's key token (quotes included; "" for an item), until fn
// returns false.
func (v node) each(fn func(key string, x node) bool) {
	var it pjson.Iter
	if v.m != nil {
		it = v.m.Iter(v.doc)
	} else {
		it = pjson.NewIter(v.raw)
	}
	for {
		key, _, val, at, ok := it.Next()
		if !ok || !fn(key, node{raw: val, at: v.at + at}) {
			return
		}
	}
}

// empty reports whether an array or object has no items or members.
func (v node) empty() bool {
	for i := 1; i < len(v.raw); i++ {
		switch v.raw[i] {
		case ' ', '\t', '\r', '\n':
		case ']', '}':
			return true
		default:
			return false
		}
	}
	return true
}

// items are an array's items (none for anything else).
func (v node) items() []node {
	var out []node
	if v.isArray() {
		v.each(func(_ string, x node) bool { out = append(out, x); return true })
	}
	return out
}

// reader reads one provider's fields, failing on the first wrong one.
type reader struct {
	p    Provider
	root *root
}

// root is a body's top-level object, as the scan recorded it.
type root struct {
	s       string
	members []pjson.Member
	twice   string // the first key given twice
}

// get returns the root's member key (refused twice by Read).
func (r *root) get(key string) node {
	for i := range r.members {
		m := &r.members[i]
		if m.Key == key {
			return node{raw: r.s[m.Start:m.End], at: m.Start, m: m, doc: r.s}
		}
	}
	return node{}
}

func (r reader) bad(path, format string, args ...any) error {
	return &Error{Kind: ErrMalformed, Provider: r.p, Path: path, Msg: fmt.Sprintf(format, args...)}
}

// scan refuses a body that is not JSON every reader reads alike: the
// syntax as encoding/json words and places it (the offset counting the
// offending byte), bytes that are not UTF-8 (encoding/json reads them as
// U+FFFD where other readers keep them, so a text could be one thing to the
// verifier and another to a decoder), a body that is not an object, and a
// top-level key given twice (decoders differ on which copy wins, so the
// model, the tools or the messages read here could be others than the
// provider reads). The check is iterative, to depth 10,000. A key given
// twice deeper is refused where it is read (get), naming the provider's
// field; elsewhere in the body, as a number past float range, it is the
// provider's to judge.
func scan(body string, p Provider) (*root, error) {
	doc, err := pjson.Scan(body, &pjson.Options{LoneSurrogates: true, DuplicateKeys: true, LargeNumbers: true})
	var e *pjson.Error
	switch {
	case err == nil:
	case !errors.As(err, &e):
		return nil, malformed(p, "", 0, err.Error())
	case errors.Is(err, pjson.ErrInvalidUTF8):
		return nil, malformed(p, "", int64(e.Offset), "invalid UTF-8")
	default:
		off := e.Offset
		if off < len(body) {
			off++ // encoding/json counts the offending byte as read
		}
		return nil, malformed(p, "", int64(off), e.Detail)
	}
	if doc.Members == nil && !strings.HasPrefix(strings.TrimLeft(body, " \t\r\n"), "{") {
		return nil, malformed(p, "", 0, "the body is not a JSON object")
	}
	r := &root{s: body, members: doc.Members}
	seen := make(map[string]bool, len(doc.Members))
	for _, m := range doc.Members {
		if seen[m.Key] && r.twice == "" {
			r.twice = m.Key
		}
		seen[m.Key] = true
	}
	return r, nil
}

// get returns obj's key, refusing a key that appears twice: decoders
// differ on which one wins, so a duplicate could show the verifier one
// text and the provider another.
func (r reader) get(obj node, path, key string) (node, error) {
	if !obj.isObject() {
		return node{}, nil
	}
	var out node
	n := 0
	obj.each(func(k string, v node) bool {
		if pjson.Unquote(k) == key {
			out = v
			n++
		}
		return n < 2
	})
	if n > 1 {
		return out, r.bad(join(path, key), "the key appears more than once")
	}
	return out, nil
}

// fields reads the members of obj named keys into out, out[i] for
// keys[i] (an absent one left empty), in one walk of obj, refusing a key
// of them that appears twice, as get does.
func (r reader) fields(obj node, path string, keys []string, out []node) error {
	clear(out)
	if !obj.isObject() {
		return nil
	}
	var err error
	obj.each(func(k string, v node) bool {
		key := pjson.Unquote(k)
		for i, want := range keys {
			if key != want {
				continue
			}
			if out[i].exists() {
				err = r.bad(join(path, want), "the key appears more than once")
				return false
			}
			out[i] = v
		}
		return true
	})
	return err
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// text reads a text block or part: an object whose type, when present, is
// one of types, and whose text is a string.
func (r reader) text(v node, path string, types ...string) (string, error) {
	if !v.isObject() {
		return "", r.bad(path, "want a %s block, got %s", types[0], kind(v))
	}
	t, err := r.get(v, path, "type")
	if err != nil {
		return "", err
	}
	if t.exists() {
		ok := false
		for _, want := range types {
			ok = ok || (t.isString() && t.str() == want)
		}
		if !ok {
			return "", r.bad(join(path, "type"), "block type %s, want %s", quoteRaw(t), strings.Join(types, " or "))
		}
	}
	s, err := r.get(v, path, "text")
	if err != nil {
		return "", err
	}
	if !s.isString() {
		return "", r.bad(join(path, "text"), "want a string, got %s", kind(s))
	}
	return s.str(), nil
}

// kind names a JSON value's type for messages.
func kind(v node) string {
	if !v.exists() {
		return "nothing"
	}
	switch c := v.raw[0]; {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	}
	return "a number"
}

// quoteRaw is a value as an error message shows it: a string redacted and
// cut short (internal/redact.Quote), anything else by its kind.
func quoteRaw(v node) string {
	if v.isString() {
		return redact.Quote(v.str())
	}
	return kind(v)
}
