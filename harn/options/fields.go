package options

import (
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/promptloom/promptloom/budget"

	"github.com/tidwall/gjson"
)

// object is a JSON object's members, sorted by key in byte order: the
// order Harn's dicts (ordered maps) iterate in, so the first offending key is
// the one Harn would name. Keys are unique: checkDocument has rejected a key
// given twice. Objects here are small, so lookups are linear.
type object struct {
	keys []string
	vals []gjson.Result
}

func members(v gjson.Result) object {
	o := object{keys: make([]string, 0, 8), vals: make([]gjson.Result, 0, 8)}
	each(v, func(k, val gjson.Result) bool {
		o.keys = append(o.keys, k.String())
		o.vals = append(o.vals, val)
		return true
	})
	o.sort()
	return o
}

// sort puts the members in key order.
func (o object) sort() {
	if !sort.StringsAreSorted(o.keys) {
		sort.Sort(byKey(o))
	}
}

type byKey object

func (b byKey) Len() int           { return len(b.keys) }
func (b byKey) Less(i, j int) bool { return b.keys[i] < b.keys[j] }
func (b byKey) Swap(i, j int) {
	b.keys[i], b.keys[j] = b.keys[j], b.keys[i]
	b.vals[i], b.vals[j] = b.vals[j], b.vals[i]
}

func (o object) get(key string) (gjson.Result, bool) {
	for i, k := range o.keys {
		if k == key {
			return o.vals[i], true
		}
	}
	return gjson.Result{}, false
}

// firstUnknown returns the first key (in byte order) not in known.
func (o object) firstUnknown(known ...string) (string, bool) {
	for _, k := range o.keys {
		found := false
		for _, n := range known {
			if k == n {
				found = true
				break
			}
		}
		if !found {
			return k, true
		}
	}
	return "", false
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

// stringList reads a strict list of strings (the reminders extension).
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
	each(v, func(_, item gjson.Result) bool {
		err = fn(i, item)
		i++
		return err == nil
	})
	return err
}

// parseRegister reads a register name; null is binding. path is called
// only for an error, so the usual item builds no path string.
func parseRegister(v gjson.Result, path func() string) (budget.Register, error) {
	switch v.Type {
	case gjson.Null:
		return budget.Binding, nil
	case gjson.String:
		if r, err := budget.ParseRegister(v.Str); err == nil {
			return r, nil
		}
		return budget.Binding, errorf(ErrValue, path(), v.Index, "unknown register %s (want one of binding, considered, craft, generated)", quote(v.Str))
	}
	return budget.Binding, errorf(ErrType, path(), v.Index, "must be a string, got %s", kind(v))
}

// parseInt reads an integer from -2^63 to 2^63-1 (what names it in the
// error for one outside that range); null is 0. A fraction or an exponent
// is the wrong type. path is called only for an error.
func parseInt(v gjson.Result, path func() string, what string) (int, error) {
	if v.Type == gjson.Null {
		return 0, nil
	}
	if v.Type != gjson.Number || strings.ContainsAny(v.Raw, ".eE") {
		return 0, errorf(ErrType, path(), v.Index, "must be an integer, got %s", clip(v.Raw))
	}
	i, err := strconv.ParseInt(v.Raw, 10, 64)
	if err != nil || int64(int(i)) != i {
		return 0, errorf(ErrValue, path(), v.Index, "%s is out of range: %s is an integer from -2^63 to 2^63-1", clip(v.Raw), what)
	}
	return int(i), nil
}

// at is the path of key under the item at path, built when called.
func at(path func() string, key string) func() string {
	return func() string { return field(path(), key) }
}

// is is a path already built.
func is(path string) func() string { return func() string { return path } }

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
		return "a number (" + clip(v.Raw) + ")"
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
