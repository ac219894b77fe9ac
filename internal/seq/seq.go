// Package seq holds the sequence algorithms several rooms share: the
// longest increasing run, which pairs what kept its order between two
// lists (manifest.Compare's fragments, explain's lines), and the common
// prefix of two prompts (explain's diff, the run report).
package seq

import "sort"

// LongestIncreasing returns the positions in s of one longest strictly
// increasing run, in order (patience sorting, n log n).
func LongestIncreasing(s []int) []int {
	var tails []int // index into s of the smallest tail of each length
	prev := make([]int, len(s))
	for i, v := range s {
		j := sort.Search(len(tails), func(j int) bool { return s[tails[j]] >= v })
		if j > 0 {
			prev[i] = tails[j-1]
		} else {
			prev[i] = -1
		}
		if j == len(tails) {
			tails = append(tails, i)
		} else {
			tails[j] = i
		}
	}
	if len(tails) == 0 {
		return nil
	}
	run := make([]int, len(tails))
	for i, k := tails[len(tails)-1], len(tails)-1; i >= 0; i, k = prev[i], k-1 {
		run[k] = i
	}
	return run
}

// CommonPrefix is the number of bytes two prompts share from the start:
// what a provider's prefix cache can still serve of b after a, and so the
// measure by which a change to a prompt is cheap or dear.
func CommonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
