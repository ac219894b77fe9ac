package promptloom

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/budget"

	"github.com/google/go-cmp/cmp"
)

// TestParallelMatchesSerial: settling rows on two cores gives the same
// reduction, byte for byte and row for row, as settling them on one, with
// and without a budget, on bodies full of secrets, near-misses, blank
// bodies and gates.
func TestParallelMatchesSerial(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	defer func(old int) { parallelBytes = old }(parallelBytes)
	bits := []string{"token", ":", "=", " abc123", "Bearer", " abcdefghijklmnop", "AKIAIOSFODNN7EXAMPLE",
		"ghp_" + strings.Repeat("a", 36), "word", "é", " ", "\n", "password", "'secret1'", "sk-" + strings.Repeat("b", 24)}
	r := rand.New(rand.NewPCG(5, 9))
	active := &Options{Tools: []string{"read"}}
	for trial := range 300 {
		frags := make([]Fragment, 1+r.IntN(40))
		for i := range frags {
			var b strings.Builder
			for n := r.IntN(12); n > 0; n-- {
				b.WriteString(bits[r.IntN(len(bits))])
			}
			f := Fragment{ID: fmt.Sprintf("f%d", i), Source: "t", Body: b.String(),
				Register: []budget.Register{budget.Binding, budget.Considered, budget.Craft, budget.Generated}[r.IntN(4)], Rank: r.IntN(3)}
			switch r.IntN(6) {
			case 0:
				f.RequiresTools = []string{"read"}
			case 1:
				f.RequiresTools = []string{"write"}
			case 2:
				f.Bucket = After
			}
			frags[i] = f
		}
		opts := *active
		if trial%2 == 1 {
			opts.Budget = &budget.Budget{Counter: budget.Bytes(), Total: r.IntN(400)}
		}
		parallelBytes = math.MaxInt
		serial, serr := Reduce(frags, &opts)
		parallelBytes = 0
		parallel, perr := Reduce(frags, &opts)
		if fmt.Sprint(serr) != fmt.Sprint(perr) {
			t.Fatalf("trial %d: serial error %v, parallel %v", trial, serr, perr)
		}
		if diff := cmp.Diff(serial, parallel, cmp.AllowUnexported(Row{})); diff != "" {
			t.Fatalf("trial %d (-serial +parallel):\n%s", trial, diff)
		}
	}
}
