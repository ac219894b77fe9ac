package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"runtime"
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

// patience bounds how long a test waits for what must happen at once: it
// fails only a proxy that never does it, however busy the machine.
const patience = 30 * time.Second

// hold is a blocking fake: the first time it is entered it signals and
// waits for release; later entries pass.
type hold struct {
	once, freed sync.Once
	entered     chan struct{}
	release     chan struct{}
}

// newHold returns a hold freed when the test ends, before the servers
// the test made are closed (cleanups run last first).
func newHold(t *testing.T) *hold {
	h := &hold{entered: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(h.free)
	return h
}

func (h *hold) free() { h.freed.Do(func() { close(h.release) }) }

func (h *hold) enter() {
	first := false
	h.once.Do(func() { first = true })
	if first {
		close(h.entered)
		<-h.release
	}
}

func (h *hold) wait(t *testing.T, what string) {
	t.Helper()
	select {
	case <-h.entered:
	case <-time.After(patience):
		t.Fatalf("%s never began", what)
	}
}

// postAsync sends a call and reports its status when it is answered.
func (g *rig) postAsync(body []byte, headers ...string) <-chan int {
	done := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("POST", g.srv.URL+"/v1/messages", bytes.NewReader(body))
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- 0
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	return done
}

// answered fails the test unless the call is answered 200 while
// something else is held.
func answered(t *testing.T, call <-chan int, while string) {
	t.Helper()
	select {
	case code := <-call:
		if code != 200 {
			t.Fatalf("an unrelated call while %s: status %d", while, code)
		}
	case <-time.After(patience):
		t.Fatalf("an unrelated call was held up while %s", while)
	}
}

var unrelated = []byte(`{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":"unrelated"}]}`)

// The verdicts a watched page needs are made outside
// the lock every call takes. A blocking fake holds their computation,
// and a call of another session is answered meanwhile.
func TestAWatchedPageDoesNotHoldUpCalls(t *testing.T) {
	var h *hold
	defer proxy.Hooks(func(string) { h.enter() }, nil, nil)()
	g := newRig(t, nil)
	h = newHold(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", g.srv.URL+"/promptloom/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	go io.Copy(io.Discard, resp.Body)
	first := g.postAsync(fakecache.NewAgent().Turn("hello"))
	h.wait(t, "the page's verdicts")
	answered(t, g.postAsync(unrelated, "Promptloom-Session", "other"), "a watched page's verdicts are made")
	h.free()
	<-first
}

// Loading the page makes its verdicts outside the lock.
func TestAPageLoadDoesNotHoldUpCalls(t *testing.T) {
	var h *hold
	defer proxy.Hooks(func(string) { h.enter() }, nil, nil)()
	g := newRig(t, nil)
	h = newHold(t)
	if code, out := g.post(t, "/v1/messages", fakecache.NewAgent().Turn("hello")); code != 200 {
		t.Fatal(code, out)
	}
	loaded := make(chan error, 1)
	go func() {
		resp, err := http.Get(g.srv.URL + "/promptloom/calls.json")
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		loaded <- err
	}()
	h.wait(t, "the page load's verdicts")
	answered(t, g.postAsync(unrelated, "Promptloom-Session", "other"), "the page loads")
	h.free()
	if err := <-loaded; err != nil {
		t.Fatal(err)
	}
}

// A call without Promptloom-Session has its manifest
// made (to find its session) outside the lock.
func TestAManifestBeingMadeDoesNotHoldUpCalls(t *testing.T) {
	var h *hold
	defer proxy.Hooks(nil, func() { h.enter() }, nil)()
	g := newRig(t, nil)
	h = newHold(t)
	big := g.postAsync(fakecache.NewAgent().Turn(strings.Repeat("a large paste. ", 1000)))
	h.wait(t, "the manifest")
	answered(t, g.postAsync(unrelated, "Promptloom-Session", "other"), "a manifest is made")
	h.free()
	if code := <-big; code != 200 {
		t.Fatalf("the large call: %d", code)
	}
}

// Opening a session's store is done outside the lock; a slow
// store holds up its own session only.
func TestOpeningAStoreDoesNotHoldUpCalls(t *testing.T) {
	up := fakeprovider.New()
	t.Cleanup(up.Close)
	o := &proxy.Options{}
	o.Upstream, _ = url.Parse(up.URL)
	g := &rig{up: up, path: filepath.Join(t.TempDir(), "proxy.jsonl")}
	var h *hold
	o.Open = func(session string) (*journal.Journal, error) {
		if session == "slow" {
			h.enter()
		}
		return journal.Open(g.path, &journal.Options{Session: session})
	}
	var err error
	if g.p, err = proxy.New(o); err != nil {
		t.Fatal(err)
	}
	g.srv = httptest.NewServer(g.p)
	t.Cleanup(g.srv.Close)
	h = newHold(t)
	slow := g.postAsync(unrelated, "Promptloom-Session", "slow")
	h.wait(t, "opening the slow store")
	answered(t, g.postAsync(unrelated, "Promptloom-Session", "fast"), "a store is opened")
	h.free()
	if code := <-slow; code != 200 {
		t.Fatalf("the slow session's call: %d", code)
	}
	g.closeAndVerify(t)
}

// Pages that load while the transcript is verified share
// that verification instead of each reading the transcript again.
func TestPageLoadsShareOneVerification(t *testing.T) {
	var calls atomic.Int32
	var joins atomic.Int32
	entered := make(chan struct{}, 8)
	release := make(chan struct{})
	waiting := make(chan struct{}, 8)
	defer proxy.Hooks(nil, nil, func() { joins.Add(1); waiting <- struct{}{} })()
	g := newRig(t, &proxy.Options{Verify: func() string {
		calls.Add(1)
		entered <- struct{}{}
		<-release
		return "ok"
	}})
	const loads = 4
	var wg sync.WaitGroup
	for range loads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get(g.srv.URL + "/promptloom/")
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	// Every load is either verifying or waiting on the verification.
	for range loads {
		select {
		case <-entered:
		case <-waiting:
		case <-time.After(patience):
			t.Fatal("the page loads never reached the verification")
		}
	}
	close(release)
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("%d page loads verified the transcript %d times, want once", loads, n)
	}
}

// The page never shows the upstream's credentials.
func TestThePageHidesTheUpstreamsCredentials(t *testing.T) {
	up := fakeprovider.New()
	t.Cleanup(up.Close)
	u, _ := url.Parse(up.URL)
	u.User = url.UserPassword("user", "s3cretPassw0rd")
	u.RawQuery = "key=AIzaSyA" + strings.Repeat("b", 32)
	path := filepath.Join(t.TempDir(), "proxy.jsonl")
	p, err := proxy.New(&proxy.Options{Upstream: u, Open: func(s string) (*journal.Journal, error) {
		return journal.Open(path, &journal.Options{Session: s})
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(func() { srv.Close(); p.Close() })
	page := get(t, srv.URL+"/promptloom/")
	if strings.Contains(page, "s3cretPassw0rd") || strings.Contains(page, strings.Repeat("b", 32)) || !strings.Contains(page, u.Host) {
		t.Errorf("the page: %s", page)
	}
	// A host the redactor leaves alone (punycode, non-ASCII) keeps no
	// credential on the page either.
	for _, raw := range []string{"https://user:hunter2pw@xn--bcher-kva.example/v1?key=hunter2key", "https://user:hunter2pw@bücher.example/v1?key=hunter2key"} {
		v, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		q, err := proxy.New(&proxy.Options{Upstream: v, Open: func(s string) (*journal.Journal, error) {
			return journal.Open(path, &journal.Options{Session: s})
		}})
		if err != nil {
			t.Fatal(err)
		}
		s := httptest.NewServer(q)
		page := get(t, s.URL+"/promptloom/")
		s.Close()
		q.Close()
		if strings.Contains(page, "hunter2") || !strings.Contains(page, "/v1") {
			t.Errorf("%s: the page shows %s", raw, page)
		}
	}
}

// An upstream's error body that echoes a credential is
// redacted on the page, in calls.json and on the event stream, as the
// transcript redacts it.
func TestThePageRedactsUpstreamErrors(t *testing.T) {
	g := newRig(t, nil)
	key := "sk-proj-" + strings.Repeat("Ab1", 20)
	g.up.Push(fakeprovider.Reply{Status: 401, Body: `{"error":{"message":"Incorrect API key provided: ` + key + `"}}`})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", g.srv.URL+"/promptloom/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if code, _ := g.post(t, "/v1/messages", unrelated); code != 401 {
		t.Fatalf("status %d", code)
	}
	// The events until the call's error row.
	r := bufio.NewReader(resp.Body)
	var events strings.Builder
	for !strings.Contains(events.String(), `"status":"error:`) {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err, events.String())
		}
		events.WriteString(line)
	}
	for what, text := range map[string]string{
		"the page":   get(t, g.srv.URL+"/promptloom/"),
		"calls.json": get(t, g.srv.URL+"/promptloom/calls.json"),
		"the events": events.String(),
	} {
		if strings.Contains(text, key) || !strings.Contains(text, "redacted") {
			t.Errorf("%s: %s", what, text)
		}
	}
}

func get(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// A body's declared length is not allocated before its
// bytes come: a request declaring 60 MB that sends ten bytes and hangs up
// costs the proxy about ten bytes, not 60 MB.
func TestADeclaredLengthIsNotAllocated(t *testing.T) {
	g := newRig(t, nil)
	const declared = 60 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range 3 {
		c, err := net.Dial("tcp", strings.TrimPrefix(g.srv.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"model\":", declared)
		c.(*net.TCPConn).CloseWrite()
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err == nil {
			resp.Body.Close()
		}
		c.Close()
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > declared/2 {
		t.Errorf("three requests declaring %d MB and sending 10 bytes allocated %d MB", declared>>20, got>>20)
	}
}

// A body that stalls is given up on, with the
// provider's error, instead of holding its connection for ever.
func TestAStalledBodyIsGivenUp(t *testing.T) {
	defer proxy.SetBodyTimeouts(50*time.Millisecond, time.Minute)()
	g := newRig(t, nil)
	c, err := net.Dial("tcp", strings.TrimPrefix(g.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"model\":")
	c.SetReadDeadline(time.Now().Add(patience))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), `"type":"error"`) || !strings.Contains(string(b), "stalled") {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
}
