package main

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/cmd/promptloom/internal/errdoc"
	"github.com/promptloom/promptloom/internal/testkit/gosrc"
)

const module = "github.com/promptloom/promptloom"

// uncatalogued are the sentinels and error types of the library that no
// case of the error catalogue raises, each with why. docs/errors.md may
// still document them (a case with no raise).
var uncatalogued = map[string]string{
	module + "/journal/postgres.ErrUnconfirmed":  "it needs a connection cut between an append's COMMIT running and its answer, with the server out of reach for ten seconds after; journal/postgres's TestPostgresLostCommitAnswerUnreachable causes it with a proxy",
	module + "/eventlog/postgres.ErrUnconfirmed": "it needs the connection to fail between a batch's COMMIT and the wait for its WAL flush, which nothing can cause on demand; the page documents it without an example",
}

// TestEveryLibraryErrorIsCatalogued: every exported sentinel (a
// package-level var Err...) and every exported error type (a type with an
// Error method) of the packages a user can import has a case in the error
// catalogue that raises an error matching it, or is an exception above
// with its reason.
func TestEveryLibraryErrorIsCatalogued(t *testing.T) {
	declared := libraryErrors(t, "../..")
	if len(declared) < 30 {
		t.Fatalf("found only %d sentinels and error types: %v", len(declared), declared)
	}
	catalogued, err := errdoc.Catalogued()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range catalogued {
		// A store that is an fs.FS reports fs.ErrNotExist as fs does.
		std := !strings.HasPrefix(name, module+".") && !strings.HasPrefix(name, module+"/")
		if !std && !slices.Contains(declared, name) {
			t.Errorf("the catalogue matches %s, which is not an exported sentinel or error type of the library", name)
		}
	}
	for _, name := range declared {
		why, excepted := uncatalogued[name]
		switch has := slices.Contains(catalogued, name); {
		case !has && !excepted:
			t.Errorf("no case of the error catalogue (cmd/promptloom/internal/errdoc/library.go) raises %s", name)
		case has && excepted:
			t.Errorf("%s is catalogued now: take it out of uncatalogued (%s)", name, why)
		}
	}
	for name := range uncatalogued {
		if !slices.Contains(declared, name) {
			t.Errorf("uncatalogued names %s, which the library does not declare", name)
		}
	}
}

// libraryErrors lists the exported sentinels and error types of the
// module's importable packages (not internal, not main, not tests) under
// root, each qualified by its import path.
func libraryErrors(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := gosrc.Walk(root, func(rel string, f *ast.File) error {
		pkg := module
		if rel != "." {
			pkg += "/" + filepath.ToSlash(rel)
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.GenDecl:
				if decl.Tok != token.VAR {
					continue
				}
				for _, spec := range decl.Specs {
					for _, name := range spec.(*ast.ValueSpec).Names {
						if name.IsExported() && strings.HasPrefix(name.Name, "Err") {
							out = append(out, pkg+"."+name.Name)
						}
					}
				}
			case *ast.FuncDecl:
				if decl.Recv == nil || decl.Name.Name != "Error" || decl.Type.Params.NumFields() != 0 ||
					decl.Type.Results.NumFields() != 1 {
					continue
				}
				if res, ok := decl.Type.Results.List[0].Type.(*ast.Ident); !ok || res.Name != "string" {
					continue
				}
				recv := decl.Recv.List[0].Type
				if star, ok := recv.(*ast.StarExpr); ok {
					recv = star.X
				}
				if id, ok := recv.(*ast.Ident); ok && id.IsExported() {
					out = append(out, pkg+"."+id.Name)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
