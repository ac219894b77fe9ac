package options

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// display returns v as Harn shows a value used as text (VmValue::display):
// a string as itself, nil as "nil", a bool as true or false, an integer in
// decimal, a float with at least one decimal (2.0) unless it is a whole
// number of 1e15 or more, a list as [a, b] and an object as {k: v, ...}
// with its keys in byte order (Harn's dicts are ordered maps). JSON numbers
// become Harn values as serde_json reads them: an integer literal that fits
// an i64 is an int, anything else (a fraction, an exponent, -0, an integer
// past the i64 range) a float.
func (r *reader) display(v gjson.Result) string {
	if v.Type == gjson.String {
		return v.String()
	}
	var b strings.Builder
	r.writeDisplay(&b, v)
	return b.String()
}

func (r *reader) writeDisplay(b *strings.Builder, v gjson.Result) {
	switch {
	case v.IsArray():
		b.WriteByte('[')
		i := 0
		r.each(v, func(_, item gjson.Result) bool {
			if i > 0 {
				b.WriteString(", ")
			}
			r.writeDisplay(b, item)
			i++
			return true
		})
		b.WriteByte(']')
		return
	case v.IsObject():
		type kv struct {
			k string
			v gjson.Result
		}
		var entries []kv
		r.each(v, func(k, val gjson.Result) bool {
			entries = append(entries, kv{k.String(), val})
			return true
		})
		sort.SliceStable(entries, func(i, j int) bool { return entries[i].k < entries[j].k })
		b.WriteByte('{')
		for i, e := range entries {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(e.k)
			b.WriteString(": ")
			r.writeDisplay(b, e.v)
		}
		b.WriteByte('}')
		return
	}
	switch v.Type {
	case gjson.String:
		b.WriteString(v.String())
	case gjson.Null:
		b.WriteString("nil")
	case gjson.True:
		b.WriteString("true")
	case gjson.False:
		b.WriteString("false")
	case gjson.Number:
		b.WriteString(displayNumber(v.Raw))
	}
}

// displayNumber shows a JSON number literal as Harn would once serde_json
// has made it an int or a float.
func displayNumber(raw string) string {
	if i, ok := intLiteral(raw); ok {
		return strconv.FormatInt(i, 10)
	}
	f, _ := strconv.ParseFloat(raw, 64)
	return displayFloat(f)
}

// intLiteral reports whether raw is an integer literal serde_json reads as
// an i64, and its value. "-0" is not: serde_json reads it as the float -0.0.
func intLiteral(raw string) (int64, bool) {
	if strings.ContainsAny(raw, ".eE") || raw == "-0" {
		return 0, false
	}
	i, err := strconv.ParseInt(raw, 10, 64)
	return i, err == nil
}

// displayFloat is Rust's formatting of an f64 as Harn applies it: "{:.1}"
// for a whole number under 1e15 in magnitude, else the shortest decimal that
// reads back the same, never in exponent form.
func displayFloat(f float64) string {
	if math.Abs(f) < 1e15 && f == math.Trunc(f) {
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}
