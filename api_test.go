package promptloom_test

import (
	"fmt"
	"go/ast"
	"slices"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/internal/testkit/gosrc"
)

// maxExported bounds the names a user of the library must learn: the
// top-level exported declarations and the exported methods of exported
// types, in the non-test files of every package a user can import (not
// internal/, not a main package). `make api` prints the count per package.
const maxExported = 300

// exportedNames counts, per importable package, its exported names.
func exportedNames(t *testing.T) map[string]int {
	counts := map[string]int{}
	err := gosrc.Walk(".", func(dir string, f *ast.File) error {
		if _, ok := counts[dir]; !ok {
			counts[dir] = 0
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Name.IsExported() && (d.Recv == nil || exportedReceiver(d.Recv.List[0].Type)) {
					counts[dir]++
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							counts[dir]++
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								counts[dir]++
							}
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return counts
}

func exportedReceiver(t ast.Expr) bool {
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}

// TestExportedNames holds the library's surface to maxExported names; with
// -v it lists them per package.
func TestExportedNames(t *testing.T) {
	counts := exportedNames(t)
	total := 0
	var lines []string
	for _, dir := range slices.Sorted(func(yield func(string) bool) {
		for d := range counts {
			if !yield(d) {
				return
			}
		}
	}) {
		total += counts[dir]
		lines = append(lines, fmt.Sprintf("%4d %s", counts[dir], dir))
	}
	t.Logf("exported names per package:\n%s\n%4d in all (at most %d)", strings.Join(lines, "\n"), total, maxExported)
	if total > maxExported {
		t.Errorf("%d exported names, more than %d", total, maxExported)
	}
}
