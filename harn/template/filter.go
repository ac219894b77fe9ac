package template

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/promptloom/promptloom"
)

// applyFilter is Harn's apply_filter. limit bounds the text a filter may
// make; past it the error matches promptloom.ErrTooLarge.
func applyFilter(name string, v any, args []any, line, col, limit int) (any, *Error) {
	fail := func(msg string) *Error { return &Error{Line: line, Col: col, Msg: msg, kind: errRender} }
	tooLarge := func() *Error {
		return &Error{Line: line, Col: col, Msg: fmt.Sprintf("filter `%s` makes text over the limit of %d bytes", name, limit), kind: promptloom.ErrTooLarge}
	}
	arity := func(ok bool) *Error {
		if ok {
			return nil
		}
		return fail(fmt.Sprintf("filter `%s` got wrong number of arguments", name))
	}
	none := func() *Error { return arity(len(args) == 0) }
	switch name {
	case "upper":
		if err := none(); err != nil {
			return nil, err
		}
		return toUpper(display(v)), nil
	case "lower":
		if err := none(); err != nil {
			return nil, err
		}
		return toLower(display(v)), nil
	case "trim":
		if err := none(); err != nil {
			return nil, err
		}
		return strings.TrimSpace(display(v)), nil
	case "capitalize":
		if err := none(); err != nil {
			return nil, err
		}
		var b strings.Builder
		for i, r := range display(v) {
			if i == 0 {
				appendUpper(&b, r)
			} else {
				appendLower(&b, r)
			}
		}
		return b.String(), nil
	case "title":
		if err := none(); err != nil {
			return nil, err
		}
		var b strings.Builder
		start := true
		for _, r := range display(v) {
			switch {
			case unicode.IsSpace(r):
				start = true
				b.WriteRune(r)
			case start:
				appendUpper(&b, r)
				start = false
			default:
				appendLower(&b, r)
			}
		}
		return b.String(), nil
	case "length":
		if err := none(); err != nil {
			return nil, err
		}
		switch t := v.(type) {
		case string:
			return int64(utf8.RuneCountInString(t)), nil
		case []any:
			return int64(len(t)), nil
		case *dict:
			return int64(len(t.keys)), nil
		case nil:
			return int64(0), nil
		}
		return nil, fail(fmt.Sprintf("`length` not defined for %s", typeName(v)))
	case "first", "last":
		if err := none(); err != nil {
			return nil, err
		}
		switch t := v.(type) {
		case []any:
			if len(t) == 0 {
				return nil, nil
			}
			if name == "first" {
				return t[0], nil
			}
			return t[len(t)-1], nil
		case string:
			if t == "" {
				return nil, nil
			}
			if name == "first" {
				_, n := utf8.DecodeRuneInString(t)
				return t[:n], nil
			}
			_, n := utf8.DecodeLastRuneInString(t)
			return t[len(t)-n:], nil
		}
		return nil, nil
	case "reverse":
		if err := none(); err != nil {
			return nil, err
		}
		switch t := v.(type) {
		case []any:
			out := slices.Clone(t)
			slices.Reverse(out)
			return out, nil
		case string:
			rs := []rune(t)
			slices.Reverse(rs)
			return string(rs), nil
		}
		return v, nil
	case "join":
		if err := arity(len(args) == 1); err != nil {
			return nil, err
		}
		sep := display(args[0])
		switch t := v.(type) {
		case string:
			return t, nil
		case []any:
			var b strings.Builder
			for i, x := range t {
				if i > 0 {
					b.WriteString(sep)
				}
				b.WriteString(display(x))
				if b.Len() > limit {
					return nil, tooLarge()
				}
			}
			return b.String(), nil
		}
		return nil, fail(fmt.Sprintf("`join` requires a list (got %s)", typeName(v)))
	case "default":
		if err := arity(len(args) == 1); err != nil {
			return nil, err
		}
		if truthy(v) {
			return v, nil
		}
		return args[0], nil
	case "json":
		if err := arity(len(args) <= 1); err != nil {
			return nil, err
		}
		s, ok := toJSON(v, len(args) == 1 && truthy(args[0]), limit)
		if !ok {
			return nil, tooLarge()
		}
		return s, nil
	case "indent":
		if err := arity(len(args) >= 1 && len(args) <= 2); err != nil {
			return nil, err
		}
		w, ok := args[0].(int64)
		if !ok {
			return nil, fail("`indent` requires an integer width")
		}
		w = max(w, 0)
		first := len(args) == 2 && truthy(args[1])
		s := display(v)
		lines := strings.Split(s, "\n")
		// The output is s and w spaces for each line padded: measured
		// before any is made, without overflow (w may be any int64).
		padded := int64(0)
		for i, l := range lines {
			if l != "" && (i > 0 || first) {
				padded++
			}
		}
		if padded > 0 && w > (int64(limit)-int64(len(s)))/padded {
			return nil, tooLarge()
		}
		pad := ""
		if padded > 0 {
			pad = strings.Repeat(" ", int(w))
		}
		var b strings.Builder
		for i, l := range lines {
			if i > 0 {
				b.WriteByte('\n')
			}
			if l != "" && (i > 0 || first) {
				b.WriteString(pad)
			}
			b.WriteString(l)
			if b.Len() > limit {
				return nil, tooLarge()
			}
		}
		return b.String(), nil
	case "lines":
		if err := none(); err != nil {
			return nil, err
		}
		parts := strings.Split(display(v), "\n")
		out := make([]any, len(parts))
		for i, p := range parts {
			out[i] = p
		}
		return out, nil
	case "escape_md":
		if err := none(); err != nil {
			return nil, err
		}
		s := display(v)
		var b strings.Builder
		b.Grow(len(s) + 8)
		for i := 0; i < len(s); i++ {
			if strings.IndexByte("\\`*_{}[]()#+-.!|<>", s[i]) >= 0 {
				b.WriteByte('\\')
			}
			b.WriteByte(s[i])
		}
		return b.String(), nil
	case "replace":
		if err := arity(len(args) == 2); err != nil {
			return nil, err
		}
		s, from, to := display(v), display(args[0]), display(args[1])
		n := strings.Count(s, from)
		if len(s)+n*(len(to)-len(from)) > limit {
			return nil, tooLarge()
		}
		return strings.ReplaceAll(s, from, to), nil
	}
	return nil, fail(fmt.Sprintf("unknown filter `%s`", name))
}
