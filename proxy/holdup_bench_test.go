package proxy_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/promptloom/promptloom/internal/testkit/fakecache"
	"github.com/promptloom/promptloom/internal/testkit/fakeprovider"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/proxy"
)

// BenchmarkSmallCallsBesideBigOnes measures whether big work holds up
// small calls: four clients, each in a session of its own, make 1 KB
// calls at once, through the proxy and straight to the upstream in turn,
// with nothing else under way (idle, and idle-again at the end), while
// 5 MB requests without a session header are admitted one after another
// (large-5MB), and while twenty clients keep the page open on
// /promptloom/events (page-20; each loaded the overview first) over a
// transcript of 5,000 calls. An op is one client's pair of calls. The
// added latency is the proxy's quantile less the upstream's called
// directly in the same condition (p50-added-ms, p99-added-ms);
// p99-proxy-ms is the proxy's own; x-idle is p99-added-ms over idle's,
// and x-idle-proxy the same of p99-proxy-ms, measured in the same run.
// Run it with a fixed count, as the table in docs/performance.md was:
// -benchtime 1000x.
func BenchmarkSmallCallsBesideBigOnes(b *testing.B) {
	const clients, watchers = 4, 20
	up := fakeprovider.New()
	defer up.Close()
	u, _ := url.Parse(up.URL)
	path := filepath.Join(b.TempDir(), "t.jsonl")
	p, err := proxy.New(&proxy.Options{Upstream: u, Open: func(s string) (*journal.Journal, error) {
		return journal.Open(path, &journal.Options{Session: s})
	}})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(p)
	defer func() { srv.Close(); p.Close() }()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	post := func(url, sess string, body []byte) error {
		req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if sess != "" {
			req.Header.Set("Promptloom-Session", sess)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("%s: %s", url, resp.Status)
		}
		return nil
	}

	// 5,000 calls in the transcript: 250 agent sessions of 20 turns, each
	// resending its history, made by eight clients at once.
	{
		const sessions, turns = 250, 20
		var wg sync.WaitGroup
		next := atomic.Int64{}
		errs := make(chan error, 8)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1)) - 1
					if i >= sessions {
						return
					}
					a := fakecache.NewAgent()
					for t := range turns {
						if err := post(srv.URL+"/v1/messages", fmt.Sprintf("page-%d", i), a.Turn(fmt.Sprintf("turn %d of %d: look at this file.", t, i))); err != nil {
							errs <- err
							return
						}
						a.Answer("I looked at it.")
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
	}

	// The small call: one message, 1 KB in all.
	small := []byte(`{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":"`)
	small = append(small, strings.Repeat("x", 1024-len(small)-4)...)
	small = append(small, `"}]}`...)
	var idleAdded, idleProxy time.Duration
	for _, cond := range []string{"idle", "large-5MB", "page-20", "idle-again"} {
		b.Run(cond, func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			var bg sync.WaitGroup
			var big atomic.Int64
			switch cond {
			case "large-5MB":
				// 5 MB requests to OpenAI's Chat Completions, back to
				// back, each a conversation of its own (no header: the
				// proxy finds its session by continuity).
				started := make(chan struct{})
				bg.Add(1)
				go func() {
					defer bg.Done()
					for i := 0; ctx.Err() == nil; i++ {
						large := []byte(fmt.Sprintf(`{"model":"gpt-4.1","messages":[{"role":"user","content":"%s %d: %s"}]}`,
							cond, i, strings.Repeat("a large paste. ", 5<<20/15)))
						req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/chat/completions", bytes.NewReader(large))
						req.Header.Set("Content-Type", "application/json")
						if i == 0 {
							close(started)
						}
						resp, err := hc.Do(req)
						if err != nil {
							continue
						}
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						big.Add(1)
					}
				}()
				<-started
			case "page-20":
				var loaded sync.WaitGroup
				for range watchers {
					loaded.Add(1)
					go func() {
						defer loaded.Done()
						resp, err := http.Get(srv.URL + "/promptloom/")
						if err != nil {
							b.Error(err)
							return
						}
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}()
				}
				loaded.Wait()
				for range watchers {
					watch(b, ctx, &bg, srv.URL)
				}
			}
			var (
				next          atomic.Int64
				mu            sync.Mutex
				direct, proxd []time.Duration
				wg            sync.WaitGroup
			)
			b.ResetTimer()
			for c := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sess := fmt.Sprintf("small-%s-%d", cond, c)
					var d, q []time.Duration
					for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
						// Which goes first alternates, so that neither
						// always follows the other.
						for k := range 2 {
							to, list := up.URL, &d
							if (int(i)+k)%2 == 0 {
								to, list = srv.URL, &q
							}
							sess := sess
							if to == up.URL {
								sess = ""
							}
							start := time.Now()
							if err := post(to+"/v1/messages", sess, small); err != nil {
								b.Error(err)
								return
							}
							*list = append(*list, time.Since(start))
						}
					}
					mu.Lock()
					direct, proxd = append(direct, d...), append(proxd, q...)
					mu.Unlock()
				}()
			}
			wg.Wait()
			b.StopTimer()
			cancel()
			bg.Wait()
			if len(proxd) == 0 || len(direct) == 0 {
				return
			}
			p50, p99 := quantile(proxd, 0.50), quantile(proxd, 0.99)
			added50, added99 := p50-quantile(direct, 0.50), p99-quantile(direct, 0.99)
			b.ReportMetric(ms(added50), "p50-added-ms")
			b.ReportMetric(ms(added99), "p99-added-ms")
			b.ReportMetric(ms(p99), "p99-proxy-ms")
			if cond == "large-5MB" {
				b.ReportMetric(float64(big.Load()), "big-calls")
			}
			if cond == "idle" {
				idleAdded, idleProxy = added99, p99
			} else if idleAdded > 0 {
				b.ReportMetric(float64(added99)/float64(idleAdded), "x-idle")
				b.ReportMetric(float64(p99)/float64(idleProxy), "x-idle-proxy")
			}
		})
	}
}

// quantile is the q-quantile of ds (nearest rank); it sorts ds.
func quantile(ds []time.Duration, q float64) time.Duration {
	slices.Sort(ds)
	i := int(q*float64(len(ds))+0.5) - 1
	return ds[min(max(i, 0), len(ds)-1)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
