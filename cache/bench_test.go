package cache_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/internal/testkit/fakecache"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/transcript"
)

// transcript records n calls: agents of ten turns each, unattributed, with
// the usage a cache that follows Anthropic's rules reports.
func tr(b *testing.B, n int) []byte {
	var buf bytes.Buffer
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	j := journal.New(&buf, &journal.Options{Session: "bench", Clock: func() time.Time { return now }})
	fake := &fakecache.Anthropic{Min: 1024}
	var a *fakecache.Agent
	for i := range n {
		if i%10 == 0 {
			a = fakecache.NewAgent()
			a.System[2]["text"] = fmt.Sprintf("Agent %d.", i/10)
		} else {
			a.Answer("ok")
		}
		body := a.Turn(fmt.Sprintf("turn %d", i))
		m := journal.ModelFunc(func(context.Context, journal.Request) (journal.Response, error) {
			u, _ := fake.Serve(body, now)
			return journal.Response{Text: "ok", Usage: &payload.Usage{InputTokens: u.Input, CacheReadTokens: u.CacheRead, CacheWriteTokens: u.CacheWrite}}, nil
		})
		if _, err := j.Call(context.Background(), m, journal.Request{Call: fmt.Sprint(i), Body: body, Provider: payload.Anthropic, Unattributed: true}); err != nil {
			b.Fatal(err)
		}
		now = now.Add(time.Second)
	}
	j.Close()
	return buf.Bytes()
}

// BenchmarkCacheTranscript is `cache --transcript` on 1,000 and 10,000
// calls: verify, rebuild every call's request manifest, predict. Linear
// in the transcript's size when ns/call holds.
func BenchmarkCacheTranscript(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		data := tr(b, n)
		b.Run(fmt.Sprintf("calls=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				rep, err := transcript.Verify(bytes.NewReader(data), nil)
				if err != nil || !rep.OK() {
					b.Fatal(err)
				}
				rs, err := cache.FromTranscript(data, rep)
				if err != nil {
					b.Fatal(err)
				}
				if an := cache.Run(cache.Calls(rs), nil); len(an.Verdicts) != n {
					b.Fatal(len(an.Verdicts))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/call")
		})
	}
}
