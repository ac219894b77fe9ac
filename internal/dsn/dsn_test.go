package dsn

import (
	"fmt"
	"testing"
)

func TestRedacted(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://alice:s3cret@db/x":        "postgres://alice:xxxxx@db/x",
		"postgres://db/x?password=s3cret&a=b": "postgres://db/x?a=b&password=xxxxx",
		"postgres://alice:s3cret@db:port/x":   "(a connection URL that does not parse)",
	} {
		if got := Redacted(in); got != want {
			t.Errorf("Redacted(%q) = %q, want %q", in, got, want)
		}
	}
}

func ExampleRedacted() {
	fmt.Println(Redacted("postgres://loom:s3cret@db.internal/runs?search_path=loom"))
	// Output: postgres://loom:xxxxx@db.internal/runs?search_path=loom
}
