package journal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/transcript"
)

// unmarked is an Anthropic body with every cache_control left out: what
// a client that sets no breakpoint sends, before a proxy places them.
func unmarked(t *testing.T, body []byte) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	var strip func(any)
	strip = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			delete(x, "cache_control")
			for _, y := range x {
				strip(y)
			}
		case []any:
			for _, y := range x {
				strip(y)
			}
		}
	}
	strip(v)
	out, _ := json.Marshal(v)
	return out
}

// A body changed before it was sent keeps the body as it came beside
// it (request.received), as segments of the session that cost a few
// pieces, with the change in words: both verify, transcript.Report counts the
// changed calls, Requests gives both back, the next call's segments
// still refer to the body sent, and altering the received part fails.
func TestTheBodyReceivedIsKeptBesideTheBodySent(t *testing.T) {
	var buf bytes.Buffer
	at := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	j := New(&buf, &Options{Session: "s", Clock: func() time.Time { at = at.Add(time.Second); return at }})
	a := newAgentRun(payload.Anthropic, 7)
	const change = "placed cache breakpoints (--cache auto) at /system/0"
	var received [][]byte
	for i := range 8 {
		body, resp := a.call()
		req := Request{Call: fmt.Sprintf("turn-%d", i+1), Body: body, Provider: payload.Anthropic, Unattributed: true}
		var in []byte
		if i != 4 { // the fifth is sent as it came
			in = unmarked(t, body)
			req.Received, req.Changed = in, change
		}
		if in != nil {
			kept, _, err := j.retain(in) // redacted, as the transcript keeps it
			if err != nil {
				t.Fatal(err)
			}
			received = append(received, kept)
		} else {
			received = append(received, nil)
		}
		pd, err := j.Begin(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if err := pd.Finish(ctx, resp, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	rep, err := transcript.Verify(bytes.NewReader(data), nil)
	if err != nil || !rep.OK() || rep.Changed != 7 {
		var w bytes.Buffer
		rep.WriteText(&w)
		t.Fatalf("verify: %v, %d changed\n%s", err, rep.Changed, w.String())
	}
	sent, err := transcript.Requests(data, rep)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range sent {
		switch {
		case received[i] == nil && (s.Received != nil || s.Changed != ""):
			t.Errorf("call %d, sent as it came, has a body received", i+1)
		case received[i] != nil && (s.Changed != change || !jsonEqual(t, s.Received, received[i])):
			t.Errorf("call %d: received %.80s (%q), want %.80s", i+1, s.Received, s.Changed, received[i])
		case received[i] != nil && jsonEqual(t, s.Received, s.Body):
			t.Errorf("call %d: the body received is the body sent", i+1)
		}
	}
	// The received part costs a few pieces, not the history again.
	line := lineOf(t, data, `"call":"turn-8"`)
	recv := line[bytes.Index(line, []byte(`"received":`)):]
	if len(recv) > len(line)/4 {
		t.Errorf("the received part is %d of its line's %d bytes", len(recv), len(line))
	}
	for _, tc := range []struct {
		name string
		edit func([]byte) []byte
		rule string
	}{
		{"a received digest altered", func(l []byte) []byte {
			at := bytes.Index(l, []byte(`"received":{"body_bytes"`))
			h := at + bytes.Index(l[at:], []byte(`blake3:`)) + len("blake3:")
			l[h] ^= 1
			return l
		}, "body_content"},
		{"the change left out", func(l []byte) []byte {
			return regexp.MustCompile(`,"change":"[^"]*"`).ReplaceAll(l, nil)
		}, "received"},
		{"a received piece altered", func(l []byte) []byte {
			return regexp.MustCompile(`("received":\{.*"body_segments":\[)`).ReplaceAll(l, []byte(`${1}"{}",`))
		}, "body_content"},
	} {
		tampered := bytes.Replace(data, line, tc.edit(bytes.Clone(line)), 1)
		rep, err := transcript.Verify(bytes.NewReader(tampered), nil)
		if err != nil || rep.OK() {
			t.Errorf("%s: verifies (%v)", tc.name, err)
			continue
		}
		if c := rep.Calls[7]; c.Problem == nil || string(c.Problem.Rule) != tc.rule {
			t.Errorf("%s: turn-8 is %+v, want rule %s", tc.name, c.Problem, tc.rule)
		}
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	p, _ := json.Marshal(x)
	q, _ := json.Marshal(y)
	return bytes.Equal(p, q)
}

func lineOf(t *testing.T, data []byte, has string) []byte {
	t.Helper()
	for _, l := range bytes.Split(data, []byte("\n")) {
		if bytes.Contains(l, []byte(has)) && bytes.Contains(l, []byte(`"provider_call_request"`)) {
			return l
		}
	}
	t.Fatalf("no request line with %s", has)
	return nil
}

// An attributed call keeps the body received whole, bound to its receipt
// (received_content_hash) as every member of its request is; it
// verifies, altered it fails, and a body received without the change
// (or the change without it) is refused before anything is written.
func TestAnAttributedCallKeepsTheBodyReceived(t *testing.T) {
	var buf bytes.Buffer
	j := New(&buf, &Options{Clock: clock, Session: "a"})
	req := request(t, "c1", `{"system": ["You are careful."]}`)
	req.Received, req.Changed = []byte(`{"messages":[{"role":"user","content":"hello c1"}],"model":"m"}`), "asked for the provider's cache diagnostics"
	if _, err := j.Call(ctx, echo, req); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []Request{{Call: "x", Unattributed: true, Body: []byte(`{}`), Received: []byte(`{}`)},
		{Call: "y", Unattributed: true, Body: []byte(`{}`), Changed: "something"}} {
		if _, err := j.Call(ctx, echo, bad); err == nil {
			t.Errorf("call %s: Received without Changed, or the reverse, is recorded", bad.Call)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	rep, err := transcript.Verify(bytes.NewReader(data), nil)
	if err != nil || !rep.OK() || rep.Changed != 1 || len(rep.Calls) != 1 {
		t.Fatalf("verify: %v %+v", err, rep)
	}
	sent, err := transcript.Requests(data, rep)
	if err != nil || len(sent) != 1 || !jsonEqual(t, sent[0].Received, req.Received) || sent[0].Changed != req.Changed {
		t.Fatalf("read back: %v %+v", err, sent)
	}
	tampered := bytes.Replace(data, []byte(`"content":"hello c1","role":"user"}],"model":"m"`), []byte(`"content":"hello c2","role":"user"}],"model":"m"`), 1)
	if bytes.Equal(tampered, data) {
		t.Fatalf("the body received is not kept whole:\n%s", data)
	}
	if rep, err := transcript.Verify(bytes.NewReader(tampered), nil); err != nil || rep.OK() || rep.Calls[0].Problem == nil || rep.Calls[0].Problem.Rule != transcript.RuleRequestContent {
		t.Errorf("altered: %v %+v", err, rep.Calls)
	}
}
