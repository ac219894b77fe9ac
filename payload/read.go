package payload

import (
	"fmt"
	"strings"

	"github.com/promptloom/promptloom/harn/redact"

	"github.com/tidwall/gjson"
)

// reader reads one provider's fields, failing on the first wrong one.
type reader struct{ p Provider }

func (r reader) bad(path, format string, args ...any) error {
	return &Error{Kind: ErrMalformed, Provider: r.p, Path: path, Msg: fmt.Sprintf(format, args...)}
}

// get returns obj's key, refusing a key that appears twice: decoders
// differ on which one wins, so a duplicate could show the verifier one
// text and the provider another.
func (r reader) get(obj gjson.Result, path, key string) (gjson.Result, error) {
	var out gjson.Result
	n := 0
	obj.ForEach(func(k, v gjson.Result) bool {
		if k.Str == key {
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

// absent: missing or null.
func absent(v gjson.Result) bool { return !v.Exists() || v.Type == gjson.Null }

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// text reads a text block or part: an object whose type, when present, is
// one of types, and whose text is a string.
func (r reader) text(v gjson.Result, path string, types ...string) (string, error) {
	if !v.IsObject() {
		return "", r.bad(path, "want a %s block, got %s", types[0], kind(v))
	}
	t, err := r.get(v, path, "type")
	if err != nil {
		return "", err
	}
	if t.Exists() {
		ok := false
		for _, want := range types {
			ok = ok || (t.Type == gjson.String && t.Str == want)
		}
		if !ok {
			return "", r.bad(join(path, "type"), "block type %s, want %s", quoteRaw(t), strings.Join(types, " or "))
		}
	}
	s, err := r.get(v, path, "text")
	if err != nil {
		return "", err
	}
	if s.Type != gjson.String {
		return "", r.bad(join(path, "text"), "want a string, got %s", kind(s))
	}
	return s.Str, nil
}

// kind names a JSON value's type for messages.
func kind(v gjson.Result) string {
	switch {
	case !v.Exists():
		return "nothing"
	case v.IsObject():
		return "an object"
	case v.IsArray():
		return "an array"
	}
	switch v.Type {
	case gjson.String:
		return "a string"
	case gjson.Number:
		return "a number"
	case gjson.True, gjson.False:
		return "a boolean"
	}
	return "null"
}

// quoteRaw is a value as an error message shows it: a string redacted and
// cut short (redact.Quote), anything else by its kind.
func quoteRaw(v gjson.Result) string {
	if v.Type == gjson.String {
		return redact.Quote(v.Str)
	}
	return kind(v)
}
