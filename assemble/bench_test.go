package assemble

import (
	"fmt"
	"testing"
	"time"

	"github.com/promptloom/promptloom/digest"
	pjson "github.com/promptloom/promptloom/internal/json"
)

// benchSession is a 200-turn session of about 1 MB (tool results of 2 to
// 30 KB), with a window it fits, and with one that compacts it.
func benchSession(turns int) *Conversation {
	c := genSession(turns, 2000, 30000, 11)
	c.Window = 1 << 20
	return c
}

// BenchmarkAssemble assembles the last call of sessions of growing
// length: ns/op over turns should stay flat (linear growth). Compare the
// 200-turn one with BenchmarkParseHash, one parse and one hash of the same
// conversation's bytes.
func BenchmarkAssemble(b *testing.B) {
	for _, n := range []int{100, 200, 400, 800} {
		for _, window := range []string{"fits", "compacts"} {
			c := benchSession(n)
			if window == "compacts" {
				c.Window = 200000
			}
			b.Run(fmt.Sprintf("turns=%d/%s", n, window), func(b *testing.B) {
				b.SetBytes(int64(len(fileOf(b, c))))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := assembled(c, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkParseHash is the yardstick: one parse (the JSON reader's
// check) and one BLAKE3 of the conversation's file.
func BenchmarkParseHash(b *testing.B) {
	data := fileOf(b, benchSession(200))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := pjson.Check(data, nil); err != nil {
			b.Fatal(err)
		}
		digest.Bytes(data)
	}
}

// BenchmarkReadAssemble is BenchmarkAssemble's 200-turn session from its
// file: Read, then Assemble.
func BenchmarkReadAssemble(b *testing.B) {
	data := fileOf(b, benchSession(200))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		c, err := Read(data)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := assembled(c, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRatio alternates assembling each session with one parse and
// one hash of its file, and reports the ratio of the fastest of each
// (x-parse+hash) and the fastest assembly per turn (ns/turn): on a shared
// machine the fastest runs are the ones least disturbed. The ratio should
// stay near 1 and ns/turn flat as the turns grow.
func BenchmarkRatio(b *testing.B) {
	for _, n := range []int{100, 200, 400, 800} {
		c := benchSession(n)
		data := fileOf(b, c)
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			best, yard := time.Duration(1<<62), time.Duration(1<<62)
			for b.Loop() {
				t0 := time.Now()
				if _, err := assembled(c, nil); err != nil {
					b.Fatal(err)
				}
				best = min(best, time.Since(t0))
				t0 = time.Now()
				if err := pjson.Check(data, nil); err != nil {
					b.Fatal(err)
				}
				digest.Bytes(data)
				yard = min(yard, time.Since(t0))
			}
			b.ReportMetric(float64(best)/float64(yard), "x-parse+hash")
			b.ReportMetric(float64(best.Nanoseconds())/float64(n), "ns/turn")
			b.ReportMetric(float64(len(data)), "file-bytes")
		})
	}
}
