package postgres

import (
	"crypto/rand"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/promptloom/promptloom/journal"

	"golang.org/x/mod/sumdb/note"
)

// benchWorkers is how many workers append at once.
const benchWorkers = 8

// BenchmarkFleetAppend is eight workers, each its own journal and
// session, recording calls (request and response: two appends) at once:
// into one PostgreSQL store (a connection a worker), signed every 100 calls or
// not, against the baseline of one transcript file shared by eight
// journals (flock and fsync per append). calls/s is the whole fleet's.
func BenchmarkFleetAppend(b *testing.B) {
	skey, _, _ := note.GenerateKey(rand.Reader, "bench")
	signer, _ := note.NewSigner(skey)
	reqs := make([]journal.Request, 64)
	for i := range reqs {
		reqs[i] = request(b, fmt.Sprintf("c%d", i), i)
	}
	run := func(b *testing.B, open func(o *journal.Options) *journal.Journal, o journal.Options) {
		js := make([]*journal.Journal, benchWorkers)
		for w := range js {
			o := o
			o.Session = fmt.Sprintf("w%d", w)
			js[w] = open(&o)
		}
		var next atomic.Int64
		b.ReportAllocs()
		b.ResetTimer()
		start := time.Now()
		var wg sync.WaitGroup
		for _, j := range js {
			wg.Go(func() {
				for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
					if _, err := j.Call(ctx, echo, reqs[i%int64(len(reqs))]); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
		b.StopTimer()
		for _, j := range js {
			j.Close()
		}
	}
	b.Run("postgres", func(b *testing.B) {
		s := openPool(b, benchWorkers)
		run(b, func(o *journal.Options) *journal.Journal { return journal.NewSink(s.Sink(o.Session), o) }, journal.Options{})
	})
	b.Run("postgres-signed", func(b *testing.B) {
		s := openPool(b, benchWorkers)
		run(b, func(o *journal.Options) *journal.Journal { return journal.NewSink(s.Sink(o.Session), o) }, journal.Options{Signer: signer, CheckpointEvery: 100})
	})
	b.Run("file", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "t.jsonl")
		run(b, func(o *journal.Options) *journal.Journal {
			j, err := journal.Open(path, o)
			if err != nil {
				b.Fatal(err)
			}
			return j
		}, journal.Options{})
	})
}

// openPool opens a migrated store with n connections on a fresh schema.
func openPool(b *testing.B, n int) *Store {
	_, dsn := open(b)
	s, err := Open(ctx, withPool(b, dsn, n), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}
