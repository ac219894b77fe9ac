package proxy_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/proxy"
)

// Clients that call at once are served over connections to the upstream
// that the proxy keeps, not dialled again for each call past the second
// (http.DefaultTransport keeps two idle connections a host).
func TestConcurrentCallsKeepTheirUpstreamConnections(t *testing.T) {
	const clients, rounds = 8, 6
	var dialled atomic.Int64
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	arrived := 0
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		// Every round's calls are at the upstream at once: the proxy
		// holds `clients` connections to it.
		mu.Lock()
		arrived++
		round := (arrived - 1) / clients
		cond.Broadcast()
		for arrived < (round+1)*clients {
			cond.Wait()
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4.1","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
	}))
	up.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dialled.Add(1)
		}
	}
	up.Start()
	t.Cleanup(up.Close)
	u, _ := url.Parse(up.URL)
	path := filepath.Join(t.TempDir(), "t.jsonl")
	p, err := proxy.New(&proxy.Options{Upstream: u, Open: func(s string) (*journal.Journal, error) {
		return journal.Open(path, &journal.Options{Session: s})
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(func() { srv.Close(); p.Close() })
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	for range rounds {
		var wg sync.WaitGroup
		for c := range clients {
			wg.Go(func() {
				body := fmt.Sprintf(`{"model":"gpt-4.1","messages":[{"role":"user","content":"hello from %d"}]}`, c)
				req, _ := http.NewRequest("POST", srv.URL+"/v1/chat/completions", bytes.NewReader([]byte(body)))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set(proxy.SessionHeader, fmt.Sprint("s", c))
				resp, err := client.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Errorf("status %d", resp.StatusCode)
				}
			})
		}
		wg.Wait()
	}
	if n := dialled.Load(); n > 2*clients {
		t.Errorf("%d calls in %d rounds of %d dialled the upstream %d times; want at most %d", clients*rounds, rounds, clients, n, 2*clients)
	}
}
