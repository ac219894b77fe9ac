package gosrc_test

import (
	"fmt"
	"go/ast"

	"github.com/promptloom/promptloom/internal/testkit/gosrc"
)

// Count the funcs each importable package of the module declares.
func ExampleWalk() {
	funcs := 0
	err := gosrc.Walk("../../../digest", func(dir string, f *ast.File) error {
		for _, d := range f.Decls {
			if _, ok := d.(*ast.FuncDecl); ok {
				funcs++
			}
		}
		return nil
	})
	fmt.Println(err, funcs > 0)
	// Output: <nil> true
}
