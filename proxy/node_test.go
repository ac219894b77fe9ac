package proxy_test

// The official TypeScript SDKs through the proxy: each script in
// testdata/node runs one SDK, pointed at the proxy in front of a fake
// provider, through two turns with a tool call, a stream, a retry after a
// 429 and a refused stale prompt, and prints what the SDK returned or
// raised. The SDKs come from npm (.ci/run installs them into a temporary
// directory named by PROMPTLOOM_TEST_NODE_MODULES); without node or the
// SDK the test skips, saying so.

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/internal/testkit/fakeprovider"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/proxy"
)

// nodeModulesEnv names the directory holding the node_modules the SDKs
// are resolved from.
const nodeModulesEnv = "PROMPTLOOM_TEST_NODE_MODULES"

// nodeFor returns the node binary and a working directory in which
// script (and common.mjs) resolve pkg from $PROMPTLOOM_TEST_NODE_MODULES,
// or skips t. ES modules ignore NODE_PATH: they resolve a bare specifier
// from the importing file's directory up, so the scripts are copied into
// a temporary directory beside a node_modules link.
func nodeFor(t *testing.T, pkg string) (node, dir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH: the Node SDK tests are skipped (.ci/run installs Debian's nodejs and npm)")
	}
	mods := os.Getenv(nodeModulesEnv)
	if mods == "" {
		t.Skipf("%s is unset: the Node SDK tests are skipped (.ci/run sets it: npm install --prefix DIR @anthropic-ai/sdk openai @google/genai)", nodeModulesEnv)
	}
	mods, err = filepath.Abs(mods)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(mods, "node_modules", pkg, "package.json")); err != nil {
		t.Skipf("%s is not installed in %s=%s: skipped (npm install --prefix %s %s)", pkg, nodeModulesEnv, mods, mods, pkg)
	}
	dir = t.TempDir()
	if err := os.Symlink(filepath.Join(mods, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	scripts, _ := filepath.Glob(filepath.Join("testdata", "node", "*.mjs"))
	for _, s := range scripts {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(s)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return node, dir
}

// sdkRig is the proxy rig with the prompt held to "You are terse.", in
// front of a fake provider that gzips its JSON answers when asked to, as
// the real services do (the SDKs ask: Accept-Encoding: gzip, deflate),
// and behind a server that counts the requests the SDK sends by their
// Promptloom-Call header.
type sdkRig struct {
	*rig
	front *httptest.Server

	mu      sync.Mutex
	sent    map[string]int
	gzipped int // the answers the upstream gzipped
}

func newSDKRig(t *testing.T) *sdkRig {
	t.Helper()
	x, err := explain.Explain([]byte(`{"system":"You are terse."}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	g := &sdkRig{rig: &rig{up: fakeprovider.New()}, sent: map[string]int{}}
	t.Cleanup(g.up.Close)
	up := httptest.NewServer(g.gzipJSON(g.up.Config.Handler))
	t.Cleanup(up.Close)
	g.path = filepath.Join(t.TempDir(), "proxy.jsonl")
	o := &proxy.Options{
		Prompt: func(string) (*explain.Explanation, error) { return x, nil },
		Open: func(session string) (*journal.Journal, error) {
			return journal.Open(g.path, &journal.Options{Session: session})
		},
	}
	o.Upstream, _ = url.Parse(up.URL)
	if g.p, err = proxy.New(o); err != nil {
		t.Fatal(err)
	}
	g.srv = httptest.NewServer(g.p)
	t.Cleanup(g.srv.Close)
	g.front = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		g.sent[r.Header.Get(proxy.CallHeader)]++
		g.mu.Unlock()
		g.p.ServeHTTP(w, r)
	}))
	t.Cleanup(g.front.Close)
	return g
}

// gzipJSON serves h, gzipping a JSON answer (not a stream) for a request
// that accepts gzip.
func (g *sdkRig) gzipJSON(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			h.ServeHTTP(w, r)
			return
		}
		rec := &recorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		if !rec.held {
			return // a stream, passed on as it came
		}
		var zb bytes.Buffer
		zw := gzip.NewWriter(&zb)
		zw.Write(rec.body.Bytes())
		zw.Close()
		g.mu.Lock()
		g.gzipped++
		g.mu.Unlock()
		w.Header().Del("Content-Length")
		w.Header().Set("Content-Encoding", "gzip")
		w.WriteHeader(rec.code)
		w.Write(zb.Bytes())
	})
}

// recorder holds back a JSON answer (for gzipJSON) and passes anything
// else through.
type recorder struct {
	http.ResponseWriter
	code       int
	held, sent bool
	body       bytes.Buffer
}

func (r *recorder) WriteHeader(code int) {
	if strings.HasPrefix(r.Header().Get("Content-Type"), "application/json") {
		r.code, r.held = code, true
		return
	}
	r.sent = true
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if !r.held && !r.sent {
		r.WriteHeader(http.StatusOK)
	}
	if r.held {
		return r.body.Write(b)
	}
	return r.ResponseWriter.Write(b)
}

func (r *recorder) Flush() {
	if !r.held {
		if f, ok := r.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
	}
}

// runSDK runs script in dir with the proxy's URL and key, and decodes
// what it printed into out.
func (g *sdkRig) runSDK(t *testing.T, node, dir, script, key string, out any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"PROMPTLOOM_PROXY_URL="+g.front.URL,
		"PROMPTLOOM_API_KEY="+key,
		"PROMPTLOOM_SCENARIO=",
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
		"NODE_NO_WARNINGS=1",
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("node %s: %v", script, time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("node %s: %v\nstdout: %s\nstderr: %s", script, err, stdout.String(), stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("node %s printed %q: %v\nstderr: %s", script, stdout.String(), err, stderr.String())
	}
	t.Logf("%s", bytes.TrimSpace(stdout.Bytes()))
}

// sdkOut is what a script prints.
type sdkOut struct {
	Turns struct {
		First struct {
			Text, Stop string
			Tool       struct {
				ID, Name string
				Input    map[string]any
			}
		}
		Second struct{ Text, Stop string }
		Thrown *sdkErr
	}
	Stream    sdkStream
	Responses sdkStream // OpenAI's Responses API
	Retry     struct {
		Text   string
		Thrown *sdkErr
	}
	Stale struct {
		Error      *sdkErr
		BadRequest bool
		Thrown     *sdkErr
	}
}

type sdkStream struct {
	Text, Stop, Status string
	Deltas             int
	OutputTokens       *int `json:"output_tokens"`
	Thrown             *sdkErr
}

type sdkErr struct {
	Class, Message string
	Status         int
	Type           *string
	Code, GRPC     *string
}

// sdkCase is one SDK: its script and package, the credential it sends,
// the tool call id its fake provider gives, its streaming calls, and the
// error type it reports for a refusal.
type sdkCase struct {
	script, pkg string
	key         string
	toolID      string
	streams     []string // the streaming calls the script makes, in order
	// staleType is the error type (Gemini: status) the SDK reports for
	// the refusal.
	staleType string
}

const (
	toolText   = "Let me read it."
	secondText = "main.go is package main."
	streamText = "Streamed, chunk by chunk: ünïcode and all."
	retryText  = "Here after the retry."
)

func testSDK(t *testing.T, c sdkCase) {
	node, dir := nodeFor(t, c.pkg)
	g := newSDKRig(t)
	g.up.Push(
		fakeprovider.Reply{Text: toolText, ToolCalls: []fakeprovider.ToolCall{{ID: c.toolID, Name: "read_file", Arguments: `{"path":"main.go"}`}}},
		fakeprovider.Reply{Text: secondText},
	)
	for range c.streams {
		g.up.Push(fakeprovider.Reply{Text: streamText, Chunk: 5, Usage: fakeprovider.Usage{Input: 10, Output: 7}})
	}
	g.up.Push(
		fakeprovider.Reply{Status: 429, Header: fakeprovider.RetryAfter(time.Millisecond)},
		fakeprovider.Reply{Text: retryText},
	)
	var out sdkOut
	g.runSDK(t, node, dir, c.script, c.key, &out)

	// What the SDK returned.
	if e := out.Turns.Thrown; e != nil {
		t.Errorf("turns: the SDK threw %+v", *e)
	}
	f := out.Turns.First
	if f.Text != toolText {
		t.Errorf("turn 1 text %q", f.Text)
	}
	if f.Tool.ID != c.toolID || f.Tool.Name != "read_file" || !reflect.DeepEqual(f.Tool.Input, map[string]any{"path": "main.go"}) {
		t.Errorf("turn 1 tool call %+v", f.Tool)
	}
	if s := out.Turns.Second; s.Text != secondText {
		t.Errorf("turn 2 %+v", s)
	}
	for _, name := range c.streams {
		s := out.Stream
		if name == "responses" {
			s = out.Responses
		}
		if s.Thrown != nil {
			t.Errorf("%s: the SDK threw %+v", name, *s.Thrown)
		}
		if s.Text != streamText || s.Deltas < 2 || s.OutputTokens == nil || *s.OutputTokens != 7 {
			t.Errorf("%s: %+v", name, s)
		}
	}
	if r := out.Retry; r.Thrown != nil || r.Text != retryText {
		t.Errorf("retry: %+v", r)
	}
	st := out.Stale
	if st.Thrown != nil || st.Error == nil {
		t.Fatalf("stale: the SDK did not raise the refusal: %+v", st)
	}
	typ := ""
	if st.Error.Type != nil {
		typ = *st.Error.Type
	}
	if c.pkg == "@google/genai" && st.Error.GRPC != nil {
		typ = *st.Error.GRPC
	}
	if !st.BadRequest || st.Error.Status != 400 || typ != c.staleType || !strings.Contains(st.Error.Message, "promptloom refused") {
		t.Errorf("stale: %+v (type %q)", *st.Error, typ)
	}

	// What the proxy and the upstream saw: the 429 retried once, the
	// refusal sent once and never upstream.
	g.mu.Lock()
	sent, gzipped := g.sent, g.gzipped
	g.mu.Unlock()
	want := map[string]int{"turn-1": 1, "turn-2": 1, "retry": 2, "stale": 1}
	for _, s := range c.streams {
		want[s] = 1
	}
	if !reflect.DeepEqual(sent, want) {
		t.Errorf("the SDK sent %v, want %v", sent, want)
	}
	reqs := g.up.Requests()
	if len(reqs) != 4+len(c.streams) {
		t.Errorf("the upstream saw %d requests, want %d", len(reqs), 4+len(c.streams))
	}
	for i, r := range reqs {
		if r.Header.Get(proxy.CallHeader) != "" || r.Header.Get(proxy.SessionHeader) != "" {
			t.Errorf("request %d: the upstream saw promptloom's headers", i+1)
		}
		if !holds(r.Header, c.key) {
			t.Errorf("request %d: the credential did not reach the upstream: %v", i+1, r.Header)
		}
		if strings.Contains(string(r.Body), "verbose") {
			t.Errorf("request %d: the stale prompt reached the upstream", i+1)
		}
	}
	if len(reqs) > 1 && !bytes.Contains(reqs[1].Body, []byte("package main")) {
		t.Errorf("turn 2 did not carry the tool's result: %s", reqs[1].Body)
	}

	// The transcript: every call the upstream answered, the 429 too, held
	// to the prompt; no credential.
	g.front.Close() // no request in flight when the proxy closes
	rep, data := g.closeAndVerify(t)
	var names []string
	for _, cr := range rep.Calls {
		names = append(names, cr.Call)
	}
	wantNames := append(append([]string{"turn-1", "turn-2"}, c.streams...), "retry", "retry")
	if !reflect.DeepEqual(names, wantNames) || rep.Unattributed != 0 {
		t.Errorf("the transcript's calls %q (%d unattributed), want %q", names, rep.Unattributed, wantNames)
	}
	if gzipped != 4 {
		t.Errorf("the upstream gzipped %d answers, want the 4 JSON ones", gzipped)
	}
	if !bytes.Contains(data, []byte(secondText)) || !bytes.Contains(data, []byte("Too Many Requests")) {
		t.Errorf("the transcript does not hold the gzipped answers decoded")
	}
	if bytes.Contains(data, []byte(c.key)) {
		t.Errorf("the credential reached the transcript")
	}
	for _, h := range []string{"x-api-key", "x-goog-api-key", "Bearer "} {
		if bytes.Contains(bytes.ToLower(data), bytes.ToLower([]byte(h))) {
			t.Errorf("the transcript holds %q", h)
		}
	}
	sessions := map[string]string{}
	for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var line struct{ Kind, Session, Call string }
		if err := json.Unmarshal(l, &line); err != nil {
			t.Fatal(err)
		}
		if line.Kind == "provider_call_request" {
			sessions[line.Call] = line.Session
		}
	}
	if sessions["turn-1"] == "" || sessions["turn-1"] != sessions["turn-2"] {
		t.Errorf("the two turns are not one session: %v", sessions)
	}
	if n := bytes.Count(data, []byte(`"kind":"provider_call_error"`)); n != 1 || !bytes.Contains(data, []byte("HTTP 429")) {
		t.Errorf("%d failures recorded, want the 429", n)
	}
}

func TestAnthropicSDKThroughTheProxy(t *testing.T) {
	testSDK(t, sdkCase{
		script: "anthropic.mjs", pkg: "@anthropic-ai/sdk",
		key:    "sk-ant-api03-nodesdk" + strings.Repeat("N", 40),
		toolID: "toolu_node_1", streams: []string{"stream"}, staleType: "invalid_request_error",
	})
}

func TestOpenAISDKThroughTheProxy(t *testing.T) {
	testSDK(t, sdkCase{
		script: "openai.mjs", pkg: "openai",
		key:    "sk-proj-nodesdk" + strings.Repeat("O", 40),
		toolID: "call_node_1", streams: []string{"stream", "responses"}, staleType: "invalid_request_error",
	})
}

func TestGenAISDKThroughTheProxy(t *testing.T) {
	testSDK(t, sdkCase{
		script: "genai.mjs", pkg: "@google/genai",
		key:    "AIzaNodeSDK" + strings.Repeat("G", 28),
		toolID: "fc_node_1", streams: []string{"stream"}, staleType: "INVALID_ARGUMENT",
	})
}

// holds reports whether a header value holds s (the SDKs put a key in
// X-Api-Key, Authorization or X-Goog-Api-Key, by version).
func holds(h http.Header, s string) bool {
	for _, vs := range h {
		for _, v := range vs {
			if strings.Contains(v, s) {
				return true
			}
		}
	}
	return false
}
