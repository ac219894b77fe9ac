// Package gosrc walks the module's importable source for tests that hold
// the library's surface to a rule: the count of exported names, the
// catalogue of its errors.
package gosrc

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
)

// Walk parses every non-test file of the packages a user can import under
// root (not internal/, not testdata/, not a main package) and calls fn with
// the file's directory relative to root, slash-separated ("." for root).
func Walk(root string, fn func(dir string, f *ast.File) error) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (n == "testdata" || n == "internal" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		return fn(filepath.ToSlash(rel), f)
	})
}
