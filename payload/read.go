package payload

import (
	"errors"
	"fmt"
	"strings"

	"github.com/promptloom/promptloom/harn/redact"
	pjson "github.com/promptloom/promptloom/internal/json"

	"github.com/tidwall/gjson"
)

// reader reads one provider's fields, failing on the first wrong one.
type reader struct{ p Provider }

func (r reader) bad(path, format string, args ...any) error {
	return &Error{Kind: ErrMalformed, Provider: r.p, Path: path, Msg: fmt.Sprintf(format, args...)}
}

// checkBody refuses a body that is not JSON every reader reads alike
// before gjson reads it: the syntax as encoding/json words and places it
// (the offset counting the offending byte), and bytes that are not UTF-8
// (encoding/json reads them as U+FFFD where gjson keeps them, so a text
// could be one thing to the verifier and another to a decoder). The check
// is iterative and stops at depth 10,000, where gjson's validator recurses.
// A key given twice is refused where it is read (get), naming the provider's
// field; elsewhere in the body, as a number past float range, it is the
// provider's to judge.
func checkBody(body []byte, p Provider) error {
	err := pjson.Check(body, &pjson.Options{LoneSurrogates: true, DuplicateKeys: true, LargeNumbers: true})
	var e *pjson.Error
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &e):
		return malformed(p, "", 0, err.Error())
	case errors.Is(err, pjson.ErrInvalidUTF8):
		return malformed(p, "", int64(e.Offset), "invalid UTF-8")
	}
	off := e.Offset
	if off < len(body) {
		off++ // encoding/json counts the offending byte as read
	}
	return malformed(p, "", int64(off), e.Detail)
}

// get returns obj's key, refusing a key that appears twice: decoders
// differ on which one wins, so a duplicate could show the verifier one
// text and the provider another.
func (r reader) get(obj gjson.Result, path, key string) (gjson.Result, error) {
	if !obj.IsObject() {
		return gjson.Result{}, nil
	}
	var out gjson.Result
	n := 0
	pjson.Each(obj.Raw, func(k string, _ int, v string, at int) bool {
		if pjson.Unquote(k) == key {
			out = gjson.Parse(v)
			out.Index = obj.Index + at
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
