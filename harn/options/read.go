package options

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/budget"
	pjson "github.com/promptloom/promptloom/internal/json"

	"github.com/tidwall/gjson"
)

// Reading the document: internal/json checks it and walks it; gjson reads
// the values, so they are gjson's to the byte.

// readOptions is how Parse checks a document before reading it: as
// encoding/json reads it (a lone surrogate half is U+FFFD), refusing what
// no two readers agree on: a key given twice anywhere (a tool could be
// guided as one name and registered as another) and a number past float
// range (serde_json refuses it).
var readOptions = &pjson.Options{LoneSurrogates: true}

// malformed is the *Error for a document the JSON reader refused, worded
// and placed as options has always said it: the syntax as encoding/json's
// Decoder reports it (the offset counting the offending byte), a repeated
// key or a number out of range at its JSON path.
func malformed(s string, err error) *Error {
	var e *pjson.Error
	if !errors.As(err, &e) {
		return located(errorf(ErrMalformed, "", 0, "malformed JSON: %v", err))
	}
	switch {
	case errors.Is(e, pjson.ErrInvalidUTF8):
		return located(errorf(ErrMalformed, "", e.Offset, "invalid UTF-8"))
	case errors.Is(e, pjson.ErrDuplicateKey):
		return errorf(ErrMalformed, stepsPath(e.Steps), e.Offset, "key given twice")
	case errors.Is(e, pjson.ErrRange):
		return errorf(ErrMalformed, stepsPath(e.Steps), e.Offset, "number %s is out of range", quote(e.Value))
	case errors.Is(e, pjson.ErrTrailing):
		return located(errorf(ErrMalformed, "", trailingOffset(s, e.Offset), "malformed JSON: data after the top-level value"))
	case e.Offset == len(s) && strings.Trim(s, " \t\r\n") == "":
		return located(errorf(ErrMalformed, "", e.Offset, "malformed JSON: EOF"))
	case e.Offset == len(s):
		return located(errorf(ErrMalformed, "", e.Offset, "malformed JSON: unexpected EOF"))
	}
	return located(errorf(ErrMalformed, "", e.Offset+1, "malformed JSON: %s", e.Detail))
}

// trailingOffset is where encoding/json's Decoder, having read the
// document's value, says the data after it is: past an opening bracket,
// at a closing one or at a colon or comma, past a second complete value,
// else at its start t.
func trailingOffset(s string, t int) int {
	switch s[t] {
	case '[', '{':
		return t + 1
	case ']', '}', ':', ',':
		return t
	}
	if end, ok := pjson.ScalarEnd(s, t); ok {
		return end
	}
	return t
}

// stepsPath writes a JSON path as options' messages write it.
func stepsPath(steps []pjson.Step) string {
	p := ""
	for _, s := range steps {
		if s.Index >= 0 {
			p = index(p, s.Index)
		} else {
			p = field(p, s.Key)
		}
	}
	return p
}

// each calls fn for every member of an object or item of a list, with the
// Results gjson.Result.ForEach gives (Type, Raw, Str, Num and the absolute
// Index), but faster: internal/json's Iter finds the ends of strings with a
// vectorised search and reads a container once where gjson reads it twice,
// and what the check learned says which strings need unescaping. v.Raw
// must be JSON Parse has checked. Numbers, literals and strings with an
// escape are read by gjson itself, so the values are gjson's to the byte
// (TestEachAgrees, FuzzEach).
func (r *reader) each(v gjson.Result, fn func(key, val gjson.Result) bool) {
	if !v.Exists() {
		return
	}
	if v.Type != gjson.JSON {
		fn(gjson.Result{}, v)
		return
	}
	key := gjson.Result{Type: gjson.Number, Num: -1}
	for it := pjson.NewIter(v.Raw); ; {
		k, keyAt, val, valAt, ok := it.Next()
		if !ok {
			return
		}
		if keyAt >= 0 {
			key = r.readString(k, keyAt+v.Index)
		} else {
			key.Num++
		}
		if !fn(key, r.readValue(val, valAt+v.Index)) {
			return
		}
	}
}

// readValue is the Result gjson gives for one whole value, raw (a checked
// token or container), found at offset at of the document: gjson.Parse's
// fields, set as it sets them (a number's Num by strconv.ParseFloat).
func (r *reader) readValue(raw string, at int) gjson.Result {
	switch raw[0] {
	case '"':
		return r.readString(raw, at)
	case '{', '[':
		return gjson.Result{Type: gjson.JSON, Raw: raw, Index: at}
	case 't':
		return gjson.Result{Type: gjson.True, Raw: raw, Index: at}
	case 'f':
		return gjson.Result{Type: gjson.False, Raw: raw, Index: at}
	case 'n':
		return gjson.Result{Type: gjson.Null, Raw: raw, Index: at}
	}
	num, _ := strconv.ParseFloat(raw, 64)
	return gjson.Result{Type: gjson.Number, Raw: raw, Num: num, Index: at}
}

// key is the text of a key token found at offset at, as gjson reads it.
func (r *reader) key(tok string, at int) string {
	if len(r.doc.Escaped) == 0 || !r.doc.HasEscape(at) {
		return tok[1 : len(tok)-1]
	}
	return gjson.Parse(tok).Str
}

// readString is a string's Result: a slice of the document when it has no
// escape, gjson's own unescaping when it has one.
func (r *reader) readString(raw string, at int) gjson.Result {
	if len(r.doc.Escaped) == 0 || !r.doc.HasEscape(at) {
		return gjson.Result{Type: gjson.String, Raw: raw, Str: raw[1 : len(raw)-1], Index: at}
	}
	v := gjson.Parse(raw)
	v.Index = at
	return v
}

// object is a JSON object's members, sorted by key in byte order: the
// order Harn's dicts (ordered maps) iterate in, so the first offending key is
// the one Harn would name. Keys are unique: the check has refused a key
// given twice. Objects here are small, so lookups are linear.
type object struct {
	keys []string
	vals []gjson.Result
}

func (r *reader) members(v gjson.Result) object {
	o := object{keys: make([]string, 0, 8), vals: make([]gjson.Result, 0, 8)}
	r.each(v, func(k, val gjson.Result) bool {
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

// eachItem calls fn with each item of the list v and its index, and stops
// at the first error.
func (r *reader) eachItem(v gjson.Result, fn func(i int, item gjson.Result) error) error {
	i := 0
	var err error
	r.each(v, func(_, item gjson.Result) bool {
		err = fn(i, item)
		i++
		return err == nil
	})
	return err
}

// eachKey calls fn for each member of the object v, in input order, and
// stops at the first error.
func (r *reader) eachKey(v gjson.Result, fn func(key string, val gjson.Result) error) error {
	var err error
	r.each(v, func(k, val gjson.Result) bool {
		err = fn(k.String(), val)
		return err == nil
	})
	return err
}

func reqString(v gjson.Result, path string) (string, error) {
	if v.Type != gjson.String {
		return "", errorf(ErrInvalid, path, v.Index, "must be a string, got %s", kind(v))
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
	return def, errorf(ErrInvalid, path, v.Index, "must be true or false, got %s", kind(v))
}

// stringList reads a strict list of strings (the reminders extension).
func (r *reader) stringList(v gjson.Result, path string) ([]string, error) {
	if v.Type == gjson.Null {
		return nil, nil
	}
	if !v.IsArray() {
		return nil, errorf(ErrInvalid, path, v.Index, "must be a list of strings, got %s", kind(v))
	}
	var out []string
	err := r.eachItem(v, func(i int, item gjson.Result) error {
		if item.Type != gjson.String {
			return errorf(ErrInvalid, index(path, i), item.Index, "must be a string, got %s", kind(item))
		}
		if s := item.String(); s != "" {
			out = append(out, s)
		}
		return nil
	})
	return out, err
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
		return budget.Binding, errorf(ErrInvalid, path(), v.Index, "unknown register %s (want one of binding, considered, craft, generated)", quote(v.Str))
	}
	return budget.Binding, errorf(ErrInvalid, path(), v.Index, "must be a string, got %s", kind(v))
}

// parseInt reads an integer from -2^63 to 2^63-1 (what names it in the
// error for one outside that range); null is 0. A fraction or an exponent
// is the wrong type. path is called only for an error.
func parseInt(v gjson.Result, path func() string, what string) (int, error) {
	if v.Type == gjson.Null {
		return 0, nil
	}
	if v.Type != gjson.Number || strings.ContainsAny(v.Raw, ".eE") {
		return 0, errorf(ErrInvalid, path(), v.Index, "must be an integer, got %s", clip(v.Raw))
	}
	i, err := strconv.ParseInt(v.Raw, 10, 64)
	if err != nil || int64(int(i)) != i {
		return 0, errorf(ErrInvalid, path(), v.Index, "%s is out of range: %s is an integer from -2^63 to 2^63-1", clip(v.Raw), what)
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

// text returns v as Harn uses it as text (display), warning when v is not a
// string: Harn does not refuse it, but the text is rarely what was meant.
// textAt is text with the path built only when there is a warning.
func (r *reader) textAt(v gjson.Result, path func() string, key string) string {
	if v.Type == gjson.String {
		return v.String()
	}
	return r.text(v, field(path(), key))
}

func (r *reader) text(v gjson.Result, path string) string {
	if v.Type != gjson.String {
		r.warn(path, "%s is used as the text %s", kind(v), quote(r.display(v)))
	}
	return r.display(v)
}

// warn records a warning.
func (r *reader) warn(path, format string, args ...any) {
	r.o.Warnings = append(r.o.Warnings, promptloom.Warning{Path: path, Message: fmt.Sprintf(format, args...)})
}
