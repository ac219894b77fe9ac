package seq_test

import (
	"fmt"

	"github.com/promptloom/promptloom/internal/seq"
)

// The positions of the values that kept their order.
func ExampleLongestIncreasing() {
	fmt.Println(seq.LongestIncreasing([]int{0, 5, 1, 2, 9, 3}))
	// Output: [0 2 3 5]
}
