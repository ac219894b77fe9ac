package transport_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/internal/relay"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/transcript"
	"github.com/promptloom/promptloom/transport"
)

// endedCall sends one unattributed Anthropic call through a transport
// with the given response limit to answer, hands the response to read,
// and returns the transcript's outcome for the call and the error Done
// was given.
func endedCall(t *testing.T, limit int, answer http.HandlerFunc, read func(*http.Response, context.CancelFunc)) (string, error) {
	t.Helper()
	srv := httptest.NewServer(answer)
	defer srv.Close()
	var buf bytes.Buffer
	j := journal.New(&buf, &journal.Options{Session: "s"})
	rt := transport.New(nil, j, &transport.Options{MaxBodyBytes: limit})
	var doneErr error
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx = relay.With(transport.With(ctx, &transport.Call{Name: "c1"}), &relay.Call{Done: func(_ journal.Response, err error) { doneErr = err }})
	body := `{"model":"m","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/messages", strings.NewReader(body))
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err == nil {
		read(resp, cancel)
	}
	j.Close()
	rep, verr := transcript.Verify(bytes.NewReader(buf.Bytes()), nil)
	if verr != nil || len(rep.Calls) != 1 {
		t.Fatalf("verify: %v\n%s", verr, buf.String())
	}
	if rep.Calls[0].Outcome == "" {
		t.Fatalf("no outcome recorded:\n%s", buf.String())
	}
	return rep.Calls[0].Outcome, doneErr
}

// streamThenWait sends past the limit and then waits for the caller to go:
// a cancel then always meets an answer still coming, as it does when a
// model is still writing. With the whole stream sent, the client may
// already hold all of it when it cancels, and reads it to its end.
func streamThenWait(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	for i := range 80 {
		fmt.Fprintf(w, "event: ping\ndata: {\"type\":\"ping\",\"n\":%d,\"pad\":%q}\n\n", i, strings.Repeat("x", 60))
	}
	w.(http.Flusher).Flush()
	<-r.Context().Done()
}

// stream answers with a long event stream, flushed event by event.
func stream(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	for i := range 400 {
		if _, err := fmt.Fprintf(w, "event: ping\ndata: {\"type\":\"ping\",\"n\":%d,\"pad\":%q}\n\n", i, strings.Repeat("x", 60)); err != nil {
			return
		}
		w.(http.Flusher).Flush()
	}
}

// A stream the caller closes or cancels after it has
// passed the response limit is recorded as closed early or cancelled,
// which is how it ended, not as over the limit.
func TestAStreamEndedPastTheLimit(t *testing.T) {
	readPast := func(resp *http.Response) {
		if _, err := io.ReadFull(resp.Body, make([]byte, 4000)); err != nil {
			t.Fatal(err)
		}
	}
	out, _ := endedCall(t, 1000, stream, func(resp *http.Response, _ context.CancelFunc) {
		readPast(resp)
		resp.Body.Close()
	})
	if !strings.Contains(out, "closed early by the caller") {
		t.Errorf("closed after the limit: %s", out)
	}
	out, _ = endedCall(t, 1000, streamThenWait, func(resp *http.Response, cancel context.CancelFunc) {
		readPast(resp)
		cancel()
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	})
	if !strings.Contains(out, "cancelled") {
		t.Errorf("cancelled after the limit: %s", out)
	}
	// Read to its end, it is over the limit.
	out, _ = endedCall(t, 1000, stream, func(resp *http.Response, _ context.CancelFunc) {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	})
	if !strings.Contains(out, "over 1000 bytes") {
		t.Errorf("read to its end: %s", out)
	}
}

// An error answer that echoes a credential reaches
// relay.Call.Done (and so the proxy's page, and a span) redacted, as the
// transcript has it.
func TestAnErrorAnswerIsRedactedForDone(t *testing.T) {
	key := "sk-proj-" + strings.Repeat("Ab1", 20)
	out, err := endedCall(t, 0, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(401)
		fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s"}}`, key)
	}, func(resp *http.Response, _ context.CancelFunc) {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	})
	if err == nil || strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "redacted") {
		t.Errorf("Done was given %v", err)
	}
	if strings.Contains(out, key) {
		t.Errorf("the transcript: %s", out)
	}
}

// An error answer is cut to its first 512 bytes for Done and the span,
// and a token that the cut falls inside is still redacted, wherever it
// starts: the answer is redacted whole before it is cut.
func TestAnErrorAnswerCutInsideATokenIsRedacted(t *testing.T) {
	for _, token := range []string{
		"ghp_0123456789abcdefghijklmnopqrstuvwxyzAB",
		"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1c2VyLTQyIiwic2NvcGUiOiJyZXBvIn0.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg",
	} {
		for _, before := range []int{4, 20, 36} {
			pad := strings.Repeat("x", 512-len(`{"error":{"message":"`)-before)
			out, err := endedCall(t, 0, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(401)
				fmt.Fprintf(w, `{"error":{"message":"%s %s is not valid"}}`, pad, token)
			}, func(resp *http.Response, _ context.CancelFunc) {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			})
			if err == nil {
				t.Fatal("a 401 succeeded")
			}
			for i := 0; i+10 <= len(token); i++ {
				if strings.Contains(err.Error(), token[i:i+10]) || strings.Contains(out, token[i:i+10]) {
					t.Fatalf("%d bytes before the cut, %q of the token is shown:\nDone: %v\ntranscript: %s", before, token[i:i+10], err, out)
				}
			}
		}
	}
}

// An upstream that switches protocols on a model call
// has the call recorded, as failed, and its connection let go.
func TestA101IsRecorded(t *testing.T) {
	out, err := endedCall(t, 0, func(w http.ResponseWriter, r *http.Request) {
		c, brw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		brw.Flush()
		io.Copy(io.Discard, c) // until the client lets go
	}, func(resp *http.Response, _ context.CancelFunc) {
		resp.Body.Close()
		t.Errorf("a 101 was handed on as an answer")
	})
	if err == nil || !strings.Contains(out, "101 Switching Protocols") {
		t.Errorf("outcome %q, Done given %v", out, err)
	}
}
