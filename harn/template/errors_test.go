package template_test

import (
	"errors"
	"testing"

	"github.com/promptloom/promptloom/harn/template"
)

// TestErrorTexts: Harn's error messages and positions, each as Harn's
// lexer, parsers and renderer (crates/harn-vm/src/stdlib/template) word
// them, and the kind each matches.
func TestErrorTexts(t *testing.T) {
	for _, c := range []struct {
		tpl, bindings, want string
		kind                error
	}{
		{"{{ x", "", "at 1:1: unterminated directive", template.ErrSyntax},
		{"{{ 'x }}", "", "at 1:1: unterminated directive", template.ErrSyntax},
		{"a\n{{# c", "", "at 2:1: unterminated comment", template.ErrSyntax},
		{"x {{ raw }}y", "", "at 1:3: unterminated `{{ raw }}` block", template.ErrSyntax},
		{"{{ end }}", "", "at 1:1: unexpected `{{ end }}`", template.ErrSyntax},
		{"{{ else }}", "", "at 1:1: unexpected `{{ else }}`", template.ErrSyntax},
		{"{{ elif x }}", "", "at 1:1: unexpected `{{ elif }}`", template.ErrSyntax},
		{"{{ endsection }}", "", "at 1:1: unexpected `{{ endsection }}`", template.ErrSyntax},
		{"{{ if x }}{{ else }}", "", "at 1:11: `{{ else }}` missing matching `{{ end }}`", template.ErrSyntax},
		{"{{ for x in xs }}{{ else }}", "", "at 1:1: `{{ else }}` missing matching `{{ end }}`", template.ErrSyntax},
		{"{{ for x in xs }}", "", "at 1:1: `{{ for }}` missing matching `{{ end }}`", template.ErrSyntax},
		{"{{ for x }}", "", "at 1:1: expected `in` in for-loop", template.ErrSyntax},
		{"{{ for 1 in xs }}", "", "at 1:1: invalid for-loop variable", template.ErrSyntax},
		{"{{ for a, 1 in xs }}", "", "at 1:1: invalid for-loop variables", template.ErrSyntax},
		{"{{ x = 1 }}", "", "at 1:1: unexpected `=` (use `==`)", template.ErrSyntax},
		{"{{ a & b }}", "", "at 1:1: unexpected `&`", template.ErrSyntax},
		{"{{ x | }}", "", "at 1:1: expected filter name after `|`", template.ErrSyntax},
		{"{{ x. }}", "", "at 1:1: expected identifier after `.`", template.ErrSyntax},
		{"{{ x[y] }}", "", "at 1:1: expected integer or string inside `[...]`", template.ErrSyntax},
		{"{{ x[1 }}", "", "at 1:1: expected `]`", template.ErrSyntax},
		{"{{ (x }}", "", "at 1:1: expected `)`", template.ErrSyntax},
		{"{{ if }}x{{ end }}", "", "at 1:1: expected expression", template.ErrSyntax},
		{"{{ x y }}", "", "at 1:1: unexpected token `Ident(\"y\")` in expression", template.ErrSyntax},
		{"{{ x 'a\"b' }}", "", "at 1:1: unexpected token `Str(\"a\\\"b\")` in expression", template.ErrSyntax},
		{"{{ x 1.5 }}", "", "at 1:1: unexpected token `Float(1.5)` in expression", template.ErrSyntax},
		{"{{ x -2 }}", "", "at 1:1: unexpected token `Int(-2)` in expression", template.ErrSyntax},
		{"{{ ) }}", "", "at 1:1: unexpected token `RParen`", template.ErrSyntax},
		{"{{ 99999999999999999999 }}", "", "at 1:1: invalid integer `99999999999999999999`", template.ErrSyntax},
		{"{{ 1.5.2 }}", "", "at 1:1: invalid number `1.5.2`", template.ErrSyntax},
		{"{{ @ }}", "", "at 1:1: unexpected character `@` in expression", template.ErrSyntax},
		{"{{ café | upper }}", "", "at 1:1: unexpected character `Ã` in expression", template.ErrSyntax},
		{`{{ include "p" with x }}`, "", "at 1:1: expected `{ ... }` after `with`", template.ErrSyntax},
		{`{{ include "p" with { a } }}`, "", "at 1:1: expected `key: value` in include bindings", template.ErrSyntax},
		{`{{ include "p" with { 1: a } }}`, "", "at 1:1: invalid include binding key", template.ErrSyntax},
		{"{{ section task }}{{ endsection }}", "", "at 1:1: section name must be a string literal", template.ErrSyntax},
		{`{{ section "task" x }}{{ endsection }}`, "", "at 1:1: expected `name=value` section argument", template.ErrSyntax},
		{`{{ section "task" 1=x }}{{ endsection }}`, "", "at 1:1: invalid section argument name", template.ErrSyntax},
		{`{{ section "task" }}x{{ endsection "task" y }}`, "", "at 1:22: unexpected tokens after endsection name", template.ErrSyntax},
		{`{{ section "task" }}x{{ endsection "examples" }}`, "", "at 1:22: mismatched section end: expected `task`, got `examples`", template.ErrSyntax},
		{`{{ section 'bo\'gus' }}{{ endsection }}`, "", "at 1:1: unknown template section `bo'gus`", template.ErrSyntax},
		{"é\n  ü {{ x | bogus }}", "", "at 2:5: unknown filter `bogus`", template.ErrRender},
		{"{{ x | upper: 1 }}", "", "at 1:1: filter `upper` got wrong number of arguments", template.ErrRender},
		{"{{ x | default }}", "", "at 1:1: filter `default` got wrong number of arguments", template.ErrRender},
		{`{{ x | indent: "a" }}`, "", "at 1:1: `indent` requires an integer width", template.ErrRender},
		{"{{ x | join: 1 }}", `{"x": 3}`, "at 1:1: `join` requires a list (got int)", template.ErrRender},
		{"{{ x | length }}", `{"x": true}`, "at 1:1: `length` not defined for bool", template.ErrRender},
		{"{{ include 3 }}", "", "at 1:1: include path must be a string (got int)", template.ErrRender},
		{"\n {{ for x in s }}{{ end }}", `{"s": "abc"}`, "at 2:2: cannot iterate over string — expected list, dict, set, or range", template.ErrRender},
		{"{{ if a }}{{ elif b | nope }}{{ end }}", "", "at 1:11: unknown filter `nope`", template.ErrRender},
		{`{{ include "x.prompt" }}`, "", "at 1:1: failed to read included template x.prompt: no template root to read it from", template.ErrInclude},
		{`{{ include "std/agent/x.prompt" }}`, "", "at 1:1: unknown stdlib prompt asset 'std/agent/x.prompt'", template.ErrInclude},
		{"x", `[1]`, "bindings: bindings must be a JSON object, got list", template.ErrBindings},
		{"x", `{"a":`, "bindings: unexpected EOF", template.ErrBindings},
	} {
		_, err := renderErr(c.tpl, c.bindings, nil)
		if err == nil {
			t.Errorf("%q: no error, want %q", c.tpl, c.want)
			continue
		}
		if err.Error() != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.tpl, err, c.want)
		}
		if !errors.Is(err, c.kind) {
			t.Errorf("%q: %v does not match %v", c.tpl, err, c.kind)
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
