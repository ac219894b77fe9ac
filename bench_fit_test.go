package promptloom

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/internal/testkit/benchdata"
)

var prose = benchdata.Words

// benchFragments makes n fragments of about size bytes of prose each, in
// every register, so that a budget has something to shed.
func benchFragments(n, size int, seed uint64) []Fragment {
	r := rand.New(rand.NewPCG(seed, 1))
	regs := []budget.Register{budget.Binding, budget.Considered, budget.Craft, budget.Generated}
	out := make([]Fragment, n)
	for i := range out {
		var b strings.Builder
		for b.Len() < size {
			b.WriteString(prose[r.IntN(len(prose))])
			if r.IntN(12) == 0 {
				b.WriteString(". ")
			} else {
				b.WriteByte(' ')
			}
		}
		out[i] = Fragment{
			ID: fmt.Sprintf("f%d", i), Source: "bench", Body: strings.TrimSpace(b.String()),
			Register: regs[i%len(regs)], Rank: r.IntN(5),
		}
	}
	return out
}

// BenchmarkFit fits 2,000 fragments (about 1 MB) to an o200k_base budget
// that sheds about a third of them: cold (every count computed) and warm
// (the cache holds the previous fit; one fragment changed since).
func BenchmarkFit(b *testing.B) {
	frags := benchFragments(2000, 500, 1)
	counter, err := budget.NewCounter("o200k_base")
	if err != nil {
		b.Fatal(err)
	}
	probe := &budget.Budget{Counter: counter, Total: 1 << 30}
	r, _ := Reduce(frags, &Options{Budget: probe})
	total := r.Fit.Tokens * 2 / 3
	bytes := int64(len(r.System))

	b.Run("cold", func(b *testing.B) {
		b.SetBytes(bytes)
		for b.Loop() {
			bud := &budget.Budget{Counter: counter, Total: total}
			if _, err := Reduce(frags, &Options{Budget: bud}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("warm", func(b *testing.B) {
		b.SetBytes(bytes)
		bud := &budget.Budget{Counter: counter, Total: total}
		work := append([]Fragment(nil), frags...)
		if _, err := Reduce(work, &Options{Budget: bud}); err != nil {
			b.Fatal(err)
		}
		n := 0
		for b.Loop() {
			n++
			work[1000].Body = frags[1000].Body + fmt.Sprintf(" revision %d", n)
			if _, err := Reduce(work, &Options{Budget: bud}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkFitBaseline is the same reduction without a budget: the share of
// a warm fit that is not counting.
func BenchmarkFitBaseline(b *testing.B) {
	frags := benchFragments(2000, 500, 1)
	for b.Loop() {
		if _, err := Reduce(frags, nil); err != nil {
			b.Fatal(err)
		}
	}
}
