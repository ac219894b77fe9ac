package template

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	canon "github.com/promptloom/promptloom/internal/json"
)

// Values are Harn's VmValue as JSON bindings can make them: nil, bool,
// int64, float64, string, []any (a list) and *dict. Numbers keep the kind
// serde_json gives them: an integer literal that fits in an i64 is an int,
// anything else (a fraction, an exponent, -0, an integer past i64) a float.

// dict is a Harn dict: a BTreeMap, so its keys are always in byte order.
type dict struct {
	keys []string
	vals []any
}

func (d *dict) get(k string) (any, bool) {
	if len(d.keys) <= 8 {
		for i, key := range d.keys {
			if key == k {
				return d.vals[i], true
			}
		}
		return nil, false
	}
	i, ok := slices.BinarySearch(d.keys, k)
	if !ok {
		return nil, false
	}
	return d.vals[i], true
}

// loopKeys are the keys of the loop dict, in order.
var loopKeys = []string{"first", "index", "index0", "last", "length"}

func loopDict(i, n int) *dict {
	return &dict{keys: loopKeys, vals: []any{i == 0, int64(i + 1), int64(i), i == n-1, int64(n)}}
}

// decodeBindings reads a JSON object of bindings; empty input or null is
// no bindings.
func decodeBindings(raw []byte) (*dict, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	if i := canon.InvalidUTF8(raw); i >= 0 {
		return nil, fmt.Errorf("invalid UTF-8 at byte %d", i)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("more than one JSON value")
	}
	switch t := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return fromJSON(t).(*dict), nil
	}
	return nil, fmt.Errorf("bindings must be a JSON object, got %s", typeName(fromJSON(v)))
}

func fromJSON(v any) any {
	switch t := v.(type) {
	case json.Number:
		return number(string(t))
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = fromJSON(x)
		}
		return out
	case map[string]any:
		d := &dict{keys: make([]string, 0, len(t)), vals: make([]any, len(t))}
		for k := range t {
			d.keys = append(d.keys, k)
		}
		slices.Sort(d.keys)
		for i, k := range d.keys {
			d.vals[i] = fromJSON(t[k])
		}
		return d
	}
	return v // nil, bool, string
}

// number is a JSON number as Harn's bindings see it (serde_json, then
// as_i64 or as_f64).
func number(tok string) any {
	if !strings.ContainsAny(tok, ".eE") && tok != "-0" {
		if i, err := strconv.ParseInt(tok, 10, 64); err == nil {
			return i
		}
	}
	f, _ := strconv.ParseFloat(tok, 64)
	return f
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "nil"
	case bool:
		return "bool"
	case int64:
		return "int"
	case float64:
		return "float"
	case string:
		return "string"
	case []any:
		return "list"
	}
	return "dict"
}

// truthy is the template's truthiness: nil, false, 0, 0.0, a blank string
// and an empty list or dict are false.
func truthy(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case bool:
		return t
	case int64:
		return t != 0
	case float64:
		return t != 0
	case string:
		return strings.TrimSpace(t) != ""
	case []any:
		return len(t) > 0
	case *dict:
		return len(t.keys) > 0
	}
	return true
}

// appendDisplay appends v as Harn displays a value (VmValue::display): a
// nil inside a list or dict is "nil"; the template's top-level nil is ""
// (see display).
func appendDisplay(dst []byte, v any) []byte {
	switch t := v.(type) {
	case nil:
		return append(dst, "nil"...)
	case bool:
		return strconv.AppendBool(dst, t)
	case int64:
		return strconv.AppendInt(dst, t, 10)
	case float64:
		return appendRustFloat(dst, t)
	case string:
		return append(dst, t...)
	case []any:
		dst = append(dst, '[')
		for i, x := range t {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendDisplay(dst, x)
		}
		return append(dst, ']')
	case *dict:
		dst = append(dst, '{')
		for i, k := range t.keys {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = append(dst, k...)
			dst = append(dst, ": "...)
			dst = appendDisplay(dst, t.vals[i])
		}
		return append(dst, '}')
	}
	return dst
}

// display is the text an interpolation writes: nil is empty.
func display(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case int64:
		return strconv.FormatInt(t, 10)
	}
	return string(appendDisplay(nil, v))
}

// appendRustFloat writes f as Harn displays a float: a whole number below
// 1e15 with one decimal ("3.0"), anything else in Rust's Display (the
// shortest digits, never an exponent).
func appendRustFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.AppendFloat(dst, f, 'f', 1, 64)
	}
	return strconv.AppendFloat(dst, f, 'f', -1, 64)
}

// equal is Harn's values_equal for these values: ints and floats compare
// by value across kinds, lists and dicts element by element.
func equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case int64:
		switch y := b.(type) {
		case int64:
			return x == y
		case float64:
			return float64(x) == y
		}
	case float64:
		switch y := b.(type) {
		case float64:
			return x == y
		case int64:
			return x == float64(y)
		}
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case *dict:
		y, ok := b.(*dict)
		if !ok || len(x.keys) != len(y.keys) {
			return false
		}
		for i, k := range x.keys {
			if k != y.keys[i] || !equal(x.vals[i], y.vals[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// compare orders numbers (across int and float) and strings (by bytes);
// ok is false for anything else, and for NaN.
func compare(a, b any) (int, bool) {
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return cmpOrdered(x, y), true
		case float64:
			return cmpFloat(float64(x), y)
		}
	case float64:
		switch y := b.(type) {
		case float64:
			return cmpFloat(x, y)
		case int64:
			return cmpFloat(x, float64(y))
		}
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), true
		}
	}
	return 0, false
}

func cmpOrdered[T int64 | float64](x, y T) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func cmpFloat(x, y float64) (int, bool) {
	if math.IsNaN(x) || math.IsNaN(y) {
		return 0, false
	}
	return cmpOrdered(x, y), true
}

// jsonWriter writes a value as serde_json does (Harn's json filter and
// section payloads): compact, or pretty with two-space indents; keys in
// order; floats in ryu's form and non-finite ones as null. It stops, with
// over set, once the text passes limit bytes.
type jsonWriter struct {
	buf    []byte
	pretty bool
	limit  int
	over   bool
}

func (w *jsonWriter) value(v any, indent int) {
	if w.over {
		return
	}
	if len(w.buf) > w.limit {
		w.over = true
		return
	}
	switch t := v.(type) {
	case nil:
		w.buf = append(w.buf, "null"...)
	case bool:
		w.buf = strconv.AppendBool(w.buf, t)
	case int64:
		w.buf = strconv.AppendInt(w.buf, t, 10)
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			w.buf = append(w.buf, "null"...)
		} else {
			w.buf = canon.AppendFloat(w.buf, t)
		}
	case string:
		w.buf = canon.AppendString(w.buf, t)
	case []any:
		if len(t) == 0 {
			w.buf = append(w.buf, "[]"...)
			return
		}
		w.buf = append(w.buf, '[')
		for i, x := range t {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.newline(indent + 1)
			w.value(x, indent+1)
		}
		w.newline(indent)
		w.buf = append(w.buf, ']')
	case *dict:
		if len(t.keys) == 0 {
			w.buf = append(w.buf, "{}"...)
			return
		}
		w.buf = append(w.buf, '{')
		for i, k := range t.keys {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.newline(indent + 1)
			w.buf = canon.AppendString(w.buf, k)
			w.buf = append(w.buf, ':')
			if w.pretty {
				w.buf = append(w.buf, ' ')
			}
			w.value(t.vals[i], indent+1)
		}
		w.newline(indent)
		w.buf = append(w.buf, '}')
	}
}

func (w *jsonWriter) newline(indent int) {
	if !w.pretty {
		return
	}
	w.buf = append(w.buf, '\n')
	for range indent {
		w.buf = append(w.buf, "  "...)
	}
}

// toJSON is v as serde_json writes it, or false when it passes limit.
func toJSON(v any, pretty bool, limit int) (string, bool) {
	w := &jsonWriter{pretty: pretty, limit: limit}
	w.value(v, 0)
	if w.over || len(w.buf) > limit {
		return "", false
	}
	return string(w.buf), true
}
