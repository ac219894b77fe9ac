package budget_test

import (
	"fmt"

	"github.com/promptloom/promptloom/budget"
)

// A counter counts offline, in bytes or in a model family's tokens; a
// budget is a counter and a total, and registers say what may be shed to
// meet it (promptloom.Reduce's Options.Budget sheds them).
func ExampleNewCounter() {
	tokens, err := budget.NewCounter("o200k_base")
	if err != nil {
		panic(err)
	}
	text := "Keep the todo list current."
	fmt.Println(budget.Bytes().Count(text), "bytes,", tokens.Count(text), tokens.Encoding(), "tokens")

	b := &budget.Budget{Counter: tokens, Total: 4000, ShedOrder: []budget.Register{budget.Generated, budget.Considered}}
	r, _ := budget.ParseRegister("craft")
	fmt.Println(b.ShedOrder, r)
	// Output:
	// 27 bytes, 6 o200k_base tokens
	// [generated considered] craft
}
