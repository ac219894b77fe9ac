package explain_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/internal/testkit/benchdata"

	"github.com/tidwall/gjson"
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

// explainFloor is the least any reader of the options must do: check the
// JSON (gjson.Valid), walk every item's content, and hash the file once.
func explainFloor(data []byte) {
	if !gjson.ValidBytes(data) {
		panic("invalid")
	}
	n := 0
	gjson.GetBytes(data, "system").ForEach(func(_, v gjson.Result) bool {
		n += len(v.Get("content").Str)
		return true
	})
	_ = digest.Bytes(data)
	if n == 0 {
		panic("no content")
	}
}

// BenchmarkExplainBudgetRatio alternates BenchmarkExplainBudget's call and
// the floor on the same options, and reports their ratio as x-floor, so
// load that comes and goes falls on both alike.
func BenchmarkExplainBudgetRatio(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		cs := benchdata.Chunks(n)
		data := benchdata.Options(cs)
		bud := &budget.Budget{Counter: budget.Bytes(), Total: benchdata.Bytes(cs) / 2}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var work, base time.Duration
			i := 0
			for b.Loop() {
				for k := range 2 {
					start := time.Now()
					if (i+k)%2 == 0 {
						explainFloor(data)
						base += time.Since(start)
						continue
					}
					if _, err := explain.Explain(data, &explain.Options{Budget: bud}); err != nil {
						b.Fatal(err)
					}
					work += time.Since(start)
				}
				i++
			}
			b.ReportMetric(float64(work)/float64(base), "x-floor")
		})
	}
}
