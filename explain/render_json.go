package explain

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	canon "github.com/promptloom/promptloom/internal/json"
)

// writeStreamed writes v, a struct, exactly as writeJSON would (indented by
// two spaces, no HTML escaping, a final newline), but one field at a time
// and the elements of its slice fields one at a time, so the whole document
// is never held in memory: a 10,000-fragment explanation is encoded in
// pieces of one row each. TestWriteJSONStreams holds the bytes to
// writeJSON's.
func writeStreamed(w io.Writer, v any) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	// encode writes one value as it stands at depth in the document:
	// encoding/json indents a nested value's lines by the prefix, and
	// leaves its first line to the caller.
	encode := func(x any, depth int) error {
		buf.Reset()
		enc.SetIndent(strings.Repeat("  ", depth), "  ")
		if err := enc.Encode(x); err != nil {
			return err
		}
		_, err := bw.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		return err
	}
	var scratch []byte
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		rv = rv.Elem()
	}
	rt := rv.Type()
	bw.WriteString("{")
	first := true
	for i := range rt.NumField() {
		f := rt.Field(i)
		name, omitEmpty, ok := jsonField(f)
		if !ok {
			continue
		}
		fv := rv.Field(i)
		if omitEmpty && isEmptyValue(fv) {
			continue
		}
		if !first {
			bw.WriteString(",")
		}
		first = false
		key, _ := json.Marshal(name)
		bw.WriteString("\n  ")
		bw.Write(key)
		bw.WriteString(": ")
		// Scalars and rows are written here; encoding/json, whose
		// indenting pass reads every byte again, writes the rest (small
		// values: the budget, traces, lint, reminders, the actor chain).
		switch x := fv.Interface().(type) {
		case string:
			scratch = appendString(scratch[:0], x)
			bw.Write(scratch)
			continue
		case *string:
			if x == nil {
				bw.WriteString("null")
			} else {
				scratch = writeString(bw, scratch, *x)
			}
			continue
		case int:
			bw.Write(strconv.AppendInt(scratch[:0], int64(x), 10))
			continue
		case []Row:
			if len(x) == 0 {
				break
			}
			bw.WriteString("[")
			for j := range x {
				if j > 0 {
					bw.WriteString(",")
				}
				scratch = appendRow(append(scratch[:0], "\n    "...), &x[j])
				bw.Write(scratch)
			}
			bw.WriteString("\n  ]")
			continue
		}
		if fv.Kind() != reflect.Slice || fv.IsNil() || fv.Len() == 0 || fv.Type().Elem().Kind() != reflect.Struct {
			if err := encode(fv.Interface(), 1); err != nil {
				return err
			}
			continue
		}
		bw.WriteString("[")
		for j := range fv.Len() {
			if j > 0 {
				bw.WriteString(",")
			}
			bw.WriteString("\n    ")
			if err := encode(fv.Index(j).Interface(), 2); err != nil {
				return err
			}
		}
		bw.WriteString("\n  ]")
	}
	if first {
		bw.WriteString("}\n")
	} else {
		bw.WriteString("\n}\n")
	}
	return bw.Flush()
}

// jsonField reads a field's json tag as encoding/json does, for the tags
// this package's types use: a name, perhaps omitempty, or "-".
func jsonField(f reflect.StructField) (name string, omitEmpty, ok bool) {
	if !f.IsExported() || f.Anonymous {
		return "", false, false
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false, false
	}
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name, opts == "omitempty", true
}

// isEmptyValue is encoding/json's test for omitempty.
func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// appendRow appends r as encoding/json writes its wire form (rowJSON)
// indented at depth 2 of the document: the hot loop of a large
// explanation, written without reflection or a second indenting pass.
func appendRow(b []byte, row *Row) []byte {
	const field = "\n      " // a member's line at depth 3
	r := row.segment()
	str := func(name, v string) {
		b = append(b, field...)
		b = append(b, name...)
		b = appendString(b, v)
	}
	num := func(name string, v int) {
		b = append(b, field...)
		b = append(b, name...)
		b = strconv.AppendInt(b, int64(v), 10)
	}
	b = append(b, '{')
	str(`"id": `, r.ID)
	b = append(b, ',')
	str(`"source": `, row.Source)
	b = append(b, ',')
	str(`"producer": `, r.Producer)
	b = append(b, ',')
	str(`"bucket": `, r.Bucket)
	b = append(b, ',')
	b = append(b, field...)
	b = strconv.AppendBool(append(b, `"included": `...), r.Included)
	b = append(b, ',')
	str(`"reason": `, r.Reason)
	b = append(b, ',')
	num(`"bytes": `, r.Bytes)
	if row.Offset != nil {
		b = append(b, ',')
		num(`"offset": `, *row.Offset)
	}
	b = append(b, ',')
	str(`"digest": `, r.Digest.String())
	if r.Register != "" {
		b = append(b, ',')
		str(`"register": `, r.Register)
	}
	if r.Rank != nil {
		b = append(b, ',')
		num(`"rank": `, *r.Rank)
	}
	if len(r.Sources) > 0 {
		b = append(b, ',')
		b = append(b, field...)
		b = append(b, `"sources": [`...)
		for i, s := range r.Sources {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(append(b, "\n        "...), s)
		}
		b = append(b, "\n      ]"...)
	}
	if r.Tokens != nil {
		b = append(b, ',')
		num(`"tokens": `, *r.Tokens)
	}
	return append(b, "\n    }"...)
}

// writeString writes s as appendString writes it, a piece at a time
// through scratch (returned for reuse), so a prompt of megabytes is never
// held twice. Pieces end before a byte that starts a character, where
// escaping one piece after another gives what escaping the whole gives.
func writeString(w *bufio.Writer, scratch []byte, s string) []byte {
	const piece = 32 << 10
	w.WriteByte('"')
	for len(s) > 0 {
		n := min(len(s), piece)
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		scratch = appendEscaped(scratch[:0], s[:n])
		w.Write(scratch)
		s = s[n:]
	}
	w.WriteByte('"')
	return scratch
}

// appendString appends s as a JSON string exactly as encoding/json writes it
// with HTML escaping off: quote, backslash and control bytes escaped (\b,
// \f, \n, \r, \t by name), invalid UTF-8 as \ufffd, and U+2028 and U+2029
// escaped. TestAppendString holds it to encoding/json.
func appendString(b []byte, s string) []byte {
	return append(appendEscaped(append(b, '"'), s), '"')
}

// appendEscaped is appendString without the quotes.
func appendEscaped(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = canon.AppendEscape(append(b, s[start:i]...), c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', byte('0'+r&0xF))
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(b, s[start:]...)
}
