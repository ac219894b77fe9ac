// Command gateway is the manual gateway benchmark: a fake OpenAI-shaped
// upstream, and in front of it a bare httputil.ReverseProxy, Portkey's
// gateway (@portkey-ai/gateway, through node) and `promptloom proxy`, each
// in a process of its own, called with a 1 KB request and a 50 KB agent
// request (as JSON and as a stream) in interleaved rounds. It prints the
// added latency over calling the upstream directly, each gateway's CPU a
// call, its throughput with 16 clients, the bytes it wrote a call, and the
// ratios of this run; then it stops the proxy and verifies its transcript.
// run.sh installs Portkey's gateway and builds the binaries first. CI does
// not run it.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/promptloom/promptloom/internal/testkit/benchdata"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/proxy"
)

func main() {
	if len(os.Args) > 1 {
		var err error
		switch os.Args[1] {
		case "upstream":
			err = serveUpstream()
		case "bare":
			err = serveBare(os.Args[2:])
		case "serve-proxy":
			err = serveProxy(os.Args[2:])
		default:
			err = bench(os.Args[1:])
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "gateway:", err)
			os.Exit(1)
		}
		return
	}
	if err := bench(nil); err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		os.Exit(1)
	}
}

// listen listens on a free loopback port and says so on stdout, as
// `promptloom proxy` does.
func listen() (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	return ln, nil
}

// serveUpstream is the fake upstream: OpenAI's Chat Completions, answered
// at once, as JSON or (with "stream": true in the body) as its SSE stream.
// It reads the whole body, as a provider does.
func serveUpstream() error {
	ln, err := listen()
	if err != nil {
		return err
	}
	reply, chunks := upstreamReplies()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
			return
		}
		w.Header().Set("X-Request-Id", "req_bench")
		if !bytes.Contains(body, []byte(`"stream":true`)) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(reply)))
			w.Write(reply)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		f, _ := w.(http.Flusher)
		for _, c := range chunks {
			w.Write(c)
			if f != nil {
				f.Flush()
			}
		}
	})
	return (&http.Server{Handler: h}).Serve(ln)
}

// upstreamReplies returns the JSON answer and the stream's events: the
// same text (about 400 bytes), with usage.
func upstreamReplies() ([]byte, [][]byte) {
	text := benchdata.Prose(rand.New(rand.NewPCG(7, 7)), benchdata.Words, 400) + "."
	usage := map[string]any{"prompt_tokens": 12000, "completion_tokens": 90, "total_tokens": 12090,
		"prompt_tokens_details": map[string]any{"cached_tokens": 11776}}
	reply, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-bench", "object": "chat.completion", "created": 1765000000, "model": "gpt-4.1-2025-04-14",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": text}}},
		"usage": usage,
	})
	var chunks [][]byte
	event := func(delta map[string]any, finish any, u any) {
		c := map[string]any{"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1765000000,
			"model": "gpt-4.1-2025-04-14", "choices": []any{}}
		if delta != nil {
			c["choices"] = []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}
		}
		if u != nil {
			c["usage"] = u
		}
		b, _ := json.Marshal(c)
		chunks = append(chunks, []byte("data: "+string(b)+"\n\n"))
	}
	event(map[string]any{"role": "assistant", "content": ""}, nil, nil)
	for i := 0; i < len(text); i += 40 {
		event(map[string]any{"content": text[i:min(i+40, len(text))]}, nil, nil)
	}
	event(map[string]any{}, "stop", nil)
	event(nil, nil, usage)
	chunks = append(chunks, []byte("data: [DONE]\n\n"))
	return reply, chunks
}

// strictName is the target of -strict: promptloom's proxy with
// --sync-outcomes.
const strictName = "promptloom, --sync-outcomes"

// serveBare is the baseline gateway: httputil.ReverseProxy to the upstream
// and nothing else.
func serveBare(args []string) error {
	fs := flag.NewFlagSet("bare", flag.ExitOnError)
	upstream := fs.String("upstream", "", "the upstream's origin")
	fs.Parse(args)
	u, err := url.Parse(*upstream)
	if err != nil {
		return err
	}
	ln, err := listen()
	if err != nil {
		return err
	}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(u)
		// The transport reads a body once more after its declared length,
		// to check it was not longer; when the upstream has answered by
		// then, the server has closed the inbound body, that read fails,
		// and the transport tears down the upstream connection under the
		// answer it is streaming (the client gets a stream cut short). A
		// body that ends at its length without that read avoids it.
		if r.In.ContentLength > 0 {
			r.Out.Body = io.NopCloser(io.LimitReader(r.In.Body, r.In.ContentLength))
		}
	}, FlushInterval: -1}
	return (&http.Server{Handler: rp}).Serve(ln)
}

// serveProxy is promptloom's proxy in this process, set up as `promptloom
// proxy --upstream URL --transcript FILE` sets it up (without the page's
// verification state), with a CPU profile written when it stops: the
// profiled stand-in for the CLI (-profile).
func serveProxy(args []string) error {
	fs := flag.NewFlagSet("serve-proxy", flag.ExitOnError)
	upstream := fs.String("upstream", "", "the upstream's origin")
	transcript := fs.String("transcript", "", "the transcript file")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile here")
	fs.Parse(args)
	u, err := url.Parse(*upstream)
	if err != nil {
		return err
	}
	p, err := proxy.New(&proxy.Options{Upstream: u, Open: func(s string) (*journal.Journal, error) {
		// As the CLI opens them without --sync-outcomes.
		return journal.Open(*transcript, &journal.Options{Session: s, DeferOutcomeSync: true})
	}})
	if err != nil {
		return err
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	ln, err := listen()
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: p}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go srv.Serve(ln)
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	return p.Close()
}

// agentRequest is an OpenAI Chat Completions request of an agent at work:
// a system message, 8 tools, and 20 messages (the task, nine rounds of an
// assistant's tool call and its result, and a follow-up), padded by the
// tool results until the body is about size bytes.
func agentRequest(size int, stream bool) []byte {
	build := func(result int) []byte {
		r := rand.New(rand.NewPCG(41, 50))
		prose := func(n int) string { return benchdata.Prose(r, benchdata.Words, n) + "." }
		var tools []any
		for i, name := range []string{"read_file", "write_file", "edit_file", "list_dir", "grep", "run_tests", "run_command", "web_fetch"} {
			tools = append(tools, map[string]any{"type": "function", "function": map[string]any{
				"name": name, "description": prose(600 + 40*i),
				"parameters": map[string]any{"type": "object", "properties": map[string]any{
					"path":    map[string]any{"type": "string", "description": prose(80)},
					"pattern": map[string]any{"type": "string", "description": prose(60)},
					"limit":   map[string]any{"type": "integer", "description": prose(40)},
				}, "required": []string{"path"}},
			}})
		}
		msgs := []any{
			map[string]any{"role": "system", "content": prose(6000)},
			map[string]any{"role": "user", "content": prose(700)},
		}
		for i := range 9 {
			id := fmt.Sprintf("call_%02d_bench", i)
			args, _ := json.Marshal(map[string]any{"path": fmt.Sprintf("internal/pkg%d/file%d.go", i, i), "limit": 200})
			msgs = append(msgs,
				map[string]any{"role": "assistant", "content": prose(150), "tool_calls": []any{map[string]any{
					"id": id, "type": "function", "function": map[string]any{"name": "read_file", "arguments": string(args)}}}},
				map[string]any{"role": "tool", "tool_call_id": id, "content": prose(result)})
		}
		msgs = append(msgs, map[string]any{"role": "user", "content": prose(300)})
		req := map[string]any{"model": "gpt-4.1", "messages": msgs, "tools": tools, "temperature": 0, "max_tokens": 1024}
		if stream {
			req["stream"] = true
			req["stream_options"] = map[string]any{"include_usage": true}
		}
		b, _ := json.Marshal(req)
		return b
	}
	lo, hi := 0, size
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if len(build(mid)) <= size {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return build(lo)
}

// smallRequest is a 1 KB request: a short system message and one question.
func smallRequest(size int) []byte {
	r := rand.New(rand.NewPCG(1, 1))
	build := func(n int) []byte {
		b, _ := json.Marshal(map[string]any{"model": "gpt-4.1", "max_tokens": 256, "messages": []any{
			map[string]any{"role": "system", "content": "You are a careful coding assistant."},
			map[string]any{"role": "user", "content": benchdata.Prose(rand.New(rand.NewPCG(r.Uint64()|1, 2)), benchdata.Words, n)},
		}})
		return b
	}
	n := size
	for len(build(n)) > size && n > 0 {
		n -= 8
	}
	return build(n)
}

// kind is one request the run makes.
type kind struct {
	name   string
	body   []byte
	stream bool
}

// target is one way to reach the upstream: directly, or through a gateway
// (a process whose CPU and writes are read from /proc).
type target struct {
	name       string
	url        string // the chat completions URL
	header     http.Header
	session    bool   // give each client its own Promptloom-Session
	pid        int    // 0: no process of its own (direct)
	transcript string // the file it records into, if any
	bin        string // the promptloom binary that verifies it
	cmd        *exec.Cmd
	client     *http.Client
}

// stats is what one target did with one kind over the whole run.
type stats struct {
	lat          []time.Duration // sequential calls, each alone
	seqCalls     int
	cpuTicks     int64 // over the sequential and concurrent calls
	calls        int   // all calls, sequential and concurrent
	conCalls     int
	conTime      time.Duration
	writeBytes   int64 // /proc/PID/io write_bytes
	fileBytes    int64 // the transcript's growth
	failures     int
	firstFailure string
}

func bench(args []string) error {
	fs := flag.NewFlagSet("gateway", flag.ExitOnError)
	rounds := fs.Int("rounds", 5, "interleaved rounds")
	calls := fs.Int("calls", 200, "sequential calls per target, kind and round (for the latency quantiles)")
	dur := fs.Duration("duration", 2*time.Second, "the concurrent phase per target, kind and round")
	clients := fs.Int("clients", 16, "concurrent clients in the throughput phase")
	dir := fs.String("dir", "out", "where the binaries are and the transcript and logs go")
	cli := fs.String("cli", "out/promptloom", "the promptloom binary")
	baseline := fs.String("baseline", "", "another promptloom binary (an earlier commit's), measured beside the first as \"promptloom (baseline)\"")
	portkey := fs.String("portkey", "node_modules/@portkey-ai/gateway/build/start-server.js", "Portkey's gateway's server script (empty: leave Portkey out)")
	session := fs.Bool("session-header", true, "send Promptloom-Session (one session per client); false: the proxy finds sessions by their messages")
	warm := fs.Int("warm", 100, "warm-up calls per target and kind")
	only := fs.String("kinds", "1 KB,50 KB,50 KB stream", "the requests to make, by name, comma-separated")
	strict := fs.Bool("strict", false, "also measure promptloom's proxy with --sync-outcomes (each answer's end handed on once its outcome line is on disk), as \"promptloom, --sync-outcomes\"")
	profile := fs.String("profile", "", "run promptloom's proxy in this program's own process (serve-proxy) and write its CPU profile here, in place of the CLI")
	fs.Parse(args)

	self, err := os.Executable()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("load average at the start: %s", load)
	}
	fmt.Printf("%d cores; %d rounds; %d sequential calls and %s with %d clients per target, kind and round\n",
		runtime.NumCPU(), *rounds, *calls, *dur, *clients)

	var procs []*exec.Cmd
	defer func() {
		for _, c := range procs {
			if c.ProcessState == nil {
				c.Process.Signal(syscall.SIGTERM)
				c.Wait()
			}
		}
	}()
	start := func(name string, c *exec.Cmd) (string, error) {
		u, err := startListening(c, filepath.Join(*dir, name+".log"))
		if err == nil {
			procs = append(procs, c)
		}
		return u, err
	}
	upCmd := exec.Command(self, "upstream")
	upURL, err := start("upstream", upCmd)
	if err != nil {
		return fmt.Errorf("upstream: %w", err)
	}
	fmt.Printf("upstream %s (pid %d)\n", upURL, upCmd.Process.Pid)

	chat := "/v1/chat/completions"
	auth := http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer sk-bench-0000000000000000000000000000"}}
	targets := []*target{{name: "direct", url: upURL + chat, header: auth}}

	bareCmd := exec.Command(self, "bare", "-upstream", upURL)
	bareURL, err := start("bare", bareCmd)
	if err != nil {
		return fmt.Errorf("bare: %w", err)
	}
	targets = append(targets, &target{name: "bare httputil.ReverseProxy", url: bareURL + chat, header: auth, pid: bareCmd.Process.Pid, cmd: bareCmd})

	if *portkey != "" {
		port, err := freePort()
		if err != nil {
			return err
		}
		pk := exec.Command("node", "--import", "./loopback.mjs", *portkey, "--port="+strconv.Itoa(port), "--headless")
		pkURL := "http://127.0.0.1:" + strconv.Itoa(port)
		if err := startPolling(pk, filepath.Join(*dir, "portkey.log"), pkURL+"/"); err != nil {
			return fmt.Errorf("portkey: %w", err)
		}
		procs = append(procs, pk)
		h := auth.Clone()
		h.Set("x-portkey-provider", "openai")
		h.Set("x-portkey-custom-host", upURL+"/v1")
		targets = append(targets, &target{name: "Portkey gateway", url: pkURL + chat, header: h, pid: pk.Process.Pid, cmd: pk})
	}

	addPromptloom := func(name, bin, file string, flags ...string) error {
		os.Remove(file)
		c := exec.Command(bin, append([]string{"proxy", "--upstream", upURL, "--transcript", file}, flags...)...)
		if *profile != "" && bin == *cli && len(flags) == 0 {
			c = exec.Command(self, "serve-proxy", "-upstream", upURL, "-transcript", file, "-cpuprofile", *profile)
			name += " (in process, profiled)"
		}
		u, err := start(strings.ReplaceAll(filepath.Base(file), ".jsonl", ""), c)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		targets = append(targets, &target{name: name, url: u + chat, header: auth, session: *session, pid: c.Process.Pid, transcript: file, bin: bin, cmd: c})
		return nil
	}
	if err := addPromptloom("promptloom proxy", *cli, filepath.Join(*dir, "transcript.jsonl")); err != nil {
		return err
	}
	if *strict {
		if err := addPromptloom(strictName, *cli, filepath.Join(*dir, "transcript-strict.jsonl"), "--sync-outcomes"); err != nil {
			return err
		}
	}
	if *baseline != "" {
		if err := addPromptloom("promptloom (baseline)", *baseline, filepath.Join(*dir, "transcript-baseline.jsonl")); err != nil {
			return err
		}
	}
	for _, t := range targets {
		t.client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * *clients, DisableCompression: true}}
	}

	kinds := []kind{
		{name: "1 KB", body: smallRequest(1024)},
		{name: "50 KB", body: agentRequest(50*1024, false)},
		{name: "50 KB stream", body: agentRequest(50*1024, true), stream: true},
	}
	kinds = slices.DeleteFunc(kinds, func(k kind) bool { return !slices.Contains(strings.Split(*only, ","), k.name) })
	if len(kinds) == 0 {
		return fmt.Errorf("-kinds %q names none of the requests", *only)
	}
	for _, k := range kinds {
		fmt.Printf("request %q: %d bytes\n", k.name, len(k.body))
	}

	// Warm up every target on every kind (node's JIT, the connections).
	for _, k := range kinds {
		for _, t := range targets {
			for i := range *warm {
				if _, err := call(t, k, "warm", i); err != nil {
					return fmt.Errorf("warm-up, %s, %s, call %d: %w", t.name, k.name, i, err)
				}
			}
		}
	}

	all := map[string]map[string]*stats{}
	for _, k := range kinds {
		all[k.name] = map[string]*stats{}
		for _, t := range targets {
			all[k.name][t.name] = &stats{}
		}
	}
	clientSeq := 0
	for r := range *rounds {
		for ki, k := range kinds {
			// Each round and kind starts at another target, so none is
			// always first after another's load.
			n := len(targets)
			for j := range n {
				t := targets[(j+r+ki)%n]
				s := all[k.name][t.name]
				cpu0, w0, f0 := procCPU(t.pid), procWrites(t.pid), fileSize(t.transcript)
				clientSeq++
				sess := fmt.Sprintf("r%d-%s-seq-%d", r, strings.ReplaceAll(k.name, " ", ""), clientSeq)
				for i := range *calls {
					d, err := call(t, k, sess, i)
					if err != nil {
						s.failures++
						if s.firstFailure == "" {
							s.firstFailure = err.Error()
						}
						continue
					}
					s.lat = append(s.lat, d)
					s.seqCalls++
				}
				done, fails, first, took := concurrent(t, k, *clients, *dur, fmt.Sprintf("r%d-%s", r, strings.ReplaceAll(k.name, " ", "")))
				s.conCalls += done
				s.conTime += took
				s.failures += fails
				if s.firstFailure == "" {
					s.firstFailure = first
				}
				s.calls += *calls + done
				s.cpuTicks += procCPU(t.pid) - cpu0
				s.writeBytes += procWrites(t.pid) - w0
				s.fileBytes += fileSize(t.transcript) - f0
			}
		}
		fmt.Printf("round %d of %d done\n", r+1, *rounds)
	}
	loadEnd, _ := os.ReadFile("/proc/loadavg")

	report(kinds, targets, all)
	fmt.Printf("load average at the end: %s", loadEnd)

	// Stop the proxies, and verify what they recorded.
	failed := false
	for _, t := range targets {
		if t.transcript == "" {
			continue
		}
		t.cmd.Process.Signal(syscall.SIGTERM)
		if err := t.cmd.Wait(); err != nil {
			fmt.Printf("%s: stopped with %v\n", t.name, err)
			failed = true
		}
		var sent int
		for _, k := range kinds {
			s := all[k.name][t.name]
			sent += s.seqCalls + s.conCalls
		}
		sent += *warm * len(kinds) // the warm-up
		recorded, err := countCalls(t.transcript)
		if err != nil {
			return err
		}
		out, err := exec.Command(t.bin, "verify", "--transcript", t.transcript).CombinedOutput()
		// verify's summary: "N call(s) verified, N incomplete, N failed, …".
		var verified, incomplete, bad int
		summary := "no summary"
		for line := range strings.Lines(string(out)) {
			if strings.Contains(line, " call(s) verified, ") {
				summary = strings.TrimSpace(line)
				fmt.Sscanf(summary, "%d call(s) verified, %d incomplete, %d failed", &verified, &incomplete, &bad)
			}
		}
		fmt.Printf("%s: %d calls answered, %d recorded in %s (%s); `%s verify --transcript %s`: %s\n",
			t.name, sent, recorded, t.transcript, human(fileSize(t.transcript)), t.bin, t.transcript, summary)
		if err != nil || verified != sent || incomplete != 0 || bad != 0 {
			fmt.Printf("  verify: %v\n%s", err, out)
			failed = true
		}
		if recorded != sent {
			fmt.Printf("  recorded %d of %d calls\n", recorded, sent)
			failed = true
		}
	}
	for _, k := range kinds {
		for _, t := range targets {
			if s := all[k.name][t.name]; s.failures > 0 {
				fmt.Printf("%s, %s: %d calls failed, the first: %s\n", t.name, k.name, s.failures, s.firstFailure)
				failed = true
			}
		}
	}
	if failed {
		return errors.New("a call failed, or a transcript does not hold every call")
	}
	return nil
}

// call makes one call and reads the whole answer, checking that it is the
// upstream's.
func call(t *target, k kind, session string, i int) (time.Duration, error) {
	req, err := http.NewRequest(http.MethodPost, t.url, bytes.NewReader(k.body))
	if err != nil {
		return 0, err
	}
	req.Header = t.header.Clone()
	if t.session {
		req.Header.Set("Promptloom-Session", session)
		req.Header.Set("Promptloom-Call", session+"/"+strconv.Itoa(i))
	}
	start := time.Now()
	resp, err := t.client.Do(req)
	if err != nil {
		return 0, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(start)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("status %d: %.300s", resp.StatusCode, body)
	}
	if k.stream && !bytes.Contains(body, []byte("data: [DONE]")) {
		return 0, fmt.Errorf("stream without [DONE]: %.300s", body)
	}
	if !k.stream && !bytes.Contains(body, []byte(`"chat.completion"`)) {
		return 0, fmt.Errorf("not a chat completion: %.300s", body)
	}
	return d, nil
}

// concurrent runs n clients calling t for d, and returns how many calls
// completed, how many failed (and the first failure), and how long the
// phase took until its last call ended.
func concurrent(t *target, k kind, n int, d time.Duration, prefix string) (int, int, string, time.Duration) {
	var done, fails atomic.Int64
	var first sync.Once
	var firstErr string
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for c := range n {
		wg.Go(func() {
			sess := fmt.Sprintf("%s-client-%d", prefix, c)
			for i := 0; time.Now().Before(deadline); i++ {
				if _, err := call(t, k, sess, i); err != nil {
					fails.Add(1)
					first.Do(func() { firstErr = err.Error() })
					continue
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	return int(done.Load()), int(fails.Load()), firstErr, time.Since(start)
}

// report prints a table for each kind and the ratios of this run.
func report(kinds []kind, targets []*target, all map[string]map[string]*stats) {
	direct := targets[0].name
	type row struct {
		p50, p99, added50, added99, cpu, rps, write, file float64
	}
	rows := map[string]map[string]row{}
	for _, k := range kinds {
		rows[k.name] = map[string]row{}
		d := all[k.name][direct]
		d50, d99 := quantile(d.lat, 0.50), quantile(d.lat, 0.99)
		fmt.Printf("\n%s (%d bytes):\n\n", k.name, len(k.body))
		fmt.Println("| | p50 | p99 | added p50 | added p99 | CPU per call | req/s, 16 clients | written per call (disk) | transcript per call |")
		fmt.Println("|---|---|---|---|---|---|---|---|---|")
		for _, t := range targets {
			s := all[k.name][t.name]
			p50, p99 := quantile(s.lat, 0.50), quantile(s.lat, 0.99)
			rw := row{p50: ms(p50), p99: ms(p99), added50: ms(p50 - d50), added99: ms(p99 - d99),
				rps: float64(s.conCalls) / s.conTime.Seconds()}
			if t.pid != 0 && s.calls > 0 {
				rw.cpu = float64(s.cpuTicks) * 1000 / clockTicks / float64(s.calls)
				rw.write = float64(s.writeBytes) / float64(s.calls)
				rw.file = float64(s.fileBytes) / float64(s.calls)
			}
			rows[k.name][t.name] = rw
			if t.pid == 0 {
				fmt.Printf("| %s | %.2f ms | %.2f ms | — | — | — | %s | — | — |\n", t.name, rw.p50, rw.p99, comma(rw.rps))
				continue
			}
			file := "no file"
			if t.transcript != "" {
				file = human(int64(rw.file))
			}
			fmt.Printf("| %s | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %.3f ms | %s | %s | %s |\n",
				t.name, rw.p50, rw.p99, rw.added50, rw.added99, rw.cpu, comma(rw.rps), human(int64(rw.write)), file)
		}
	}
	var pl, pk, bare string
	for _, t := range targets {
		switch {
		case strings.HasPrefix(t.name, "promptloom proxy"):
			pl = t.name
		case t.name == "Portkey gateway":
			pk = t.name
		case strings.HasPrefix(t.name, "bare"):
			bare = t.name
		}
	}
	fmt.Println("\nRatios, promptloom proxy to each (added p50, added p99, CPU per call, req/s with 16 clients):")
	fmt.Println()
	fmt.Println("| | to | added p50 | added p99 | CPU per call | req/s |")
	fmt.Println("|---|---|---|---|---|---|")
	mine := []string{pl}
	for _, t := range targets {
		if t.name == strictName {
			mine = append(mine, strictName)
		}
	}
	for _, k := range kinds {
		for _, m := range mine {
			for _, other := range []string{pk, bare} {
				if other == "" {
					continue
				}
				a, b := rows[k.name][m], rows[k.name][other]
				name := k.name
				if m != pl {
					name += ", --sync-outcomes"
				}
				fmt.Printf("| %s | %s | %.2fx | %.2fx | %.2fx | %.2fx |\n", name, other,
					a.added50/b.added50, a.added99/b.added99, a.cpu/b.cpu, a.rps/b.rps)
			}
		}
	}
	if _, ok := rows["50 KB"]; ok && pk != "" {
		for _, m := range mine {
			a, b := rows["50 KB"][m], rows["50 KB"][pk]
			fmt.Printf("\nTargets on the 50 KB request (%s against Portkey, this run):\n", m)
			target := func(what string, ratio float64, ok bool, want string) {
				verdict := "MISSED"
				if ok {
					verdict = "met"
				}
				fmt.Printf("- %s: %.2fx (%s): %s\n", what, ratio, want, verdict)
			}
			target("CPU per call", a.cpu/b.cpu, a.cpu <= b.cpu/3, "at most 0.33x")
			target("added p50", a.added50/b.added50, a.added50 <= b.added50/2, "at most 0.5x")
			target("req/s with 16 clients", a.rps/b.rps, a.rps >= 2*b.rps, "at least 2x")
		}
	}
	if base := rows["1 KB"]["promptloom (baseline)"]; base.rps > 0 {
		a := rows["1 KB"][pl]
		fmt.Printf("\n1 KB against the baseline binary: added p50 %.2fx, added p99 %.2fx, CPU per call %.2fx, req/s %.2fx\n",
			a.added50/base.added50, a.added99/base.added99, a.cpu/base.cpu, a.rps/base.rps)
	}
}

// startListening starts c with its stderr (and stdout after the first
// line) going to log, and returns the URL of its first line, "listening
// on URL".
func startListening(c *exec.Cmd, log string) (string, error) {
	lf, err := os.Create(log)
	if err != nil {
		return "", err
	}
	c.Stderr = lf
	out, err := c.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := c.Start(); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	go io.Copy(lf, out)
	u, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		c.Process.Kill()
		c.Wait()
		return "", fmt.Errorf("no \"listening on\" line (%q, %v); see %s", line, err, log)
	}
	return u, nil
}

// startPolling starts c with its output going to log and waits until u
// answers.
func startPolling(c *exec.Cmd, log, u string) error {
	lf, err := os.Create(log)
	if err != nil {
		return err
	}
	c.Stdout, c.Stderr = lf, lf
	if err := c.Start(); err != nil {
		return err
	}
	for range 300 {
		if resp, err := http.Get(u); err == nil {
			resp.Body.Close()
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.Process.Kill()
	c.Wait()
	return fmt.Errorf("%s did not answer in 30 s; see %s", u, log)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat's times:
// 100 on every Linux architecture Go runs on.
const clockTicks = 100

// procCPU is the process's user and system CPU time so far, in clock
// ticks (its threads included).
func procCPU(pid int) int64 {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command's parenthesis: state is the 3rd field,
	// utime the 14th and stime the 15th.
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

// procWrites is the bytes the process has caused to be written to storage
// (/proc/PID/io's write_bytes).
func procWrites(pid int) int64 {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "write_bytes: "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

func fileSize(path string) int64 {
	if path == "" {
		return 0
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// countCalls counts the calls a transcript holds: its lines of kind
// "provider_call_request".
func countCalls(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	n := 0
	for sc.Scan() {
		var line struct {
			Kind string `json:"kind"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Kind == "provider_call_request" {
			n++
		}
	}
	return n, sc.Err()
}

func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(i, 0)]
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func comma(f float64) string {
	s := strconv.FormatInt(int64(math.Round(f)), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func human(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
