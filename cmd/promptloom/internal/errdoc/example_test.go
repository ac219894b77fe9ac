package errdoc_test

import (
	"fmt"
	"strings"

	"github.com/promptloom/promptloom/cmd/promptloom/internal/errdoc"
)

// Generate runs the catalogue (here from the package's own directory, so
// cmd/promptloom is two up) and returns the page, as go generate writes
// it to docs/errors.md. Without a PostgreSQL database, the cases that need
// one are left unrun and keep their recorded messages.
func ExampleGenerate() {
	page, err := errdoc.Generate("../..", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	title, _, _ := strings.Cut(string(page.Markdown), "\n")
	fmt.Println(title)
	fmt.Println("unrun:", strings.Join(page.Unrun, ", "))
	// Output:
	// # Errors
	// unrun: postgres.ErrSchemaVersion, fs.ErrNotExist, fs.ErrNotExist, errors.ErrUnsupported, fs.ErrInvalid, jpostgres.ErrOtherWriter
}
