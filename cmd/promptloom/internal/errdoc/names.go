package errdoc

import (
	_ "embed"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"strconv"
)

// librarySource is library.go itself: the page names what each case
// matches as the source spells it (budget.ErrInvalid, *stage.Error), so
// the names are the values' own expressions and cannot drift from them.
//
//go:embed library.go
var librarySource string

// libraryCases returns a copy of the library's cases, each with the names
// of what it matches.
func libraryCases() ([]*libCase, error) {
	names, err := parseLibrary()
	if err != nil {
		return nil, err
	}
	if len(names) != len(library) {
		return nil, fmt.Errorf("library.go: %d cases parsed, %d compiled", len(names), len(library))
	}
	var cases []*libCase
	for i := range library {
		c := library[i]
		c.isName, c.asName, c.line = names[i].is.text, names[i].as.text, names[i].line
		if (c.is != nil) != (c.isName != "") || (c.as != nil) != (c.asName != "") || (c.is == nil && c.as == nil) {
			return nil, fmt.Errorf("library.go: case %d (%s): is and as must be set as written", i, c.pkg)
		}
		cases = append(cases, &c)
	}
	return cases, nil
}

// A match is an is or as of a case: its text, and the sentinel or type it
// names, qualified by import path.
type match struct {
	text, qualified string
}

type caseNames struct {
	line   int
	is, as match
	raised bool
}

// parseLibrary reads the is and as of every element of library.
func parseLibrary() ([]caseNames, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "library.go", librarySource, 0)
	if err != nil {
		return nil, err
	}
	imports := map[string]string{} // package name -> import path
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := path.Base(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		imports[name] = p
	}
	text := func(e ast.Node) string {
		return librarySource[fset.Position(e.Pos()).Offset:fset.Position(e.End()).Offset]
	}
	// qualify names the sentinel or type of pkg.Name, *pkg.Name or
	// pkg.Name(...).
	qualify := func(e ast.Expr) (string, error) {
		if c, ok := e.(*ast.CallExpr); ok {
			e = c.Fun
		}
		if s, ok := e.(*ast.StarExpr); ok {
			e = s.X
		}
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return "", fmt.Errorf("%s: want pkg.Name", text(e))
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok || imports[x.Name] == "" {
			return "", fmt.Errorf("%s: not an imported package", text(e))
		}
		return imports[x.Name] + "." + sel.Sel.Name, nil
	}
	var out []caseNames
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "library" || len(vs.Values) != 1 {
			return true
		}
		found = true
		list, ok := vs.Values[0].(*ast.CompositeLit)
		if !ok {
			err = fmt.Errorf("library is not a composite literal")
			return false
		}
		for _, elt := range list.Elts {
			lit, ok := elt.(*ast.CompositeLit)
			if !ok {
				err = fmt.Errorf("library.go:%d: a case must be a composite literal", fset.Position(elt.Pos()).Line)
				return false
			}
			c := caseNames{line: fset.Position(lit.Pos()).Line}
			for _, kv := range lit.Elts {
				kv, ok := kv.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				var m *match
				v := kv.Value
				switch key := kv.Key.(*ast.Ident); key.Name {
				case "is":
					m = &c.is
				case "as":
					m = &c.as
					if call, ok := v.(*ast.CallExpr); ok && len(call.Args) == 1 && text(call.Fun) == "new" {
						v = call.Args[0]
					} else {
						err = fmt.Errorf("library.go:%d: as must be new(T)", fset.Position(v.Pos()).Line)
						return false
					}
				case "raise":
					c.raised = true
					continue
				default:
					continue
				}
				m.text = text(v)
				if m.qualified, err = qualify(v); err != nil {
					err = fmt.Errorf("library.go:%d: %v", fset.Position(v.Pos()).Line, err)
					return false
				}
			}
			out = append(out, c)
		}
		return false
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("library.go: no var library")
	}
	return out, nil
}

// Catalogued lists the sentinels and error types that a library case
// raises an error to match, each qualified by its import path
// ("github.com/promptloom/promptloom/budget.ErrInvalid"): an is of
// pkg.Name is the sentinel (of pkg.Type(...), the type), an as of
// new(*pkg.Type) the type. A case documented but not raised does not
// count.
func Catalogued() ([]string, error) {
	names, err := parseLibrary()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range names {
		if !c.raised {
			continue
		}
		for _, m := range []match{c.is, c.as} {
			if m.qualified != "" {
				out = append(out, m.qualified)
			}
		}
	}
	return out, nil
}
