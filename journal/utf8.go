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
	return walkUTF8(reflect.ValueOf(v), "", 0)
}

func walkUTF8(v reflect.Value, path string, depth int) string {
	if depth > 32 || !v.IsValid() {
		return ""
	}
	bad := func(s string) string {
		if utf8.ValidString(s) {
			return ""
		}
		i := 0
		for i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		return fmt.Sprintf("%s (byte %d)", strings.TrimPrefix(path, "."), i)
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
			if p := walkUTF8(v.Index(i), fmt.Sprintf("%s[%d]", path, i), depth+1); p != "" {
				return p
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			k := fmt.Sprint(it.Key())
			if p := walkUTF8(it.Key(), path+".(key "+strings.ToValidUTF8(k, "?")+")", depth+1); p != "" {
				return p
			}
			if p := walkUTF8(it.Value(), path+"."+strings.ToValidUTF8(k, "?"), depth+1); p != "" {
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
			name := strings.ToLower(f.Name)
			if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag != "" && tag != "-" {
				name = tag
			}
			if f.Anonymous {
				if p := walkUTF8(v.Field(i), path, depth+1); p != "" {
					return p
				}
				continue
			}
			if p := walkUTF8(v.Field(i), path+"."+name, depth+1); p != "" {
				return p
			}
		}
	}
	return ""
}
