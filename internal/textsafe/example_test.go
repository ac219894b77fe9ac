package textsafe_test

import (
	"fmt"

	"github.com/promptloom/promptloom/internal/textsafe"
)

// An id with a newline and an escape sequence cannot forge a row or reach
// the terminal's control codes; ordinary text prints as it is.
func ExampleLine() {
	fmt.Println(textsafe.Line("tool:todo.guidance"))
	fmt.Println(textsafe.Line("evil\n1  forged  yes\x1b[2J"))
	// Output:
	// tool:todo.guidance
	// evil\n1  forged  yes\x1b[2J
}
