package transport_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/transcript"
	"github.com/promptloom/promptloom/transport"
)

// oneCall sends one Anthropic request through a journaled transport to a
// server that answers with answer, and hands the response to read; it
// returns the transcript's verdict on the call.
func oneCall(t *testing.T, answer func(w http.ResponseWriter, r *http.Request), read func(*http.Response)) transcript.CallReport {
	t.Helper()
	return oneCallWith(t, func(*http.Request) {}, answer, read)
}

// oneCallWith is oneCall with the request edited first.
func oneCallWith(t *testing.T, edit func(*http.Request), answer func(w http.ResponseWriter, r *http.Request), read func(*http.Response)) transcript.CallReport {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(answer))
	defer srv.Close()
	r, err := promptloom.Reduce([]promptloom.Fragment{promptloom.Primary("You are careful.")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	j := journal.New(&buf, &journal.Options{Session: "s"})
	rt := transport.New(nil, j, nil)
	ctx := transport.With(context.Background(), &transport.Call{Name: "c1", Manifest: manifest.New(r, "agent"), System: r.System})
	body := `{"model":"m","max_tokens":8,"system":` + strconv.Quote(r.System) + `,"messages":[{"role":"user","content":"hi"}]}`
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/messages", strings.NewReader(body))
	edit(req)
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	read(resp)
	j.Close()
	rep, err := transcript.Verify(bytes.NewReader(buf.Bytes()), nil)
	if err != nil || len(rep.Calls) != 1 {
		t.Fatalf("verify: %v, %d calls\n%s", err, len(rep.Calls), buf.String())
	}
	return rep.Calls[0]
}

// A reply that is not UTF-8 cannot be held in a transcript: the call is
// recorded as failed, and the SDK reading it gets that error instead of
// the reply, as a harness calling Journal.Call does.
func TestReplyNotUTF8IsTheSDKsError(t *testing.T) {
	var readErr error
	c := oneCall(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"m1","type":"message","content":[{"type":"text","text":"caf`+"\xc3"+`"}],"stop_reason":"end_turn"}`)
	}, func(resp *http.Response) {
		_, readErr = io.ReadAll(resp.Body)
		resp.Body.Close()
	})
	if readErr == nil || !strings.Contains(readErr.Error(), "not UTF-8") {
		t.Errorf("the SDK read the reply without an error: %v", readErr)
	}
	if c.Status != "ok" || !strings.HasPrefix(c.Outcome, "error: ") || !strings.Contains(c.Outcome, "not UTF-8") {
		t.Errorf("recorded %s %q, want the call's error", c.Status, c.Outcome)
	}
}

// lastRead is a response body whose one Read waits for the caller's
// Close, then returns the whole reply and io.EOF: the last bytes arrive
// while the Close is under way.
type lastRead struct {
	reply   string
	reading chan struct{}
	closed  chan struct{}
	once    sync.Once
	done    bool
}

func (b *lastRead) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	close(b.reading)
	<-b.closed
	// Give the Close every chance to record its outcome first, as a
	// scheduler may: the recorder must not let it.
	time.Sleep(20 * time.Millisecond)
	b.done = true
	return copy(p, b.reply), io.EOF
}

func (b *lastRead) Close() error { b.once.Do(func() { close(b.closed) }); return nil }

type baseFunc func(*http.Request) (*http.Response, error)

func (f baseFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A Close from another goroutine racing the Read that returns the last
// bytes records one outcome, the true one: the caller got the whole reply,
// so the call is recorded as answered, not as closed early.
func TestCloseRacingTheLastRead(t *testing.T) {
	const reply = `{"id":"m1","type":"message","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn"}`
	r, err := promptloom.Reduce([]promptloom.Fragment{promptloom.Primary("You are careful.")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	j := journal.New(&buf, &journal.Options{Session: "s"})
	body := &lastRead{reply: reply, reading: make(chan struct{}), closed: make(chan struct{})}
	rt := transport.New(baseFunc(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: body, Request: req}, nil
	}), j, nil)
	ctx := transport.With(context.Background(), &transport.Call{Name: "c1", Manifest: manifest.New(r, "agent"), System: r.System})
	reqBody := `{"model":"m","max_tokens":8,"system":` + strconv.Quote(r.System) + `,"messages":[{"role":"user","content":"hi"}]}`
	req, _ := http.NewRequestWithContext(ctx, "POST", "http://provider.test/v1/messages", strings.NewReader(reqBody))
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string)
	go func() {
		b := make([]byte, 4096)
		n, _ := resp.Body.Read(b)
		got <- string(b[:n])
	}()
	<-body.reading // the Read is under way
	resp.Body.Close()
	if g := <-got; g != reply {
		t.Fatalf("the caller read %q", g)
	}
	j.Close()
	rep, err := transcript.Verify(bytes.NewReader(buf.Bytes()), nil)
	if err != nil || len(rep.Calls) != 1 {
		t.Fatalf("verify: %v\n%s", err, buf.String())
	}
	if c := rep.Calls[0]; c.Status != "ok" || c.Outcome != "done" {
		t.Errorf("the caller got the whole reply; the transcript says %s %q", c.Status, c.Outcome)
	}
}

// A harness that asks for gzip itself (its own Accept-Encoding, so
// net/http hands the body on still encoded) gets the encoded body, and the
// transcript records the reply decoded.
func TestGzipTheHarnessAskedFor(t *testing.T) {
	const reply = `{"id":"m1","type":"message","content":[{"type":"text","text":"zipped"}],"stop_reason":"end_turn"}`
	var raw []byte
	c := oneCallWith(t, func(req *http.Request) { req.Header.Set("Accept-Encoding", "gzip") }, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, reply)
		zw.Close()
	}, func(resp *http.Response) {
		raw, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	})
	if len(raw) < 2 || raw[0] != 0x1f || raw[1] != 0x8b {
		t.Errorf("the harness did not get the gzip body it asked for: %q", raw)
	}
	if c.Status != "ok" || c.Outcome != "zipped" {
		t.Errorf("recorded %s %q, want the decoded reply", c.Status, c.Outcome)
	}
}

// A redirect the client follows (307: the same body to a new location) is
// two attempts, each recorded as itself: the first redirected, the second
// answered from the new location; read back, one logical call.
func TestRedirectIsOneLogicalCall(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/messages" {
			http.Redirect(w, r, "/v2/messages", http.StatusTemporaryRedirect)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"m1","type":"message","content":[{"type":"text","text":"moved"}],"stop_reason":"end_turn"}`)
	}))
	defer srv.Close()
	var buf bytes.Buffer
	j := journal.New(&buf, &journal.Options{Session: "s"})
	ctx := transport.With(context.Background(), &transport.Call{Name: "c1"})
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/messages", strings.NewReader(`{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`))
	resp, err := (&http.Client{Transport: transport.New(nil, j, nil)}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	j.Close()
	rep, err := transcript.Verify(bytes.NewReader(buf.Bytes()), nil)
	if err != nil || !rep.OK() || len(rep.Calls) != 2 {
		t.Fatalf("verify: %v, %+v\n%s", err, rep.Calls, buf.String())
	}
	if rep.Calls[0].Outcome != "error: HTTP 307 Temporary Redirect" || rep.Calls[1].Outcome != "moved" {
		t.Errorf("outcomes %q, %q", rep.Calls[0].Outcome, rep.Calls[1].Outcome)
	}
	rs, err := cache.FromTranscript(buf.Bytes(), rep)
	if err != nil {
		t.Fatal(err)
	}
	if g := cache.Logical(rs); len(g) != 1 || len(g[0]) != 2 {
		t.Errorf("logical calls %v, want one of two attempts", g)
	}
}

// A reply of half the response limit (text and body both in one line
// would pass what the journal's reader takes back) is recorded by its
// summary, and the transcript verifies with the default limits.
func TestLargeReplyVerifies(t *testing.T) {
	if testing.Short() {
		t.Skip("a 33 MB reply")
	}
	text := strings.Repeat("All work and no play. ", 33<<20/22)
	c := oneCall(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"m1","type":"message","content":[{"type":"text","text":"`+text+`"}],"stop_reason":"end_turn"}`)
	}, func(resp *http.Response) {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	})
	if c.Status != "ok" || c.Outcome != text {
		t.Fatalf("a %d-byte reply: %s, %d bytes of outcome", len(text), c.Status, len(c.Outcome))
	}
}

// A body on a model endpoint that readers could read two ways (a second
// value after the object, a byte order mark) is refused even with no Call
// on its context: nothing reaches the provider unchecked and unrecorded.
func TestUnattributedUnreadableBodyIsRefused(t *testing.T) {
	for name, body := range map[string]string{
		"a second value":    `{"model":"m","messages":[]} {"model":"x"}`,
		"a byte order mark": "\ufeff" + `{"model":"m","messages":[]}`,
	} {
		sent := false
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { sent = true }))
		var file bytes.Buffer
		j := journal.New(&file, &journal.Options{Session: "s"})
		rt := transport.New(nil, j, nil)
		req, _ := http.NewRequest("POST", srv.URL+"/v1/messages", strings.NewReader(body))
		resp, err := rt.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		srv.Close()
		if err == nil || sent {
			t.Errorf("%s: sent %v, err %v; want refused before it leaves", name, sent, err)
		}
	}
}

// An answer of declared length is recorded as its last byte is read,
// before that byte is handed on, even from a body that says io.EOF only on
// the read after it (a bytes.Reader's way; net/http's says it with the
// last bytes): a client that has the whole answer, and reads no further
// as an HTTP client of a Content-Length body need not, finds the call's
// outcome in the transcript.
func TestRecordedByTheLastDeclaredByte(t *testing.T) {
	answer := `{"id":"m1","type":"message","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn"}`
	base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		io.Copy(io.Discard, req.Body)
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Request: req,
			ContentLength: int64(len(answer)), Body: io.NopCloser(bytes.NewReader([]byte(answer)))}, nil
	})
	r, err := promptloom.Reduce([]promptloom.Fragment{promptloom.Primary("You are careful.")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	j := journal.New(&buf, &journal.Options{Session: "s"})
	defer j.Close()
	rt := transport.New(base, j, nil)
	ctx := transport.With(context.Background(), &transport.Call{Name: "c1", Manifest: manifest.New(r, "agent"), System: r.System})
	body := `{"model":"m","max_tokens":8,"system":` + strconv.Quote(r.System) + `,"messages":[{"role":"user","content":"hi"}]}`
	req, _ := http.NewRequestWithContext(ctx, "POST", "http://provider.test/v1/messages", strings.NewReader(body))
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, resp.ContentLength)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"kind":"provider_call_response"`) {
		t.Fatalf("the whole answer was read, and the call is not recorded:\n%s", buf.String())
	}
	resp.Body.Close()
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// wholeBody hands its bytes and its end in one Read, as a body whose
// stream arrived whole before the first read does.
type wholeBody struct{ b []byte }

func (w *wholeBody) Read(p []byte) (int, error) {
	n := copy(p, w.b)
	w.b = w.b[n:]
	if len(w.b) == 0 {
		return n, io.EOF
	}
	return n, nil
}

func (w *wholeBody) Close() error { return nil }

// A stream that arrives whole reaches the caller before its outcome is
// written: the outcome is recorded at the next Read, or at Close, as the
// whole answer, not as closed early.
func TestAWholeStreamIsHandedOnFirst(t *testing.T) {
	events, _ := anthropicAnswer("")
	stream := strings.Join(events, "")
	for _, end := range []string{"read", "close"} {
		t.Run(end, func(t *testing.T) {
			base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
				io.Copy(io.Discard, req.Body)
				return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Request: req,
					ContentLength: -1, Body: &wholeBody{[]byte(stream)}}, nil
			})
			var buf bytes.Buffer
			j := journal.New(&buf, &journal.Options{Session: "s"})
			rt := transport.New(base, j, nil)
			ctx := transport.With(context.Background(), &transport.Call{Name: "c1"})
			body := `{"model":"claude-sonnet-4-5","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
			req, _ := http.NewRequestWithContext(ctx, "POST", "http://provider.test/v1/messages", strings.NewReader(body))
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			p := make([]byte, 2*len(stream))
			n, err := resp.Body.Read(p)
			if n != len(stream) || err != nil {
				t.Fatalf("the first Read gave %d of %d bytes and %v; want them all and no error yet", n, len(stream), err)
			}
			if strings.Contains(buf.String(), `"kind":"provider_call_response"`) {
				t.Fatal("the outcome was written before the bytes were handed on")
			}
			if end == "read" {
				if n, err := resp.Body.Read(p); n != 0 || err != io.EOF {
					t.Fatalf("the next Read gave %d bytes and %v; want 0 and EOF", n, err)
				}
			}
			resp.Body.Close()
			j.Close()
			out := buf.String()
			if !strings.Contains(out, `"kind":"provider_call_response"`) || strings.Contains(out, "closed early") {
				t.Fatalf("want the call recorded whole:\n%s", out)
			}
		})
	}
}
