package eventlog

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// BenchmarkAppend measures append throughput: 1 and 8 concurrent appenders
// on one log, appending single events or batches of 100; the 8 appenders
// either share one store (goroutines of one process: "shared") or each have
// their own (as 8 processes would: "own"). events/s counts events, not
// batches. Quoted in docs/performance.md.
func BenchmarkAppend(b *testing.B) {
	logs := []struct {
		name string
		open func(b *testing.B) func() Store
	}{
		{"SQLite", func(b *testing.B) func() Store {
			path := filepath.Join(b.TempDir(), "log.db")
			return func() Store {
				s, err := OpenSQLite(path)
				if err != nil {
					b.Fatal(err)
				}
				return s
			}
		}},
		{"Postgres", func(b *testing.B) func() Store {
			url := pgURL(b)
			return func() Store {
				s, err := OpenPostgres(context.Background(), url)
				if err != nil {
					b.Fatal(err)
				}
				return s
			}
		}},
		{"PostgresSerialFlush", func(b *testing.B) func() Store {
			url := pgURL(b)
			return func() Store {
				s, err := OpenPostgres(context.Background(), url, WithSerialFlush())
				if err != nil {
					b.Fatal(err)
				}
				return s
			}
		}},
	}
	for _, log := range logs {
		for _, c := range []struct {
			appenders int
			shared    bool
		}{{1, false}, {8, true}, {8, false}} {
			for _, batch := range []int{1, 100} {
				name := fmt.Sprintf("%s/appenders=%d/batch=%d", log.name, c.appenders, batch)
				if c.appenders > 1 {
					name += map[bool]string{true: "/shared", false: "/own"}[c.shared]
				}
				b.Run(name, func(b *testing.B) {
					benchAppend(b, log.open(b), c.appenders, c.shared, batch)
				})
			}
		}
	}
}

func benchAppend(b *testing.B, open func() Store, appenders int, shared bool, batch int) {
	ctx := context.Background()
	stores := make([]Store, appenders)
	for i := range stores {
		if shared && i > 0 {
			stores[i] = stores[0]
			continue
		}
		stores[i] = open()
		defer stores[i].Close()
	}
	drafts := make([]Draft, batch)
	for i := range drafts {
		drafts[i] = Draft{Kind: "offer", Actor: "uk", Audience: []string{"eu"},
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
