package options

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"unicode"

	"github.com/promptloom/promptloom/fragment"
	"github.com/tidwall/gjson"
)

// bodyField reads a body given as "body" or "content", but not both.
type bodyField struct {
	key string
	val gjson.Result
}

func (b *bodyField) set(key string, val gjson.Result, path string) error {
	if b.key != "" {
		return errorf(ErrConflict, path, val.Index, "give either \"body\" or \"content\", not both")
	}
	b.key, b.val = key, val
	return nil
}

func (b *bodyField) get(path string, offset int) (string, error) {
	if b.key == "" {
		return "", errorf(ErrMissing, path, offset, "missing \"body\"")
	}
	return reqString(b.val, field(path, b.key))
}

// eachKey calls fn for each key of the object v, in order, and rejects a key
// given twice (JSON parsers disagree on which one wins).
func eachKey(v gjson.Result, path string, fn func(key string, val gjson.Result) error) error {
	var seen []string
	var err error
	v.ForEach(func(k, val gjson.Result) bool {
		key := k.String()
		for _, s := range seen {
			if s == key {
				err = errorf(ErrDuplicateKey, field(path, key), k.Index, "key given twice")
				return false
			}
		}
		seen = append(seen, key)
		err = fn(key, val)
		return err == nil
	})
	return err
}

func reqString(v gjson.Result, path string) (string, error) {
	if v.Type != gjson.String {
		return "", errorf(ErrType, path, v.Index, "must be a string, got %s", kind(v))
	}
	return v.String(), nil
}

func optString(v gjson.Result, path string) (string, error) {
	if !v.Exists() || v.Type == gjson.Null {
		return "", nil
	}
	return reqString(v, path)
}

func optBool(v gjson.Result, path string, def bool) (bool, error) {
	switch {
	case !v.Exists():
		return def, nil
	case v.Type == gjson.True:
		return true, nil
	case v.Type == gjson.False:
		return false, nil
	}
	return def, errorf(ErrType, path, v.Index, "must be true or false, got %s", kind(v))
}

func stringList(v gjson.Result, path string) ([]string, error) {
	if v.Type == gjson.Null {
		return nil, nil
	}
	if !v.IsArray() {
		return nil, errorf(ErrType, path, v.Index, "must be a list of strings, got %s", kind(v))
	}
	var out []string
	err := eachItem(v, func(i int, item gjson.Result) error {
		if item.Type != gjson.String {
			return errorf(ErrType, index(path, i), item.Index, "must be a string, got %s", kind(item))
		}
		if s := item.String(); s != "" {
			out = append(out, s)
		}
		return nil
	})
	return out, err
}

// eachItem calls fn with each item of the list v and its index, and stops
// at the first error.
func eachItem(v gjson.Result, fn func(i int, item gjson.Result) error) error {
	i := 0
	var err error
	v.ForEach(func(_, item gjson.Result) bool {
		err = fn(i, item)
		i++
		return err == nil
	})
	return err
}

func parseBucket(v gjson.Result, path string) (fragment.Bucket, error) {
	if !v.Exists() || v.Type == gjson.Null {
		return fragment.Before, nil
	}
	if v.Type == gjson.String {
		if b, ok := fragment.ParseBucket(v.String()); ok {
			return b, nil
		}
	}
	return fragment.Before, errorf(ErrValue, path, v.Index, "must be \"before\" or \"after\", got %s", v.Raw)
}

func parseRegister(v gjson.Result, path string) (fragment.Register, error) {
	if v.Type == gjson.Null {
		return fragment.Binding, nil
	}
	if v.Type != gjson.String {
		return fragment.Binding, errorf(ErrType, path, v.Index, "must be a string, got %s", kind(v))
	}
	r, err := fragment.ParseRegister(v.String())
	if err != nil {
		return r, errorf(ErrValue, path, v.Index, "%v", err)
	}
	return r, nil
}

func parseRank(v gjson.Result, path string) (int, error) {
	if v.Type == gjson.Null {
		return 0, nil
	}
	if v.Type != gjson.Number || strings.ContainsAny(v.Raw, ".eE") || v.Num != float64(int(v.Int())) {
		return 0, errorf(ErrType, path, v.Index, "must be an integer, got %s", v.Raw)
	}
	return int(v.Int()), nil
}

func kind(v gjson.Result) string {
	switch {
	case !v.Exists():
		return "nothing"
	case v.IsArray():
		return "a list"
	case v.IsObject():
		return "an object"
	}
	switch v.Type {
	case gjson.String:
		return "a string"
	case gjson.Number:
		return "a number (" + v.Raw + ")"
	case gjson.True, gjson.False:
		return "a boolean (" + v.Raw + ")"
	case gjson.Null:
		return "null"
	}
	return v.Type.String()
}

func isBlank(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return !unicode.IsSpace(r) }) < 0
}

// checkSyntax rejects malformed JSON with the offset encoding/json reports
// (gjson reads what it can and would not say where the input went wrong).
// json.Valid answers for well-formed input without copying it; only
// malformed input is read again, to say where.
func checkSyntax(data []byte) error {
	if json.Valid(data) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	err := dec.Decode(&raw)
	if err == nil {
		if _, err := dec.Token(); err != io.EOF {
			return errorf(ErrSyntax, "", int(dec.InputOffset()), "malformed JSON: data after the top-level value")
		}
		return nil
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return errorf(ErrSyntax, "", int(se.Offset), "malformed JSON: %s", se.Error())
	}
	return errorf(ErrSyntax, "", len(data), "malformed JSON: %s", err.Error())
}
