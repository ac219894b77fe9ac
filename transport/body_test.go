package transport_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/internal/relay"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/transport"
)

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// sendWith sends body through a transport (no journal) with a Call whose
// Payload was read from known, and returns what the upstream received
// (into a buffer made before, so that the upstream allocates nothing).
func sendWith(t *testing.T, known, body []byte) []byte {
	t.Helper()
	sink := make([]byte, len(body)+1)
	pr, err := payload.Read(known, payload.Anthropic)
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	rt := transport.New(roundTrip(func(r *http.Request) (*http.Response, error) {
		n, _ := io.ReadFull(r.Body, sink)
		got = sink[:n]
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}")), Request: r}, nil
	}), nil, nil)
	ctx := relay.With(transport.With(context.Background(), &transport.Call{Name: "c"}), &relay.Call{Payload: pr})
	req, _ := http.NewRequestWithContext(ctx, "POST", "http://upstream/v1/messages", bytes.NewReader(body))
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return got
}

func agentBody(n int) []byte {
	return []byte(`{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":"` + strings.Repeat("look at this. ", n) + `"}]}`)
}

// A body a caller read already (the proxy does, to find the session) is
// not read into a second copy: the transport takes the caller's bytes
// when the body is those bytes.
func TestABodyReadAlreadyIsNotCopied(t *testing.T) {
	body := agentBody(600_000) // 8.4 MB
	sendWith(t, body, body)    // warm
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got := sendWith(t, body, body)
	runtime.ReadMemStats(&after)
	if !bytes.Equal(got, body) {
		t.Fatal("the upstream did not get the body")
	}
	// The upstream's buffer, made before the body is sent, is one body.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(len(body))*3/2 {
		t.Errorf("a %d MB body read already cost %d MB more", len(body)>>20, alloc>>20)
	}
}

// A body that is not the caller's bytes is sent as it is, however it
// differs: at its start, past the first block compared, or longer.
func TestABodyThatIsNotTheCallersIsSentAsItIs(t *testing.T) {
	known := agentBody(10_000)
	for name, body := range map[string][]byte{
		"the same":        known,
		"another model":   bytes.Replace(known, []byte("claude-sonnet-4-5"), []byte("claude-opus-4-1-x"), 1),
		"late change":     append(bytes.Clone(known[:len(known)-10]), []byte(`x"}]}     `)[:10]...),
		"longer":          append(bytes.Clone(known), ' ', '\n'),
		"a short request": agentBody(1),
	} {
		if got := sendWith(t, known, body); !bytes.Equal(got, body) {
			t.Errorf("%s: the upstream got %d bytes, want %d", name, len(got), len(body))
		}
	}
}
