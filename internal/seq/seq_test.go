package seq

import (
	"slices"
	"testing"
)

func TestLongestIncreasing(t *testing.T) {
	for _, c := range []struct{ in, want []int }{
		{nil, nil},
		{[]int{3, 1, 2}, []int{1, 2}},
		{[]int{0, 5, 1, 2, 9, 3}, []int{0, 2, 3, 5}},
		{[]int{4, 4, 4}, []int{2}},
	} {
		if got := LongestIncreasing(c.in); !slices.Equal(got, c.want) {
			t.Errorf("%v: %v, want %v", c.in, got, c.want)
		}
	}
}
