package transport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/harn/redact"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/transport"
)

// memory is a journal's writer that keeps what it is given in memory,
// emptied now and then so a long benchmark does not grow without bound.
type memory struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (m *memory) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.buf.Len() > 8<<20 {
		m.buf.Reset()
	}
	return m.buf.Write(p)
}

// floorBody keeps a response body aside as it is read, as the
// transport does, and does the floor's work on it at its end.
type floorBody struct {
	io.ReadCloser
	buf  []byte
	done func([]byte)
}

func (f *floorBody) Read(p []byte) (int, error) {
	n, err := f.ReadCloser.Read(p)
	f.buf = append(f.buf, p[:n]...)
	if err == io.EOF {
		f.done(f.buf)
	}
	return n, err
}

// BenchmarkTransport is the transport's cost on one call, a 100 KB
// request and a 1 MB streamed response (Anthropic's wire format) on
// loopback, journaling to memory, beside the bare transport in the same
// run: docs/performance.md quotes the ratio.
func BenchmarkTransport(b *testing.B) {
	var stream bytes.Buffer
	stream.WriteString(sse("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}`))
	stream.WriteString(sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`))
	chunk := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20)
	for stream.Len() < 1<<20 {
		stream.WriteString(sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`+chunk+`"}}`))
	}
	stream.WriteString(sse("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5000}}`))
	stream.WriteString(sse("message_stop", `{"type":"message_stop"}`))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(stream.Bytes())
	}))
	defer srv.Close()

	e := explained(b, []promptloom.Fragment{
		promptloom.Primary("You are the harness's agent."),
		promptloom.ToolGuidance("read_file", "Read a file before you edit it."),
	}, "read_file")
	r := e.Reduction
	user, _ := json.Marshal(strings.Repeat("Here is the file you asked for, line by line. ", 100<<10/47))
	body := []byte(fmt.Sprintf(`{"model":"claude-sonnet-4-5","max_tokens":1024,"stream":true,"system":%q,"messages":[{"role":"user","content":%s}],"tools":[{"name":"read_file","input_schema":{"type":"object"}}]}`, r.System, user))

	base := &http.Transport{MaxIdleConnsPerHost: 4}
	defer base.CloseIdleConnections()
	run := func(b *testing.B, rt http.RoundTripper) {
		client := &http.Client{Transport: rt}
		b.SetBytes(int64(len(body) + stream.Len()))
		b.ResetTimer()
		cpu := cpuTime()
		defer func() {
			// The CPU time of the whole process (client and server) per
			// call: steadier than ns/op on a loaded machine.
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		}()
		for i := 0; i < b.N; i++ {
			ctx := transport.With(context.Background(), &transport.Call{Name: "turn", Explanation: e})
			req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/messages", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if n != int64(stream.Len()) {
				b.Fatalf("read %d bytes", n)
			}
		}
	}
	b.Run("bare", func(b *testing.B) { run(b, base) })
	// The floor of a journaled call's own work: the bare call, then one
	// BLAKE3 of each body, one redaction pass over each (the request's
	// messages as JSON, the stream as text), one JSON escape (the stream
	// quoted into its line), one chain hash (of the lines' bytes), one
	// parse of the stream. The journaled call is measured against it.
	b.Run("floor", func(b *testing.B) {
		messages := body[bytes.Index(body, []byte(`[{"role":"user"`)):bytes.Index(body, []byte(`,"tools"`))]
		// The stream's copy and the line are kept from call to call: the
		// floor allocates only what its work does.
		var line, kept []byte
		run(b, rtFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := base.RoundTrip(r)
			if err != nil {
				return nil, err
			}
			resp.Body = &floorBody{ReadCloser: resp.Body, buf: kept[:0], done: func(stream []byte) {
				kept = stream
				digest.Bytes(body)
				redacted, _ := redact.JSON(messages)
				digest.Bytes(stream)
				text := redact.String(unsafe.String(unsafe.SliceData(stream), len(stream)))
				line = pjson.AppendString(append(line[:0], redacted...), text)
				digest.Bytes(line)
				payload.Summarize(payload.Anthropic, stream, true)
			}}
			return resp, nil
		}))
	})
	// The transport with no journal: the request read, detected and
	// passed on, nothing recorded.
	b.Run("nojournal", func(b *testing.B) { run(b, transport.New(base, nil, nil)) })
	b.Run("journaled", func(b *testing.B) {
		j := journal.New(&memory{}, &journal.Options{Session: "bench"})
		defer j.Close()
		run(b, transport.New(base, j, nil))
	})
}
