package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/internal/testkit/fakecache"
	"github.com/promptloom/promptloom/internal/testkit/fakeprovider"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/proxy"
	"github.com/promptloom/promptloom/transcript"
)

// rig is a fake provider (whose Anthropic usage follows the documented
// cache rules), a proxy in front of it recording into a transcript file,
// and the proxy's URL.
type rig struct {
	up    *fakeprovider.Server
	p     *proxy.Proxy
	srv   *httptest.Server
	path  string
	cache *fakecache.Anthropic
}

func newRig(t *testing.T, o *proxy.Options) *rig {
	t.Helper()
	g := &rig{up: fakeprovider.New(), cache: &fakecache.Anthropic{Min: 1024}}
	g.up.UsageFor(func(provider string, body []byte) (fakeprovider.Usage, bool) {
		if provider != "anthropic" {
			return fakeprovider.Usage{}, false
		}
		u, err := g.cache.Serve(body, time.Now())
		if err != nil {
			return fakeprovider.Usage{}, false
		}
		return fakeprovider.Usage{Input: u.Input, Output: 3, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}, true
	})
	t.Cleanup(g.up.Close)
	g.path = filepath.Join(t.TempDir(), "proxy.jsonl")
	if o == nil {
		o = &proxy.Options{}
	}
	o.Upstream, _ = url.Parse(g.up.URL)
	o.Open = func(session string) (*journal.Journal, error) {
		return journal.Open(g.path, &journal.Options{Session: session})
	}
	var err error
	if g.p, err = proxy.New(o); err != nil {
		t.Fatal(err)
	}
	g.srv = httptest.NewServer(g.p)
	t.Cleanup(g.srv.Close)
	return g
}

// post sends a body to path with headers, returning the status and body.
func (g *rig) post(t *testing.T, path string, body []byte, headers ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", g.srv.URL+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", "sk-ant-api03-"+strings.Repeat("k", 40))
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// closeAndVerify closes the proxy and verifies what it wrote.
func (g *rig) closeAndVerify(t *testing.T) (*transcript.Report, []byte) {
	t.Helper()
	g.srv.Close()
	if err := g.p.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(g.path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := transcript.Verify(bytes.NewReader(data), nil)
	if err != nil || !rep.OK() {
		var w strings.Builder
		if rep != nil {
			rep.WriteText(&w)
		}
		t.Fatalf("verify: %v\n%s", err, w.String())
	}
	return rep, data
}

// A harness that knows nothing of promptloom: its calls are recorded
// whole, its conversation is one session by prefix continuity, its
// credentials never reach the transcript, and everything that is not a
// model call passes through unrecorded.
func TestAnAgentThroughTheProxy(t *testing.T) {
	g := newRig(t, nil)
	a := fakecache.NewAgent()
	for i, user := range []string{strings.Repeat("Look at the parser. ", 10), "And the lexer?", "Thanks."} {
		if i > 0 {
			a.Answer("ok")
		}
		if code, out := g.post(t, "/v1/messages", a.Turn(user)); code != 200 || !strings.Contains(out, `"ok"`) {
			t.Fatalf("turn %d: %d %s", i+1, code, out)
		}
	}
	// Another conversation, named by its headers.
	if code, _ := g.post(t, "/v1/messages", fakecache.NewAgent().Turn("Hello."), "Promptloom-Call", "planner/turn-1", "Promptloom-Session", "planner"); code != 200 {
		t.Fatal(code)
	}
	// Not a model call: passed on, not recorded.
	resp, err := http.Get(g.srv.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, r := range g.up.Requests() {
		if r.Header.Get("Promptloom-Call") != "" || r.Header.Get("Promptloom-Session") != "" {
			t.Errorf("the upstream saw promptloom's headers: %v", r.Header)
		}
		if r.Provider == "anthropic" && !strings.HasPrefix(r.Header.Get("x-api-key"), "sk-ant-api03-") {
			t.Errorf("the credential did not reach the upstream")
		}
	}
	rep, data := g.closeAndVerify(t)
	if len(rep.Calls) != 4 || rep.Unattributed != 4 {
		t.Fatalf("%d calls, %d unattributed", len(rep.Calls), rep.Unattributed)
	}
	if bytes.Contains(data, []byte("sk-ant-api03")) || bytes.Contains(data, []byte("x-api-key")) {
		t.Error("a credential reached the transcript")
	}
	sessions := map[string]int{}
	for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var line struct{ Kind, Session, Call string }
		json.Unmarshal(l, &line)
		if line.Kind == "provider_call_request" {
			sessions[line.Session]++
			if line.Session == "planner" && line.Call != "planner/turn-1" {
				t.Errorf("named call %q", line.Call)
			}
		}
	}
	if len(sessions) != 2 || sessions["planner"] != 1 {
		t.Errorf("sessions %v", sessions)
	}
	if n := len(g.up.Requests()); n != 5 {
		t.Errorf("the upstream saw %d requests, want 5", n)
	}
}

// The proxy holds a call to its prompt when given one: a stale prompt is
// refused with the provider's own error, a 400 the SDKs do not retry, and
// nothing reaches the upstream.
func TestAStalePromptIsRefusedInTheProvidersShape(t *testing.T) {
	x, err := explain.Explain([]byte(`{"system":"You are terse."}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	g := newRig(t, &proxy.Options{Prompt: func(string) (*explain.Explanation, error) { return x, nil }})
	code, out := g.post(t, "/v1/messages", []byte(`{"model":"claude-sonnet-4-5","max_tokens":5,"system":"You are verbose.","messages":[{"role":"user","content":"hi"}]}`))
	var e struct {
		Type  string
		Error struct{ Type, Message string }
	}
	if err := json.Unmarshal([]byte(out), &e); err != nil || code != 400 || e.Type != "error" || e.Error.Type != "invalid_request_error" ||
		!strings.Contains(e.Error.Message, "promptloom refused") {
		t.Fatalf("%d %s", code, out)
	}
	if n := len(g.up.Requests()); n != 0 {
		t.Errorf("%d requests reached the upstream", n)
	}
	// The page does not show the refused call in flight for ever.
	resp, err := http.Get(g.srv.URL + "/promptloom/calls.json")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if bytes.Contains(page, []byte("in flight")) || !bytes.Contains(page, []byte("refused by promptloom before it was sent")) {
		t.Errorf("the page: %s", page)
	}
	if code, _ := g.post(t, "/v1/messages", []byte(`{"model":"claude-sonnet-4-5","max_tokens":5,"system":"You are terse.","messages":[{"role":"user","content":"hi"}]}`)); code != 200 {
		t.Errorf("the right prompt: %d", code)
	}
	rep, _ := g.closeAndVerify(t)
	if len(rep.Calls) != 1 || rep.Unattributed != 0 {
		t.Errorf("%d calls, %d unattributed", len(rep.Calls), rep.Unattributed)
	}
}

// Hostile requests are clear refusals in the provider's shape: a body over
// the limit, a call name holding a control character, a body that is not
// JSON, a text with no canonical form.
func TestHostileRequests(t *testing.T) {
	g := newRig(t, &proxy.Options{MaxBodyBytes: 1000})
	for name, c := range map[string]struct {
		path, body string
		headers    []string
		code       int
		shape      string
	}{
		"over the limit":      {"/v1/messages", `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", 2000) + `"}]}`, nil, 413, `"type":"request_too_large"`},
		"a control char":      {"/v1/messages", `{"model":"m","messages":[]}`, []string{"Promptloom-Call", "a\x1b[31mb"}, 400, `"type":"error"`},
		"not JSON, OpenAI":    {"/v1/chat/completions", `{"model":`, nil, 400, `"code":"promptloom_invalid_request_error"`},
		"a key twice, Gemini": {"/v1beta/models/gemini-2.5-flash:generateContent", `{"contents":[],"contents":[]}`, nil, 400, `"status":"INVALID_ARGUMENT"`},
		"a lone surrogate":    {"/v1/messages", `{"model":"m","system":"a\ud800","messages":[]}`, nil, 400, `"type":"invalid_request_error"`},
	} {
		req, _ := http.NewRequest("POST", g.srv.URL+c.path, strings.NewReader(c.body))
		for i := 0; i+1 < len(c.headers); i += 2 {
			req.Header[c.headers[i]] = []string{c.headers[i+1]}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			// Go's client refuses to send some header bytes at all.
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.code || !strings.Contains(string(b), c.shape) || resp.Header.Get("X-Should-Retry") != "false" {
			t.Errorf("%s: %d %s %v", name, resp.StatusCode, b, resp.Header)
		}
	}
	if n := len(g.up.Requests()); n != 0 {
		t.Errorf("%d requests reached the upstream", n)
	}
}

// The page is served on loopback only without a token, and with one only
// to a request that gives it.
func TestThePageIsLoopbackOnly(t *testing.T) {
	for _, c := range []struct {
		token, remote, auth string
		code                int
	}{
		{"", "127.0.0.1:5000", "", 200},
		{"", "[::1]:5000", "", 200},
		{"", "10.1.2.3:5000", "", 403},
		{"s3cret", "10.1.2.3:5000", "", 403},
		{"s3cret", "10.1.2.3:5000", "Bearer s3cret", 200},
		{"s3cret", "127.0.0.1:5000", "Bearer wrong", 403},
	} {
		g := newRig(t, &proxy.Options{UIToken: c.token})
		req := httptest.NewRequest("GET", "/promptloom/", nil)
		req.RemoteAddr = c.remote
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		w := httptest.NewRecorder()
		g.p.ServeHTTP(w, req)
		if w.Code != c.code {
			t.Errorf("token %q from %s with %q: %d", c.token, c.remote, c.auth, w.Code)
		}
	}
}

// A stream's first bytes reach the client while the upstream is still
// sending; a client that goes away mid-stream is recorded as closed early.
func TestStreamsPassAsTheyCome(t *testing.T) {
	g := newRig(t, nil)
	release := make(chan struct{})
	g.up.Push(fakeprovider.Reply{Text: strings.Repeat("word ", 50), StallAfter: 3, Release: release})
	body := []byte(`{"model":"claude-sonnet-4-5","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	req, _ := http.NewRequest("POST", g.srv.URL+"/v1/messages", bytes.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(resp.Body)
	line, err := r.ReadString('\n') // arrives while the upstream stalls
	if err != nil || !strings.HasPrefix(line, "event: message_start") {
		t.Fatalf("%q %v", line, err)
	}
	resp.Body.Close() // the client goes away mid-stream
	defer close(release)
	// The transcript says so once the proxy has seen it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, _ := os.ReadFile(g.path)
		if bytes.Contains(data, []byte("provider_call_error")) {
			if !bytes.Contains(data, []byte("closed early")) && !bytes.Contains(data, []byte("cancelled")) {
				t.Errorf("outcome: %s", data)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no outcome recorded: %s", data)
		}
		time.Sleep(10 * time.Millisecond)
	}
	g.closeAndVerify(t)
}

// Many concurrent streaming clients through one proxy: every call is
// recorded once, in order per session, and the transcript verifies.
func TestConcurrentStreams(t *testing.T) {
	g := newRig(t, nil)
	const n = 64
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for turn := 1; turn <= 2; turn++ {
				body := fmt.Sprintf(`{"model":"claude-sonnet-4-5","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"client %d turn %d"}]}`, i, turn)
				req, _ := http.NewRequest("POST", g.srv.URL+"/v1/messages", strings.NewReader(body))
				req.Header.Set("Promptloom-Session", fmt.Sprintf("client-%d", i))
				req.Header.Set("Promptloom-Call", fmt.Sprintf("turn-%d", turn))
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	rep, data := g.closeAndVerify(t)
	if len(rep.Calls) != 2*n {
		t.Fatalf("%d calls recorded, want %d", len(rep.Calls), 2*n)
	}
	last := map[string]string{}
	for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var line struct{ Kind, Session, Call string }
		json.Unmarshal(l, &line)
		if line.Kind != "provider_call_request" {
			continue
		}
		if last[line.Session] == "" && line.Call != "turn-1" || last[line.Session] == "turn-1" && line.Call != "turn-2" {
			t.Errorf("session %s: %s after %q", line.Session, line.Call, last[line.Session])
		}
		last[line.Session] = line.Call
	}
}

// The page lists the calls, and a call's page explains its whole request.
func TestThePageShowsTheCalls(t *testing.T) {
	g := newRig(t, nil)
	a := fakecache.NewAgent()
	g.post(t, "/v1/messages", a.Turn("hi"))
	a.Answer("ok")
	a.Tools[3]["description"] = "changed"
	g.post(t, "/v1/messages", a.Turn("again"))
	get := func(path string) string {
		resp, err := http.Get(g.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if page := get("/promptloom/"); !strings.Contains(page, `id="call-2"`) || !strings.Contains(page, "/tools/3") {
		t.Errorf("overview: %s", page)
	}
	if page := get("/promptloom/call/2"); !strings.Contains(page, "/tools/3") || !strings.Contains(page, "tool Bash: description changed") {
		t.Errorf("call page: %s", page)
	}
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", g.srv.URL+"/promptloom/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(resp.Body)
	r.ReadString('\n') // the comment that opens the stream
	go func() {
		resp, err := http.Post(g.srv.URL+"/v1/messages", "application/json", bytes.NewReader(fakecache.NewAgent().Turn("a third")))
		if err == nil {
			resp.Body.Close()
		}
	}()
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "data: ") && strings.Contains(line, `"seq":3`) {
			break
		}
	}
	cancel()
	resp.Body.Close()
	g.closeAndVerify(t)
}

// A request smuggling attempt: a Content-Length and a chunked
// Transfer-Encoding both, then a second request behind the chunked body's
// end. Go's server frames the first by its chunked encoding (RFC 9112
// 6.3: Transfer-Encoding overrides Content-Length), so its body is empty
// and the proxy refuses it in the provider's shape; the second is a
// request of its own, answered in its turn. What must hold is that the
// two are never read as one: the upstream sees only the second, whole,
// and nothing of the first.
func TestSmugglingIsRefused(t *testing.T) {
	g := newRig(t, nil)
	c, err := net.Dial("tcp", strings.TrimPrefix(g.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := `{"model":"claude-sonnet-4-5","max_tokens":8,"messages":[{"role":"user","content":"second"}]}`
	fmt.Fprintf(c, "POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nPOST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", 5, len(body), body)
	br := bufio.NewReader(c)
	first, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, first.Body)
	first.Body.Close()
	if first.StatusCode != 400 || first.Header.Get("X-Should-Retry") != "false" {
		t.Errorf("the ambiguous request: status %d, %v", first.StatusCode, first.Header)
	}
	// Waiting for the second answer makes the upstream's count final.
	if second, err := http.ReadResponse(br, nil); err == nil {
		io.Copy(io.Discard, second.Body)
		second.Body.Close()
	}
	reqs := g.up.Requests()
	if len(reqs) > 1 || len(reqs) == 1 && string(reqs[0].Body) != body {
		t.Errorf("the upstream saw %d request(s): %+v", len(reqs), reqs)
	}
}

// An upstream that resets the connection: the client gets the provider's
// error shape (502), and the transcript records the failure, whole.
func TestAnUpstreamThatResets(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			c.Close()
		}
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	path := filepath.Join(t.TempDir(), "reset.jsonl")
	p, err := proxy.New(&proxy.Options{Upstream: u, Open: func(s string) (*journal.Journal, error) {
		return journal.Open(path, &journal.Options{Session: s})
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	resp, err := http.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(`{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 502 || !strings.Contains(string(b), `"type":"error"`) {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
	srv.Close()
	p.Close()
	data, _ := os.ReadFile(path)
	rep, err := transcript.Verify(bytes.NewReader(data), nil)
	if err != nil || len(rep.Calls) != 1 || !bytes.Contains(data, []byte("provider_call_error")) || !bytes.Contains(data, []byte("EOF")) {
		t.Fatalf("%v: %s", err, data)
	}
}

// The page keeps the latest calls only, however long the proxy runs; the
// transcript keeps them all.
func TestThePageKeepsTheLatestCalls(t *testing.T) {
	defer proxy.SetKeepCalls(3)()
	g := newRig(t, nil)
	for i := range 5 {
		g.post(t, "/v1/messages", []byte(fmt.Sprintf(`{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":"call %d"}]}`, i)))
	}
	resp, err := http.Get(g.srv.URL + "/promptloom/calls.json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct{ Seq int }
	json.NewDecoder(resp.Body).Decode(&rows)
	resp.Body.Close()
	if len(rows) != 3 || rows[0].Seq != 3 || rows[2].Seq != 5 {
		t.Errorf("rows %+v", rows)
	}
	if r, _ := http.Get(g.srv.URL + "/promptloom/call/1"); r.StatusCode != 404 {
		t.Errorf("an evicted call: %d", r.StatusCode)
	}
	if rep, _ := g.closeAndVerify(t); len(rep.Calls) != 5 {
		t.Errorf("%d calls in the transcript", len(rep.Calls))
	}
}

// An upstream given with a path (OpenAI's https://api.openai.com/v1) is
// not prefixed again to a request whose path already holds it (an SDK
// whose base URL ends in /v1).
func TestAnUpstreamPathIsNotDoubled(t *testing.T) {
	var got []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.Path)
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL + "/v1")
	p, err := proxy.New(&proxy.Options{Upstream: u, Open: func(s string) (*journal.Journal, error) {
		return journal.Open(filepath.Join(t.TempDir(), "t.jsonl"), &journal.Options{Session: s})
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	defer srv.Close()
	for _, path := range []string{"/v1/models", "/models", "/v1x/models", "/v1"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if want := []string{"/v1/models", "/v1/models", "/v1/v1x/models", "/v1"}; !slices.Equal(got, want) {
		t.Errorf("the upstream saw %q, want %q", got, want)
	}
	p.Close()
}
