package journal

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/manifest"
)

// Each way a transcript breaks is told apart by its rule alone: a caller
// never reads Detail to know which condition it met (a session not closed
// is not a session opened twice).
func TestRulesOneConditionEach(t *testing.T) {
	lines := strings.SplitAfter(recorded(t), "\n")
	lines = lines[:len(lines)-1] // the empty string after the last newline
	with := func(edit func(ls []string) []string) string {
		return rechain(strings.Join(edit(slices.Clone(lines)), ""))
	}
	set := func(i int, old, new string) func([]string) []string {
		return func(ls []string) []string {
			if !strings.Contains(ls[i], old) {
				t.Fatalf("line %d has no %s", i+1, old)
			}
			ls[i] = strings.Replace(ls[i], old, new, 1)
			return ls
		}
	}
	for _, tc := range []struct {
		name string
		edit func([]string) []string
		want manifest.Rule
	}{
		{"a session not closed", func(ls []string) []string { return ls[:11] }, RuleSessionUnclosed},
		{"a session opened twice", func(ls []string) []string { return slices.Insert(ls, 7, ls[0]) }, RuleSessionReopened},
		{"a session opened without an id", set(0, `"session":"s1"`, `"session":""`), RuleSessionID},
		{"a close that miscounts", set(11, `"calls":3`, `"calls":2`), RuleCloseCount},
		{"a close of a session not open", func(ls []string) []string { return append(ls, ls[11]) }, RuleCloseNotOpen},
		{"a request of a session not open", set(9, `"session":"s1"`, `"session":"s2"`), RuleSessionNotOpen},
		{"an answer given twice", func(ls []string) []string { return slices.Insert(ls, 11, ls[10]) }, RuleAnsweredTwice},
		{"an answer to no request", set(10, `"request_seq":10`, `"request_seq":99`), RuleRequestSeq},
		{"a request not answered", func(ls []string) []string { return slices.Delete(ls, 10, 11) }, RuleUnanswered},
		{"an answer that does not hash", set(10, `reply to c3`, `reply to c4`), RuleOutcomeContentHash},
		{"an unknown kind", set(11, `"kind":"journal_close"`, `"kind":"journal_end"`), RuleUnknownKind},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Verify(strings.NewReader(with(tc.edit)), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []manifest.Rule
			found := false
			for _, p := range rep.Problems {
				got = append(got, p.Rule)
				found = found || errors.Is(p, tc.want)
			}
			for _, c := range rep.Calls {
				if c.Problem != nil {
					got = append(got, c.Problem.Rule)
					found = found || errors.Is(c.Problem, tc.want)
				}
			}
			if !found {
				t.Errorf("rules %q, want %q among them", got, tc.want)
			}
		})
	}
}

// Every rule the package reports is one of its exported constants,
// distinct, and listed in docs/transcript.md: no problem is made with a
// bare string a caller would have to know, and no two rules share a name.
func TestRulesAreConstantsListed(t *testing.T) {
	doc, err := os.ReadFile("../docs/transcript.md")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]string{} // rule -> constant
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				if sel, ok := n.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Rule" {
					for i, id := range n.Names {
						if !id.IsExported() {
							continue // another package's rule, mirrored
						}
						v, _ := strconv.Unquote(n.Values[i].(*ast.BasicLit).Value)
						if other, dup := values[v]; dup {
							t.Errorf("%s and %s are both rule %q", other, id.Name, v)
						}
						values[v] = id.Name
						if !strings.Contains(string(doc), "| `"+v+"` |") {
							t.Errorf("rule %s (%q) is not in docs/transcript.md's list", id.Name, v)
						}
					}
				}
			case *ast.CallExpr:
				if fn, ok := n.Fun.(*ast.SelectorExpr); ok && fn.Sel.Name == "broke" || isIdent(n.Fun, "callFailed", "fail") {
					if len(n.Args) > 0 {
						if lit, ok := n.Args[0].(*ast.BasicLit); ok {
							t.Errorf("%s: a rule made of the string %s", fset.Position(lit.Pos()), lit.Value)
						}
					}
				}
			case *ast.KeyValueExpr:
				if isIdent(n.Key, "Rule") {
					if lit, ok := n.Value.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						t.Errorf("%s: a rule made of the string %s", fset.Position(lit.Pos()), lit.Value)
					}
				}
			}
			return true
		})
	}
	if len(values) == 0 {
		t.Fatal("no rule constants found")
	}
}

func isIdent(e ast.Expr, names ...string) bool {
	id, ok := e.(*ast.Ident)
	return ok && slices.Contains(names, id.Name)
}
