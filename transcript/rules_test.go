package transcript

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

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
