package transcript

import (
	"strconv"
	"strings"

	pjson "github.com/promptloom/promptloom/internal/json"
)

// The types of a JSON value, as value reads them.
type jsonType uint8

const (
	jNull   jsonType = iota // null, or (Raw "") no value at all
	jFalse                  // false
	jNumber                 // a number
	jString                 // a string
	jTrue                   // true
	jJSON                   // an object or an array
)

// value is one JSON value of a line, read with internal/json where a rule
// asks for it: its type, its exact text (Raw: "" when there is no such
// value), and a string's decoded text (Str). The verifier reads a line
// only once internal/json has checked it (valid, UTF-8, no key twice, no
// half surrogate), so a value never needs to say why it does not read.
type value struct {
	Type jsonType
	Raw  string
	Str  string
}

// parse reads raw, one JSON value (white space around it allowed).
func parse(raw string) value {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return value{}
	}
	switch raw[0] {
	case '{', '[':
		return value{Type: jJSON, Raw: raw}
	case '"':
		return value{Type: jString, Raw: raw, Str: pjson.Unquote(raw)}
	case 't':
		return value{Type: jTrue, Raw: raw}
	case 'f':
		return value{Type: jFalse, Raw: raw}
	case 'n':
		return value{Type: jNull, Raw: raw}
	}
	return value{Type: jNumber, Raw: raw}
}

// Exists reports whether there is a value (null is one).
func (v value) Exists() bool { return v.Type != jNull || v.Raw != "" }

// IsObject reports whether v is a JSON object.
func (v value) IsObject() bool { return v.Type == jJSON && v.Raw[0] == '{' }

// IsArray reports whether v is a JSON array.
func (v value) IsArray() bool { return v.Type == jJSON && v.Raw[0] == '[' }

// Get is the value at path, member names separated by dots, or no value
// when one of them is missing or v is not an object.
func (v value) Get(path string) value {
	for {
		if !v.IsObject() {
			return value{}
		}
		key, rest, nested := strings.Cut(path, ".")
		found := false
		it := pjson.NewIter(v.Raw)
		for {
			k, _, val, _, ok := it.Next()
			if !ok {
				break
			}
			if pjson.Unquote(k) == key {
				v, found = parse(val), true
				break
			}
		}
		if !found {
			return value{}
		}
		if !nested {
			return v
		}
		path = rest
	}
}

// ForEach calls fn with each member of an object (its key a string
// value), each item of an array (no key), or, for any other value, the
// value itself once; for no value, never. It stops when fn returns false.
func (v value) ForEach(fn func(key, val value) bool) {
	if !v.Exists() {
		return
	}
	if v.Type != jJSON {
		fn(value{}, v)
		return
	}
	it := pjson.NewIter(v.Raw)
	for {
		k, _, val, _, ok := it.Next()
		if !ok {
			return
		}
		var key value
		if k != "" {
			key = parse(k)
		}
		if !fn(key, parse(val)) {
			return
		}
	}
}

// Array is the items of an array, none for no value, and any other value
// alone.
func (v value) Array() []value {
	var out []value
	v.ForEach(func(_, item value) bool {
		out = append(out, item)
		return true
	})
	return out
}

// Int is v as an integer: a number's (truncated when it has a fraction),
// a string's digits, 1 for true, else 0.
func (v value) Int() int64 {
	switch v.Type {
	case jTrue:
		return 1
	case jString:
		n, _ := strconv.ParseInt(v.Str, 10, 64)
		return n
	case jNumber:
		if n, err := strconv.ParseInt(v.Raw, 10, 64); err == nil {
			return n
		}
		f, _ := strconv.ParseFloat(v.Raw, 64)
		return int64(f)
	}
	return 0
}

// String is v as text: a string's decoded text, a number, object or
// array as written, "true" or "false", and "" for null or no value.
func (v value) String() string {
	switch v.Type {
	case jString:
		return v.Str
	case jTrue:
		return "true"
	case jFalse:
		return "false"
	case jNull:
		return ""
	case jNumber:
		if strings.Trim(strings.TrimPrefix(v.Raw, "-"), "0123456789") != "" {
			// A fraction or an exponent: the number, as a double says it.
			if f, err := strconv.ParseFloat(v.Raw, 64); err == nil {
				return strconv.FormatFloat(f, 'f', -1, 64)
			}
		}
	}
	return v.Raw
}
