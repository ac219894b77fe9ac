package options

import (
	"errors"
	"strings"

	pjson "github.com/promptloom/promptloom/internal/json"

	"github.com/tidwall/gjson"
)

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
		return errorf(ErrSyntax, "", 0, "malformed JSON: %v", err)
	}
	switch {
	case errors.Is(e, pjson.ErrInvalidUTF8):
		return errorf(ErrInvalidUTF8, "", e.Offset, "invalid UTF-8")
	case errors.Is(e, pjson.ErrDuplicateKey):
		return errorf(ErrDuplicateKey, stepsPath(e.Steps), e.Offset, "key given twice")
	case errors.Is(e, pjson.ErrRange):
		return errorf(ErrValue, stepsPath(e.Steps), e.Offset, "number %s is out of range", quote(e.Value))
	case errors.Is(e, pjson.ErrTrailing):
		return errorf(ErrSyntax, "", trailingOffset(s, e.Offset), "malformed JSON: data after the top-level value")
	case e.Offset == len(s) && strings.Trim(s, " \t\r\n") == "":
		return errorf(ErrSyntax, "", e.Offset, "malformed JSON: EOF")
	case e.Offset == len(s):
		return errorf(ErrSyntax, "", e.Offset, "malformed JSON: unexpected EOF")
	}
	return errorf(ErrSyntax, "", e.Offset+1, "malformed JSON: %s", e.Detail)
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
// Index), but faster: internal/json's Each finds the ends of strings with a
// vectorised search and reads a container once where gjson reads it twice.
// v.Raw must be JSON Parse has checked. Numbers, literals and strings with
// an escape are read by gjson itself, so the values are gjson's to the
// byte (TestEachAgrees, FuzzEach).
func each(v gjson.Result, fn func(key, val gjson.Result) bool) {
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
			key = readString(k, keyAt+v.Index)
		} else {
			key.Num++
		}
		if !fn(key, readValue(val, valAt+v.Index)) {
			return
		}
	}
}

// readValue is the Result gjson gives for one whole value, raw, found at
// offset at of the document.
func readValue(raw string, at int) gjson.Result {
	switch raw[0] {
	case '"':
		return readString(raw, at)
	case '{', '[':
		return gjson.Result{Type: gjson.JSON, Raw: raw, Index: at}
	}
	r := gjson.Parse(raw)
	r.Index = at
	return r
}

// readString is a string's Result: a slice of the document when it has no
// escape, gjson's own unescaping when it has one.
func readString(raw string, at int) gjson.Result {
	if strings.IndexByte(raw, '\\') < 0 {
		return gjson.Result{Type: gjson.String, Raw: raw, Str: raw[1 : len(raw)-1], Index: at}
	}
	r := gjson.Parse(raw)
	r.Index = at
	return r
}
