package template_test

import (
	"errors"
	"testing"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/harn/template"
)

// TestErrorTexts: Harn's error messages and positions, each as Harn's
// lexer, parsers and renderer (crates/harn-vm/src/stdlib/template) word
// them, and the kind each matches.
func TestErrorTexts(t *testing.T) {
	for _, c := range []struct {
		tpl, bindings, want string
		kind                string
	}{
		{"{{ x", "", "at 1:1: unterminated directive", "syntax"},
		{"{{ 'x }}", "", "at 1:1: unterminated directive", "syntax"},
		{"a\n{{# c", "", "at 2:1: unterminated comment", "syntax"},
		{"x {{ raw }}y", "", "at 1:3: unterminated `{{ raw }}` block", "syntax"},
		{"{{ end }}", "", "at 1:1: unexpected `{{ end }}`", "syntax"},
		{"{{ else }}", "", "at 1:1: unexpected `{{ else }}`", "syntax"},
		{"{{ elif x }}", "", "at 1:1: unexpected `{{ elif }}`", "syntax"},
		{"{{ endsection }}", "", "at 1:1: unexpected `{{ endsection }}`", "syntax"},
		{"{{ if x }}{{ else }}", "", "at 1:11: `{{ else }}` missing matching `{{ end }}`", "syntax"},
		{"{{ for x in xs }}{{ else }}", "", "at 1:1: `{{ else }}` missing matching `{{ end }}`", "syntax"},
		{"{{ for x in xs }}", "", "at 1:1: `{{ for }}` missing matching `{{ end }}`", "syntax"},
		{"{{ for x }}", "", "at 1:1: expected `in` in for-loop", "syntax"},
		{"{{ for 1 in xs }}", "", "at 1:1: invalid for-loop variable", "syntax"},
		{"{{ for a, 1 in xs }}", "", "at 1:1: invalid for-loop variables", "syntax"},
		{"{{ x = 1 }}", "", "at 1:1: unexpected `=` (use `==`)", "syntax"},
		{"{{ a & b }}", "", "at 1:1: unexpected `&`", "syntax"},
		{"{{ x | }}", "", "at 1:1: expected filter name after `|`", "syntax"},
		{"{{ x. }}", "", "at 1:1: expected identifier after `.`", "syntax"},
		{"{{ x[y] }}", "", "at 1:1: expected integer or string inside `[...]`", "syntax"},
		{"{{ x[1 }}", "", "at 1:1: expected `]`", "syntax"},
		{"{{ (x }}", "", "at 1:1: expected `)`", "syntax"},
		{"{{ if }}x{{ end }}", "", "at 1:1: expected expression", "syntax"},
		{"{{ x y }}", "", "at 1:1: unexpected token `Ident(\"y\")` in expression", "syntax"},
		{"{{ x 'a\"b' }}", "", "at 1:1: unexpected token `Str(\"a\\\"b\")` in expression", "syntax"},
		{"{{ x 1.5 }}", "", "at 1:1: unexpected token `Float(1.5)` in expression", "syntax"},
		{"{{ x -2 }}", "", "at 1:1: unexpected token `Int(-2)` in expression", "syntax"},
		{"{{ ) }}", "", "at 1:1: unexpected token `RParen`", "syntax"},
		{"{{ 99999999999999999999 }}", "", "at 1:1: invalid integer `99999999999999999999`", "syntax"},
		{"{{ 1.5.2 }}", "", "at 1:1: invalid number `1.5.2`", "syntax"},
		{"{{ @ }}", "", "at 1:1: unexpected character `@` in expression", "syntax"},
		{"{{ café | upper }}", "", "at 1:1: unexpected character `Ã` in expression", "syntax"},
		{`{{ include "p" with x }}`, "", "at 1:1: expected `{ ... }` after `with`", "syntax"},
		{`{{ include "p" with { a } }}`, "", "at 1:1: expected `key: value` in include bindings", "syntax"},
		{`{{ include "p" with { 1: a } }}`, "", "at 1:1: invalid include binding key", "syntax"},
		{"{{ section task }}{{ endsection }}", "", "at 1:1: section name must be a string literal", "syntax"},
		{`{{ section "task" x }}{{ endsection }}`, "", "at 1:1: expected `name=value` section argument", "syntax"},
		{`{{ section "task" 1=x }}{{ endsection }}`, "", "at 1:1: invalid section argument name", "syntax"},
		{`{{ section "task" }}x{{ endsection "task" y }}`, "", "at 1:22: unexpected tokens after endsection name", "syntax"},
		{`{{ section "task" }}x{{ endsection "examples" }}`, "", "at 1:22: mismatched section end: expected `task`, got `examples`", "syntax"},
		{`{{ section 'bo\'gus' }}{{ endsection }}`, "", "at 1:1: unknown template section `bo'gus`", "syntax"},
		{"é\n  ü {{ x | bogus }}", "", "at 2:5: unknown filter `bogus`", "render"},
		{"{{ x | upper: 1 }}", "", "at 1:1: filter `upper` got wrong number of arguments", "render"},
		{"{{ x | default }}", "", "at 1:1: filter `default` got wrong number of arguments", "render"},
		{`{{ x | indent: "a" }}`, "", "at 1:1: `indent` requires an integer width", "render"},
		{"{{ x | join: 1 }}", `{"x": 3}`, "at 1:1: `join` requires a list (got int)", "render"},
		{"{{ x | length }}", `{"x": true}`, "at 1:1: `length` not defined for bool", "render"},
		{"{{ include 3 }}", "", "at 1:1: include path must be a string (got int)", "render"},
		{"\n {{ for x in s }}{{ end }}", `{"s": "abc"}`, "at 2:2: cannot iterate over string — expected list, dict, set, or range", "render"},
		{"{{ if a }}{{ elif b | nope }}{{ end }}", "", "at 1:11: unknown filter `nope`", "render"},
		{`{{ include "x.prompt" }}`, "", "at 1:1: failed to read included template x.prompt: no template root to read it from", "include"},
		{`{{ include "std/agent/x.prompt" }}`, "", "at 1:1: unknown stdlib prompt asset 'std/agent/x.prompt'", "include"},
		{"x", `[1]`, "bindings: bindings must be a JSON object, got list", "bindings"},
		{"x", `{"a":`, "bindings: unexpected EOF", "bindings"},
	} {
		_, err := renderErr(c.tpl, c.bindings, nil)
		if err == nil {
			t.Errorf("%q: no error, want %q", c.tpl, c.want)
			continue
		}
		if err.Error() != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.tpl, err, c.want)
		}
		if !isKind(err, c.kind) {
			t.Errorf("%q: %v is not of kind %s", c.tpl, err, c.kind)
		}
	}
}

// TestErrorPath: a file's errors start with its name; a render error in an
// included file carries the top template's name, as Harn's do.
func TestErrorPath(t *testing.T) {
	_, err := template.Parse("main.prompt", []byte("{{ x | }}"), nil)
	if err == nil || err.Error() != "main.prompt at 1:1: expected filter name after `|`" {
		t.Errorf("got %v", err)
	}
}

// isKind reports whether err is a *template.Error of the kind.
func isKind(err error, kind string) bool {
	var te *template.Error
	return errors.As(err, &te) && te.Kind == kind && (kind != "too_large" || errors.Is(err, promptloom.ErrTooLarge))
}
