package proxy_test

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/harn/redact"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/internal/testkit/fakecache"
	"github.com/promptloom/promptloom/internal/testkit/fakeprovider"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/proxy"
)

// BenchmarkProxy is one model call through a bare httputil.ReverseProxy
// (the baseline) and through promptloom's proxy recording into a file,
// interleaved in one run: a 10 KB agent request answered as JSON (call),
// and a stream whose first byte is timed (first-byte, ns/first-byte).
// cpu-ns/op is the process's CPU a call (the fake upstream and the client
// are in the process too, alike in both).
func BenchmarkProxy(b *testing.B) {
	up := fakeprovider.New()
	defer up.Close()
	u, _ := url.Parse(up.URL)
	bare := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(u) }})
	defer bare.Close()
	// The floor: the bare proxy doing a journaled call's own work on each
	// call (one BLAKE3 and one redaction pass over each body, one JSON
	// escape of the answer into its line, one chain hash of the lines,
	// one parse of the answer, and each of the two lines appended to a
	// file and synced, the request's before it is sent), beside the bare
	// proxy and promptloom's.
	lines, err := os.OpenFile(filepath.Join(b.TempDir(), "floor.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	defer lines.Close()
	floorRT := rtFunc(func(r *http.Request) (*http.Response, error) {
		reqBody, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(reqBody))
		digest.Bytes(reqBody)
		red, _ := redact.JSON(reqBody)
		lines.Write(append(red, '\n'))
		lines.Sync()
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		respBody, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		digest.Bytes(respBody)
		line := pjson.AppendString(nil, redact.String(string(respBody)))
		digest.Bytes(line)
		lines.Write(append(line, '\n'))
		lines.Sync()
		payload.Summarize(payload.Anthropic, respBody, false)
		resp.Body = io.NopCloser(bytes.NewReader(respBody))
		return resp, nil
	})
	floor := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(u) }, Transport: floorRT})
	defer floor.Close()
	path := filepath.Join(b.TempDir(), "bench.jsonl")
	p, err := proxy.New(&proxy.Options{Upstream: u, Open: func(s string) (*journal.Journal, error) {
		return journal.Open(path, &journal.Options{Session: s})
	}})
	if err != nil {
		b.Fatal(err)
	}
	ours := httptest.NewServer(p)
	defer func() { ours.Close(); p.Close() }()
	body := fakecache.NewAgent().Turn("Where is main?")
	stream := bytes.Replace(body, []byte(`"max_tokens":1024`), []byte(`"max_tokens":1024,"stream":true`), 1)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	post := func(b *testing.B, base string, body []byte) *http.Response {
		req, _ := http.NewRequest("POST", base+"/v1/messages", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		// One session a request: the benchmark measures a call, not a
		// session that grows.
		req.Header.Set("Promptloom-Session", "bench")
		resp, err := client.Do(req)
		if err != nil || resp.StatusCode != 200 {
			b.Fatal(err, resp)
		}
		return resp
	}
	for _, s := range []struct{ name, base string }{{"bare", bare.URL}, {"floor", floor.URL}, {"promptloom", ours.URL}} {
		b.Run("call/"+s.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			cpu := cpuTime()
			for b.Loop() {
				resp := post(b, s.base, body)
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
		if s.name == "floor" {
			continue
		}
		b.Run("first-byte/"+s.name, func(b *testing.B) {
			var first time.Duration
			for b.Loop() {
				start := time.Now()
				resp := post(b, s.base, stream)
				r := bufio.NewReader(resp.Body)
				if _, err := r.ReadByte(); err != nil {
					b.Fatal(err)
				}
				first += time.Since(start)
				io.Copy(io.Discard, r)
				resp.Body.Close()
			}
			b.ReportMetric(float64(first.Nanoseconds())/float64(b.N), "ns/first-byte")
		})
	}
}

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
