package explain_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/internal/testkit/benchdata"
)

// BenchmarkWhy finds a word in the prompt of n fragments (about 390 bytes
// each, half of them shed by a budget, so half the search is in fragments
// left out), against strings.Count of the word over the prompt and the
// left-out bodies: the baseline is the search alone, Why adds placing each
// occurrence in its fragment.
func BenchmarkWhy(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		cs := benchdata.Chunks(n)
		x, err := explain.Explain(benchdata.Options(cs), &explain.Options{Budget: &budget.Budget{Counter: budget.Bytes(), Total: benchdata.Bytes(cs) / 2}})
		if err != nil {
			b.Fatal(err)
		}
		var all strings.Builder
		all.WriteString(x.System)
		for _, r := range x.Reduction.Rows {
			if !r.Included {
				all.WriteString(r.Body)
			}
		}
		text := strings.Join(strings.Fields(cs[0].Text)[:2], " ")
		want := strings.Count(all.String(), text)
		b.Run(fmt.Sprintf("%d/why", n), func(b *testing.B) {
			b.SetBytes(int64(all.Len()))
			for b.Loop() {
				got := 0
				for range x.Why(text) {
					got++
				}
				if got < want {
					b.Fatalf("%d places, want at least %d", got, want)
				}
			}
		})
		b.Run(fmt.Sprintf("%d/count", n), func(b *testing.B) {
			b.SetBytes(int64(all.Len()))
			s := all.String()
			for b.Loop() {
				if strings.Count(s, text) != want {
					b.Fatal("count")
				}
			}
		})
	}
}
