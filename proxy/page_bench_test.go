package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/promptloom/promptloom/internal/testkit/fakecache"
	"github.com/promptloom/promptloom/internal/testkit/fakeprovider"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/proxy"
)

// BenchmarkTurnsWithThePageOpen measures what a watched page costs: 100
// turns of one agent conversation (no session header, so the proxy finds
// the session by continuity), with no page open (none) and with clients
// on /promptloom/events (events-1, events-20), interleaved in one run so
// that the ratio to none is read off one machine's state. ns/op is 100
// turns; cpu-ns/op the process's CPU for them (the fake upstream and the
// client are in the process too, alike in every case), the figure a busy
// machine disturbs least.
func BenchmarkTurnsWithThePageOpen(b *testing.B) {
	const turns = 100
	for _, watchers := range []int{0, 1, 20, 0} {
		name := "none"
		if watchers > 0 {
			name = fmt.Sprintf("events-%d", watchers)
		}
		b.Run(name, func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				up := fakeprovider.New()
				u, _ := url.Parse(up.URL)
				path := filepath.Join(b.TempDir(), "t.jsonl")
				p, err := proxy.New(&proxy.Options{Upstream: u, Open: func(s string) (*journal.Journal, error) {
					return journal.Open(path, &journal.Options{Session: s})
				}})
				if err != nil {
					b.Fatal(err)
				}
				srv := httptest.NewServer(p)
				ctx, cancel := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				for range watchers {
					watch(b, ctx, &wg, srv.URL)
				}
				a := fakecache.NewAgent()
				bodies := make([][]byte, 0, turns)
				for i := range turns {
					bodies = append(bodies, a.Turn(fmt.Sprintf("turn %d: %s", i, strings.Repeat("look at this file. ", 20))))
					a.Answer(strings.Repeat("I looked. ", 30))
				}
				b.StartTimer()
				start := cpuTime()
				for _, body := range bodies {
					resp, err := http.Post(srv.URL+"/v1/messages", "application/json", bytes.NewReader(body))
					if err != nil || resp.StatusCode != 200 {
						b.Fatal(err, resp)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				b.StopTimer()
				cpu += cpuTime() - start
				cancel()
				wg.Wait()
				srv.Close()
				p.Close()
				up.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// watch opens /promptloom/events and reads it until ctx ends.
func watch(tb testing.TB, ctx context.Context, wg *sync.WaitGroup, base string) {
	tb.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/promptloom/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	r := bufio.NewReader(resp.Body)
	if _, err := r.ReadString('\n'); err != nil {
		tb.Fatal(err)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer resp.Body.Close()
		io.Copy(io.Discard, r)
	}()
}

// BenchmarkAnUnrelatedCallBeside measures what other work costs a small call:
// how long a one-message call in its own session takes
// while the page is loaded over a long session (page-load), or while a
// 15 MB OpenAI request is admitted without a session header (large-request) or
// with one (large-request-named), beside the same call alone (alone),
// interleaved in one run. worst-ms is the slowest of the small calls made
// one after another while the other work was under way.
func BenchmarkAnUnrelatedCallBeside(b *testing.B) {
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
	// A 350-turn session on the page.
	a := fakecache.NewAgent()
	for i := range 350 {
		resp, err := http.Post(srv.URL+"/v1/messages", "application/json", bytes.NewReader(a.Turn(fmt.Sprintf("turn %d", i))))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		a.Answer("done")
	}
	// 15 MB to OpenAI's Chat Completions, whose tokens are counted with
	// o200k_base when the manifest is made.
	large := []byte(`{"model":"gpt-4.1","messages":[{"role":"user","content":"` + strings.Repeat("a large paste. ", 1<<20) + `"}]}`)
	small := []byte(`{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`)
	one := func(b *testing.B, i int) time.Duration {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/messages", bytes.NewReader(small))
		req.Header.Set("Promptloom-Session", fmt.Sprintf("small-%d", i))
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			b.Fatal(err, resp)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return time.Since(start)
	}
	n := 0
	for _, beside := range []string{"alone", "page-load", "large-request", "large-request-named", "alone"} {
		b.Run(beside, func(b *testing.B) {
			var worst time.Duration
			for b.Loop() {
				var wg sync.WaitGroup
				started := make(chan struct{})
				switch beside {
				case "page-load":
					wg.Add(1)
					go func() {
						defer wg.Done()
						close(started)
						resp, err := http.Get(srv.URL + "/promptloom/calls.json")
						if err == nil {
							io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
						}
					}()
				case "large-request", "large-request-named":
					wg.Add(1)
					go func() {
						defer wg.Done()
						close(started)
						req, _ := http.NewRequest("POST", srv.URL+"/v1/chat/completions", bytes.NewReader(large))
						if beside == "large-request-named" {
							req.Header.Set("Promptloom-Session", "large")
						}
						resp, err := http.DefaultClient.Do(req)
						if err == nil {
							io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
						}
					}()
				default:
					close(started)
				}
				<-started
				// Small calls one after another for as long as the other
				// work is under way: the worst is the stall.
				over := make(chan struct{})
				go func() { wg.Wait(); close(over) }()
				for {
					n++
					worst = max(worst, one(b, n))
					select {
					case <-over:
					default:
						continue
					}
					break
				}
			}
			b.ReportMetric(float64(worst.Microseconds())/1000, "worst-ms")
		})
	}
}
