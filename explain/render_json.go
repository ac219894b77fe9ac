package explain

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strings"
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
			el := fv.Index(j).Interface()
			if r, ok := el.(Row); ok {
				el = r.wire() // what Row.MarshalJSON writes, without encoding it twice
			}
			if err := encode(el, 2); err != nil {
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
