package fit_test

import (
	"fmt"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/internal/fit"
)

// Fit holds texts joined by a separator to a total, shedding the
// considered one first; a binding text (the zero register) is never shed.
func ExampleFit() {
	items := []fit.Item{
		{Text: "Never delete files without asking."},
		{Text: "The repository is a Go module.", Register: budget.Considered},
		{Text: "Prefer short sentences.", Register: budget.Craft},
	}
	for i := range items {
		items[i].Key = digest.String(items[i].Text)
	}
	b := &budget.Budget{Counter: budget.Bytes(), Total: 70}
	f, err := fit.Fit(b, items, "\n\n")
	if err != nil {
		panic(err)
	}
	fmt.Println(f.Counts, f.Shed, f.Count)
	// Output:
	// [34 30 23] [1] 59
}
