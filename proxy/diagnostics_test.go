package proxy_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/internal/testkit/fakecache"
	"github.com/promptloom/promptloom/internal/testkit/fakeprovider"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/proxy"
	"github.com/promptloom/promptloom/transcript"
)

// diagnosing is a fake Anthropic whose answers carry its usage by the
// documented cache rules (fakecache) and, for a request that asks with
// the beta header, its cache diagnostics as the documentation states
// them: the first of model, tools, system and messages that is not what
// the named previous request sent (worked out here with encoding/json,
// apart from promptloom), previous_message_not_found for an id it did
// not fingerprint. A request's X-Plant header plants the reason given.
type diagnosing struct {
	srv   *httptest.Server
	cache fakecache.Anthropic

	mu     sync.Mutex
	n      int
	seen   map[string][]byte // the requests that asked, by the id of their answer
	got    []arrival
	usages []fakecache.Usage
}

// arrival is one request as the upstream received it.
type arrival struct {
	body   []byte
	header http.Header
	length int64
	id     string // its answer's
}

func newDiagnosing(t *testing.T) *diagnosing {
	d := &diagnosing{cache: fakecache.Anthropic{Min: 1024}, seen: map[string][]byte{}}
	d.srv = httptest.NewServer(http.HandlerFunc(d.serve))
	t.Cleanup(d.srv.Close)
	return d
}

func (d *diagnosing) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	var req struct {
		Diagnostics json.RawMessage `json:"diagnostics"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	u, err := d.cache.Serve(body, time.Now())
	if err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	asked := req.Diagnostics != nil && strings.Contains(r.Header.Get("anthropic-beta"), "cache-diagnosis-2026-04-07")
	d.mu.Lock()
	d.n++
	id := fmt.Sprintf("msg_%03d", d.n)
	reason := ""
	if asked {
		var diag struct {
			Previous *string `json:"previous_message_id"`
		}
		_ = json.Unmarshal(req.Diagnostics, &diag)
		if diag.Previous != nil {
			prev, ok := d.seen[*diag.Previous]
			switch {
			case !ok:
				reason = "previous_message_not_found"
			default:
				reason = anthropicVerdict(prev, body)
			}
		}
		d.seen[id] = body
	}
	if p := r.Header.Get("X-Plant"); p != "" {
		reason = p
	}
	d.got = append(d.got, arrival{body: body, header: r.Header.Clone(), length: r.ContentLength, id: id})
	d.usages = append(d.usages, u)
	d.mu.Unlock()
	diagJSON := ""
	if reason != "" {
		diagJSON = fmt.Sprintf(`,"diagnostics":{"cache_miss_reason":{"type":%q,"cache_missed_input_tokens":%d}}`, reason, u.CacheWrite)
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":%q,"type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"model":"claude-sonnet-4-5","stop_reason":"end_turn","usage":{"input_tokens":%d,"output_tokens":1,"cache_read_input_tokens":%d,"cache_creation_input_tokens":%d}%s}`,
		id, u.Input, u.CacheRead, u.CacheWrite, diagJSON)
}

func (d *diagnosing) arrivals() []arrival {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]arrival(nil), d.got...)
}

// anthropicVerdict is Anthropic's comparison: "" when nothing diverged. Marks
// are left out, and so is the diagnostics object itself.
func anthropicVerdict(prev, cur []byte) string {
	var a, b map[string]any
	if json.Unmarshal(prev, &a) != nil || json.Unmarshal(cur, &b) != nil {
		return "unavailable"
	}
	switch {
	case a["model"] != b["model"]:
		return "model_changed"
	case !reflect.DeepEqual(unmarked(a["tools"]), unmarked(b["tools"])):
		return "tools_changed"
	case !reflect.DeepEqual(unmarked(a["system"]), unmarked(b["system"])):
		return "system_changed"
	}
	am, _ := unmarked(a["messages"]).([]any)
	bm, _ := unmarked(b["messages"]).([]any)
	if len(bm) < len(am) || !reflect.DeepEqual(am, bm[:len(am)]) {
		return "messages_changed"
	}
	return ""
}

func unmarked(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if k != "cache_control" {
				out[k] = unmarked(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = unmarked(e)
		}
		return out
	}
	return v
}

// through is a proxy with o's options in front of upstream, recording
// into a transcript file, served; or, for a run of one session, into
// memory (mem), with no fsync to wait for on each call.
type through struct {
	p    *proxy.Proxy
	srv  *httptest.Server
	path string
	mem  *bytes.Buffer
}

func newThrough(t *testing.T, upstream string, o proxy.Options) *through {
	t.Helper()
	g := &through{path: filepath.Join(t.TempDir(), "proxy.jsonl")}
	o.Upstream, _ = url.Parse(upstream)
	o.Open = func(session string) (*journal.Journal, error) {
		return journal.Open(g.path, &journal.Options{Session: session})
	}
	var err error
	if g.p, err = proxy.New(&o); err != nil {
		t.Fatal(err)
	}
	g.srv = httptest.NewServer(g.p)
	t.Cleanup(g.srv.Close)
	return g
}

// newOneSession is newThrough recording one session in memory; a second
// session is refused.
func newOneSession(t *testing.T, upstream string, o proxy.Options) *through {
	t.Helper()
	g := &through{mem: &bytes.Buffer{}}
	o.Upstream, _ = url.Parse(upstream)
	var opened sync.Once
	o.Open = func(session string) (j *journal.Journal, err error) {
		err = fmt.Errorf("session %s: this rig records one session", session)
		opened.Do(func() { j, err = journal.New(g.mem, &journal.Options{Session: session}), nil })
		return j, err
	}
	var err error
	if g.p, err = proxy.New(&o); err != nil {
		t.Fatal(err)
	}
	g.srv = httptest.NewServer(g.p)
	t.Cleanup(g.srv.Close)
	return g
}

// usage is an answer's usage, as the provider reported it.
type usage struct{ Input, Read, Write int }

// send posts an Anthropic body with headers (pairs), and returns the
// answer's usage.
func (g *through) send(t *testing.T, body []byte, headers ...string) usage {
	t.Helper()
	u, err := g.post(body, headers...)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// post is send for a goroutine of its own: the failure is returned.
func (g *through) post(body []byte, headers ...string) (usage, error) {
	req, _ := http.NewRequest("POST", g.srv.URL+"/v1/messages", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", "sk-ant-api03-"+strings.Repeat("k", 40))
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return usage{}, err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return usage{}, fmt.Errorf("%d %s", resp.StatusCode, out)
	}
	var a struct {
		Usage struct {
			Input int `json:"input_tokens"`
			Read  int `json:"cache_read_input_tokens"`
			Write int `json:"cache_creation_input_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(out, &a); err != nil {
		return usage{}, fmt.Errorf("%s: %w", out, err)
	}
	return usage{a.Usage.Input, a.Usage.Read, a.Usage.Write}, nil
}

// closeAndRead closes the proxy, verifies the transcript, and reads its
// calls back as `promptloom cache` does.
func (g *through) closeAndRead(t *testing.T) []cache.Recorded {
	t.Helper()
	g.srv.Close()
	if err := g.p.Close(); err != nil {
		t.Fatal(err)
	}
	var data []byte
	if g.mem != nil {
		data = g.mem.Bytes()
	} else {
		var err error
		if data, err = os.ReadFile(g.path); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := transcript.Verify(bytes.NewReader(data), nil)
	if err != nil || !rep.OK() {
		var w strings.Builder
		if rep != nil {
			rep.WriteText(&w)
		}
		t.Fatalf("verify: %v\n%s", err, w.String())
	}
	rs, err := cache.FromTranscript(data, rep)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// An agent's run through the proxy with --diagnostics, against an
// upstream that answers with Anthropic's cache diagnostics: every call
// asks (the first with null, each later one naming the answer before
// it, with the beta header joined to the client's own), the body sent is
// the body received with the one member added and its own length, and
// over the transcript the provider's verdict agrees with promptloom's
// blame (an edited tool: tools_changed beside /tools/3) while a planted
// disagreement is listed as one.
func TestDiagnosticsThroughTheProxy(t *testing.T) {
	up := newDiagnosing(t)
	g := newThrough(t, up.srv.URL, proxy.Options{Diagnostics: true})
	a := fakecache.NewAgent()
	var sent [][]byte
	turn := func(user, plant string) {
		body := a.Turn(user)
		sent = append(sent, body)
		h := []string{"anthropic-beta", "prompt-caching-2024-07-31"}
		if plant != "" {
			h = append(h, "X-Plant", plant)
		}
		g.send(t, body, h...)
	}
	turn(strings.Repeat("Please look at the parser and tell me what it does. ", 3), "")
	a.Answer("It parses.")
	turn("And the lexer?", "")
	a.Answer("It lexes.")
	a.Tools[3]["description"] = "Run a shell command, carefully."
	turn("Now run the tests.", "")
	a.Answer("They pass.")
	a.System[2]["text"] = "The date is 2026-12-03T10:02:00Z. The working directory is /src/app."
	turn("Commit it.", "")
	a.Answer("Done.")
	a.Tools[5]["description"] = "Tool 5, reworded."
	turn("And the docs.", "system_changed") // planted: the tools changed
	a.Answer("Written.")
	turn("Thanks.", "")

	got := up.arrivals()
	if len(got) != len(sent) {
		t.Fatalf("%d requests reached the upstream, want %d", len(got), len(sent))
	}
	changes := proxy.Changes(g.p)
	for i, r := range got {
		previous := "null"
		if i > 0 {
			previous = fmt.Sprintf("%q", got[i-1].id)
		}
		want := string(sent[i][:len(sent[i])-1]) + `,"diagnostics":{"previous_message_id":` + previous + `}}`
		if string(r.body) != want {
			t.Errorf("call %d: the upstream got\n%s\nwant\n%s", i+1, r.body, want)
		}
		if r.length != int64(len(r.body)) {
			t.Errorf("call %d: Content-Length %d for a body of %d bytes", i+1, r.length, len(r.body))
		}
		if b := r.header.Values("anthropic-beta"); len(b) != 1 || b[0] != "prompt-caching-2024-07-31,cache-diagnosis-2026-04-07" {
			t.Errorf("call %d: anthropic-beta %q", i+1, b)
		}
		// The change is on the proxy's record: what came, and what was done.
		if c := changes[i]; c[0] != digest.Bytes(sent[i]).String() || !strings.Contains(c[1], "--diagnostics") || i > 0 && !strings.Contains(c[1], got[i-1].id) {
			t.Errorf("call %d: the change recorded is %q", i+1, c)
		}
	}

	an := cache.Run(cache.Calls(g.closeAndRead(t)), nil)
	if len(an.Verdicts) != len(sent) {
		t.Fatalf("%d calls predicted, want %d", len(an.Verdicts), len(sent))
	}
	want := []struct{ reason, agrees, found string }{
		{"", "", ""},
		{"", "", ""},
		{"tools_changed", "yes", "/tools/3 (tools)"},
		{"system_changed", "yes", "/system/2 (system)"},
		{"system_changed", "no", "/tools/5 (tools)"},
		{"", "", ""},
	}
	for i, v := range an.Verdicts {
		agrees := ""
		if v.Agrees != nil {
			agrees = map[bool]string{true: "yes", false: "no"}[*v.Agrees]
		}
		if w := want[i]; v.ProviderReason != w.reason || agrees != w.agrees || !strings.HasPrefix(v.Found, w.found) {
			t.Errorf("call %s: provider %q, agrees %q, found %q; want %+v", v.Call, v.ProviderReason, agrees, v.Found, w)
		}
	}
	if s := an.Summary; s.Agreements != 2 || len(s.Disagreements) != 1 || !strings.Contains(s.Disagreements[0], "the provider says system_changed") {
		t.Errorf("agreements %d, disagreements %q", s.Agreements, s.Disagreements)
	}
	var text bytes.Buffer
	if err := an.WriteText(&text, "proxy.jsonl"); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"the provider says tools_changed", "/tools/3 (tools)", "they agree", "2 agree, 1 disagree"} {
		if !strings.Contains(text.String(), line) {
			t.Errorf("promptloom cache's text lacks %q:\n%s", line, text.String())
		}
	}
}

// Without --diagnostics or --cache auto the body goes upstream byte for
// byte as it came (white space, key order and all), and so does a body
// --cache auto leaves alone because it marks its cache itself, and so
// does one --diagnostics would push over --max-bytes; the headers are the
// client's.
func TestTheBodyForwardedUntouched(t *testing.T) {
	body := []byte("{ \"model\" : \"claude-sonnet-4-5\",\n\t\"max_tokens\":64, \"messages\":[ {\"role\":\"user\",\"content\":\"hi \\u00e9\"} ] }\n")
	marked := fakecache.NewAgent().Turn("Hello.")
	for _, c := range []struct {
		name string
		o    proxy.Options
		body []byte
	}{
		{"no option", proxy.Options{}, body},
		{"--cache auto, a body that marks its cache", proxy.Options{AutoCache: true}, marked},
		{"--diagnostics, a body at --max-bytes", proxy.Options{Diagnostics: true, MaxBodyBytes: len(body)}, body},
	} {
		up := newDiagnosing(t)
		g := newThrough(t, up.srv.URL, c.o)
		g.send(t, c.body, "anthropic-beta", "prompt-caching-2024-07-31")
		got := up.arrivals()
		if len(got) != 1 || !bytes.Equal(got[0].body, c.body) || got[0].length != int64(len(c.body)) {
			t.Fatalf("%s: the upstream got %q, want %q", c.name, got[0].body, c.body)
		}
		if b := got[0].header.Values("anthropic-beta"); len(b) != 1 || b[0] != "prompt-caching-2024-07-31" {
			t.Errorf("%s: anthropic-beta %q", c.name, b)
		}
		if ch := proxy.Changes(g.p); len(ch) != 1 || ch[0] != [2]string{} {
			t.Errorf("%s: changes recorded: %q", c.name, ch)
		}
		g.closeAndRead(t)
	}
}

// Sessions that run at once each ask against their own latest response:
// one named by its header or found by continuity, never another's.
func TestDiagnosticsSessionsApart(t *testing.T) {
	up := newDiagnosing(t)
	g := newThrough(t, up.srv.URL, proxy.Options{Diagnostics: true})
	const sessions, turns = 6, 4
	var wg sync.WaitGroup
	for s := range sessions {
		wg.Go(func() {
			a := fakecache.NewAgent()
			h := []string{"X-Sess", fmt.Sprint(s)}
			if s%2 == 0 {
				h = append(h, "Promptloom-Session", fmt.Sprintf("named-%d", s))
			}
			for k := range turns {
				if k > 0 {
					a.Answer("ok")
				}
				if _, err := g.post(a.Turn(fmt.Sprintf("Session %d, turn %d.", s, k)), h...); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	last := map[string]string{}
	n := map[string]int{}
	for _, r := range up.arrivals() {
		s := r.header.Get("X-Sess")
		var req struct {
			Diagnostics struct {
				Previous *string `json:"previous_message_id"`
			} `json:"diagnostics"`
		}
		if err := json.Unmarshal(r.body, &req); err != nil {
			t.Fatal(err)
		}
		got := "null"
		if p := req.Diagnostics.Previous; p != nil {
			got = *p
		}
		want, ok := last[s]
		if !ok {
			want = "null"
		}
		if got != want {
			t.Errorf("session %s, call %d: asked against %s, want %s", s, n[s]+1, got, want)
		}
		last[s] = r.id
		n[s]++
	}
	if len(n) != sessions {
		t.Errorf("%d sessions reached the upstream, want %d", len(n), sessions)
	}
	g.closeAndRead(t)
}

// --diagnostics on the other shapes: an Anthropic stream's id (from its
// message_start) is the one the next call names; OpenAI Responses names
// the previous response in prompt_cache_options from its second call on;
// Chat Completions, which documents no diagnostics, goes byte for byte.
func TestDiagnosticsOtherShapes(t *testing.T) {
	up := fakeprovider.New(
		fakeprovider.Reply{ID: "msg_stream_1", Text: "one"}, fakeprovider.Reply{ID: "msg_stream_2", Text: "two"},
		fakeprovider.Reply{ID: "resp_1"}, fakeprovider.Reply{ID: "resp_2"},
		fakeprovider.Reply{}, fakeprovider.Reply{})
	t.Cleanup(up.Close)
	g := newThrough(t, up.URL, proxy.Options{Diagnostics: true})
	post := func(path, session string, body []byte) {
		t.Helper()
		req, _ := http.NewRequest("POST", g.srv.URL+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(proxy.SessionHeader, session)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, out)
		}
	}
	stream := []string{
		`{"model":"claude-sonnet-4-5","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"claude-sonnet-4-5","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"one"},{"role":"user","content":"and?"}]}`,
	}
	responses := []string{`{"model":"gpt-6.2-sol","input":"hi"}`, `{"model":"gpt-6.2-sol","input":"and?","prompt_cache_options":{"ttl":"30m"}}`}
	chat := []string{`{"model":"gpt-6.2-sol","messages":[{"role":"user","content":"hi"}]}`, `{ "model":"gpt-6.2-sol","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"ok"},{"role":"user","content":"and?"}]}`}
	for _, b := range stream {
		post("/v1/messages", "stream", []byte(b))
	}
	for _, b := range responses {
		post("/v1/responses", "responses", []byte(b))
	}
	for _, b := range chat {
		post("/v1/chat/completions", "chat", []byte(b))
	}
	want := []string{
		stream[0][:len(stream[0])-1] + `,"diagnostics":{"previous_message_id":null}}`,
		stream[1][:len(stream[1])-1] + `,"diagnostics":{"previous_message_id":"msg_stream_1"}}`,
		responses[0],
		`{"model":"gpt-6.2-sol","input":"and?","prompt_cache_options":{"ttl":"30m","comparison_response_id":"resp_1"}}`,
		chat[0], chat[1],
	}
	got := up.Requests()
	if len(got) != len(want) {
		t.Fatalf("%d requests reached the upstream, want %d", len(got), len(want))
	}
	for i, r := range got {
		if string(r.Body) != want[i] {
			t.Errorf("request %d (%s): the upstream got\n%s\nwant\n%s", i+1, r.Path, r.Body, want[i])
		}
		if beta := r.Header.Get("anthropic-beta"); (r.Provider == "anthropic") != (beta == "cache-diagnosis-2026-04-07") {
			t.Errorf("request %d (%s): anthropic-beta %q", i+1, r.Path, beta)
		}
	}
	changes := proxy.Changes(g.p)
	for i, c := range changes {
		if changed := c != [2]string{}; changed != (i < 2 || i == 3) {
			t.Errorf("call %d: change %q", i+1, c)
		}
	}
	g.closeAndRead(t)
}
