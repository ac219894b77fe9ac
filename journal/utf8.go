package journal

import (
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
)

// notUTF8 names the first string of v (a struct, and what it holds:
// pointers, slices, maps, byte slices) that is not UTF-8, as a path of
// JSON names ("tool_calls[0].name", with the byte where it goes wrong), or
// is "" when every string is. A transcript line is JSON, and a JSON string
// cannot hold such bytes: writing one would change them (to U+FFFD), so a
// journal refuses what it cannot record as it is. It walks every exported
// field, so a field added to Request or Response later is covered too.
func notUTF8(v any) string {
	// The paths are built only on a second walk, once the first found a
	// string to name: most values are UTF-8, and naming every field costs
	// more than checking it.
	if walkUTF8(reflect.ValueOf(v), nil, 0) == "" {
		return ""
	}
	return walkUTF8(reflect.ValueOf(v), new(string), 0)
}

// walkUTF8 is notUTF8's walk; path is where v is, or nil when the walk
// only says whether there is a string to name ("!": there is).
func walkUTF8(v reflect.Value, path *string, depth int) string {
	if depth > 32 || !v.IsValid() {
		return ""
	}
	at := func(suffix func() string) *string {
		if path == nil {
			return nil
		}
		p := *path + suffix()
		return &p
	}
	bad := func(s string) string {
		if utf8.ValidString(s) {
			return ""
		}
		if path == nil {
			return "!"
		}
		i := 0
		for i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		return fmt.Sprintf("%s (byte %d)", strings.TrimPrefix(*path, "."), i)
	}
	switch v.Kind() {
	case reflect.String:
		return bad(v.String())
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return ""
		}
		return walkUTF8(v.Elem(), path, depth+1)
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			if v.Kind() == reflect.Slice {
				if utf8.Valid(v.Bytes()) {
					return "" // checked in place: a body is not copied
				}
				return bad(string(v.Bytes()))
			}
			return "" // a fixed array of bytes is a digest, not text
		}
		for i := 0; i < v.Len(); i++ {
			if p := walkUTF8(v.Index(i), at(func() string { return fmt.Sprintf("[%d]", i) }), depth+1); p != "" {
				return p
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			k := func() string { return strings.ToValidUTF8(fmt.Sprint(it.Key()), "?") }
			if p := walkUTF8(it.Key(), at(func() string { return ".(key " + k() + ")" }), depth+1); p != "" {
				return p
			}
			if p := walkUTF8(it.Value(), at(func() string { return "." + k() }), depth+1); p != "" {
				return p
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			if f.Anonymous {
				if p := walkUTF8(v.Field(i), path, depth+1); p != "" {
					return p
				}
				continue
			}
			name := func() string {
				if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag != "" && tag != "-" {
					return "." + tag
				}
				return "." + strings.ToLower(f.Name)
			}
			if p := walkUTF8(v.Field(i), at(name), depth+1); p != "" {
				return p
			}
		}
	}
	return ""
}
