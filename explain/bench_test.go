package explain_test

import (
	"fmt"
	"testing"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/internal/testkit/benchdata"
)

// BenchmarkExplainBudget is the budgeted library call a harness makes:
// explain.Explain on n prioritized fragments (about 390 bytes each, ranks
// 0-99 in the considered register) held to half their bytes, bytes as
// tokens. It is the Go side of bench/peer.
func BenchmarkExplainBudget(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		cs := benchdata.Chunks(n)
		data := benchdata.Options(cs)
		bud := &budget.Budget{Counter: budget.Bytes(), Total: benchdata.Bytes(cs) / 2}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				x, err := explain.Explain(data, &explain.Options{Budget: bud})
				if err != nil {
					b.Fatal(err)
				}
				if x.Budget.Shed == 0 {
					b.Fatal("nothing shed")
				}
			}
		})
	}
}
