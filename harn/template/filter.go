package template

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/promptloom/promptloom"
)

// filter is one of Harn's filters: how many arguments it takes, and what
// it makes of a value. The table is Harn's apply_filter, one row a filter;
// the arity is checked before the filter runs, as Harn checks it.
type filter struct {
	minArgs, maxArgs int
	apply            func(c filterCtx, v any, args []any) (any, *Error)
}

// filters are Harn's, by name.
var filters = map[string]*filter{
	"upper":      &filter{0, 0, func(_ filterCtx, v any, _ []any) (any, *Error) { return toUpper(display(v)), nil }},
	"lower":      &filter{0, 0, func(_ filterCtx, v any, _ []any) (any, *Error) { return toLower(display(v)), nil }},
	"trim":       &filter{0, 0, func(_ filterCtx, v any, _ []any) (any, *Error) { return strings.TrimSpace(display(v)), nil }},
	"capitalize": &filter{0, 0, capitalize},
	"title":      &filter{0, 0, title},
	"length":     &filter{0, 0, length},
	"first":      &filter{0, 0, firstOrLast},
	"last":       &filter{0, 0, firstOrLast},
	"reverse":    &filter{0, 0, reverse},
	"join":       &filter{1, 1, join},
	"default": &filter{1, 1, func(_ filterCtx, v any, args []any) (any, *Error) {
		if truthy(v) {
			return v, nil
		}
		return args[0], nil
	}},
	"json":      &filter{0, 1, jsonFilter},
	"indent":    &filter{1, 2, indent},
	"lines":     &filter{0, 0, lines},
	"escape_md": &filter{0, 0, escapeMD},
	"replace":   &filter{2, 2, replace},
}

// filterCtx is one application of a filter: its name, the position of
// the expression it is in (its errors'), and the limit on the text it
// may make.
type filterCtx struct {
	name             string
	line, col, limit int
}

// applyFilter is Harn's apply_filter: call's filter of v with args, at
// (line, col). limit bounds the text a filter may make; past it the error
// matches promptloom.ErrTooLarge.
func applyFilter(call *filterCall, v any, args []any, line, col, limit int) (any, *Error) {
	c := filterCtx{name: call.name, line: line, col: col, limit: limit}
	f := call.f
	if f == nil {
		return nil, c.fail(fmt.Sprintf("unknown filter `%s`", call.name))
	}
	if len(args) < f.minArgs || len(args) > f.maxArgs {
		return nil, c.fail(fmt.Sprintf("filter `%s` got wrong number of arguments", call.name))
	}
	return f.apply(c, v, args)
}

// fail is a render error at the filter's position.
func (c filterCtx) fail(msg string) *Error {
	return &Error{Line: c.line, Col: c.col, msg: msg, kind: errRender}
}

// tooLarge is the error of a filter whose text passes the limit.
func (c filterCtx) tooLarge() *Error {
	return &Error{Line: c.line, Col: c.col, msg: fmt.Sprintf("filter `%s` makes text over the limit of %d bytes", c.name, c.limit), kind: promptloom.ErrTooLarge}
}

func capitalize(_ filterCtx, v any, _ []any) (any, *Error) {
	var b strings.Builder
	for i, r := range display(v) {
		if i == 0 {
			appendUpper(&b, r)
		} else {
			appendLower(&b, r)
		}
	}
	return b.String(), nil
}

func title(_ filterCtx, v any, _ []any) (any, *Error) {
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
}

func length(c filterCtx, v any, _ []any) (any, *Error) {
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
	return nil, c.fail(fmt.Sprintf("`length` not defined for %s", typeName(v)))
}

// firstOrLast is first and last: a list's item or a string's character,
// nil for an empty one or any other value.
func firstOrLast(c filterCtx, v any, _ []any) (any, *Error) {
	first := c.name == "first"
	switch t := v.(type) {
	case []any:
		if len(t) == 0 {
			return nil, nil
		}
		if first {
			return t[0], nil
		}
		return t[len(t)-1], nil
	case string:
		if t == "" {
			return nil, nil
		}
		if first {
			_, n := utf8.DecodeRuneInString(t)
			return t[:n], nil
		}
		_, n := utf8.DecodeLastRuneInString(t)
		return t[len(t)-n:], nil
	}
	return nil, nil
}

func reverse(_ filterCtx, v any, _ []any) (any, *Error) {
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
}

func join(c filterCtx, v any, args []any) (any, *Error) {
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
			if b.Len() > c.limit {
				return nil, c.tooLarge()
			}
		}
		return b.String(), nil
	}
	return nil, c.fail(fmt.Sprintf("`join` requires a list (got %s)", typeName(v)))
}

func jsonFilter(c filterCtx, v any, args []any) (any, *Error) {
	s, ok := toJSON(v, len(args) == 1 && truthy(args[0]), c.limit)
	if !ok {
		return nil, c.tooLarge()
	}
	return s, nil
}

func indent(c filterCtx, v any, args []any) (any, *Error) {
	w, ok := args[0].(int64)
	if !ok {
		return nil, c.fail("`indent` requires an integer width")
	}
	w = max(w, 0)
	first := len(args) == 2 && truthy(args[1])
	s := display(v)
	lines := strings.Split(s, "\n")
	// The output is s and w spaces for each line padded: measured before
	// any is made, without overflow (w may be any int64).
	padded := int64(0)
	for i, l := range lines {
		if l != "" && (i > 0 || first) {
			padded++
		}
	}
	if padded > 0 && w > (int64(c.limit)-int64(len(s)))/padded {
		return nil, c.tooLarge()
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
		if b.Len() > c.limit {
			return nil, c.tooLarge()
		}
	}
	return b.String(), nil
}

func lines(_ filterCtx, v any, _ []any) (any, *Error) {
	parts := strings.Split(display(v), "\n")
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out, nil
}

func escapeMD(_ filterCtx, v any, _ []any) (any, *Error) {
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
}

func replace(c filterCtx, v any, args []any) (any, *Error) {
	s, from, to := display(v), display(args[0]), display(args[1])
	n := strings.Count(s, from)
	if len(s)+n*(len(to)-len(from)) > c.limit {
		return nil, c.tooLarge()
	}
	return strings.ReplaceAll(s, from, to), nil
}
