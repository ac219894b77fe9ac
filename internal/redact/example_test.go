package redact_test

import (
	"fmt"
	"strings"

	"github.com/promptloom/promptloom/internal/redact"
)

// The reducer redacts each fragment once and derives the whole prompt's
// redaction from the pieces: the same as redacting the whole, without a
// second scan when nothing can cross a join.
func ExampleJoined() {
	bodies := []string{"Deploy with password: hunter22", "Be brief."}
	var pieces []redact.Text
	for _, b := range bodies {
		pieces = append(pieces, redact.Piece(b))
	}
	whole := strings.Join(bodies, "\n\n")
	fmt.Printf("%q\n", redact.Joined(pieces, "\n\n", whole))
	fmt.Println(redact.Joined(pieces, "\n\n", whole) == redact.String(whole))
	// Output:
	// "Deploy with <redacted:sensitive_assignment:18>\n\nBe brief."
	// true
}
