package promptloom_test

import (
	"fmt"
	"go/ast"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/internal/testkit/gosrc"
)

// maxExported bounds the names a user of the library must learn: the
// top-level exported declarations and the exported methods of exported
// types, in the non-test files of every package a user can import (not
// internal/, not a main package). The exported fields of exported struct
// types are counted beside them, as a measure only: a field is learnt with
// its type, and a bound on them would argue for options nobody can set.
// `make api` prints both per package.
const maxExported = 472

// surface is what a package asks a user to learn.
type surface struct{ names, fields int }

// exportedSurface counts, per importable package, its exported names and
// the exported fields of its exported struct types.
func exportedSurface(t *testing.T) map[string]surface {
	counts := map[string]surface{}
	err := gosrc.Walk(".", func(dir string, f *ast.File) error {
		c := counts[dir]
		defer func() { counts[dir] = c }()
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Name.IsExported() && (d.Recv == nil || exportedReceiver(d.Recv.List[0].Type)) {
					c.names++
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							c.names++
							c.fields += exportedFields(s.Type)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								c.names++
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

// exportedFields counts a struct type's exported fields: each named one,
// and each embedded type with an exported name.
func exportedFields(t ast.Expr) int {
	st, ok := t.(*ast.StructType)
	if !ok {
		return 0
	}
	n := 0
	for _, f := range st.Fields.List {
		if len(f.Names) == 0 {
			if exportedReceiver(f.Type) {
				n++
			}
			continue
		}
		for _, name := range f.Names {
			if name.IsExported() {
				n++
			}
		}
	}
	return n
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
		case *ast.SelectorExpr:
			return x.Sel.IsExported()
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}

// TestExportedNames holds the library's surface to maxExported names; with
// -v it lists names and fields per package.
func TestExportedNames(t *testing.T) {
	counts := exportedSurface(t)
	var total surface
	lines := []string{"names fields package"}
	for _, dir := range slices.Sorted(maps.Keys(counts)) {
		c := counts[dir]
		total.names += c.names
		total.fields += c.fields
		lines = append(lines, fmt.Sprintf("%5d %6d %s", c.names, c.fields, dir))
	}
	t.Logf("exported names per package:\n%s\n%5d %6d in all (at most %d names)", strings.Join(lines, "\n"), total.names, total.fields, maxExported)
	if total.names > maxExported {
		t.Errorf("%d exported names, more than %d", total.names, maxExported)
	}
}
