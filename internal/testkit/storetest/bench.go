package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/promptloom/promptloom/eventlog"
)

// BenchAppend measures append throughput on the log open makes, as
// sub-benchmarks named name/appenders=A/batch=B[/shared|/own]: 1 and 8
// concurrent appenders on one log, appending single events or batches of
// 100; the 8 appenders either share one store (goroutines of one process:
// "shared") or each have their own (as 8 processes would: "own"). events/s
// counts events, not batches. open is called once per sub-benchmark and
// returns the function that opens one more store on its log.
func BenchAppend(b *testing.B, name string, open func(b *testing.B) func() eventlog.Store) {
	for _, c := range []struct {
		appenders int
		shared    bool
	}{{1, false}, {8, true}, {8, false}} {
		for _, batch := range []int{1, 100} {
			sub := fmt.Sprintf("%s/appenders=%d/batch=%d", name, c.appenders, batch)
			if c.appenders > 1 {
				sub += map[bool]string{true: "/shared", false: "/own"}[c.shared]
			}
			b.Run(sub, func(b *testing.B) {
				benchAppend(b, open(b), c.appenders, c.shared, batch)
			})
		}
	}
}

func benchAppend(b *testing.B, open func() eventlog.Store, appenders int, shared bool, batch int) {
	ctx := context.Background()
	stores := make([]eventlog.Store, appenders)
	for i := range stores {
		if shared && i > 0 {
			stores[i] = stores[0]
			continue
		}
		stores[i] = open()
		defer stores[i].Close()
	}
	drafts := make([]eventlog.Draft, batch)
	for i := range drafts {
		drafts[i] = eventlog.Draft{Kind: "offer", Actor: "uk", Audience: []string{"eu"},
			Payload: map[string]any{"round": i, "text": "The UK proposes 60% of the quota for UK waters."}}
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for a := range appenders {
		n := b.N / appenders
		if a < b.N%appenders {
			n++
		}
		wg.Go(func() {
			for range n {
				if _, err := stores[a].Append(ctx, drafts...); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N*batch)/time.Since(start).Seconds(), "events/s")
}
