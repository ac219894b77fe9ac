package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A system prompt or call name that is not UTF-8 cannot be held by the
// transcript: the call is refused before the model is asked, and nothing is
// written (it used to be recorded, and the run never verified again).
func TestCallRefusesTextThatIsNotUTF8(t *testing.T) {
	for name, edit := range map[string]func(*Request){
		"call name":     func(r *Request) { r.Call = "c\xff" },
		"system prompt": func(r *Request) { r.System = "You are \xc3" },
		"sent text":     func(r *Request) { sent := r.System + "\xff"; r.Sent = &sent },
		"body's system": func(r *Request) {
			r.Body = []byte("{\"system\":\"You are careful.\xff\",\"messages\":[]}")
		},
		// Canonical JSON would record "a\uFFFD": a manifest that is not the
		// one given, which verified.
		"manifest id": func(r *Request) {
			m := *r.Manifest
			m.Segments = append(m.Segments[:0:0], m.Segments...)
			m.Segments[0].ID = "a\xff"
			r.Manifest = &m
		},
	} {
		var buf bytes.Buffer
		j := New(&buf, &Options{Clock: clock})
		r := request(t, "c1", `{"system": "You are careful."}`)
		edit(&r)
		called := false
		_, err := j.Call(ctx, ModelFunc(func(context.Context, Request) (Response, error) {
			called = true
			return Response{}, nil
		}), r)
		if err == nil || !strings.Contains(err.Error(), "UTF-8") || called || buf.Len() != 0 {
			t.Errorf("%s: err %v, model called %v, %d bytes written", name, err, called, buf.Len())
		}
	}
}

// The reply recorded is the reply returned, byte for byte. A reply that
// is not UTF-8 cannot be written to a JSON line as it is, so it is refused,
// never turned into U+FFFD (the harness used to act on "caf\xc3" while the
// transcript showed "caf\uFFFD"): Call returns an error, not the reply, and
// the transcript records the call as failed, naming the field; Finish
// records the same and says so.
func TestReplyReturnedIsReplyRecorded(t *testing.T) {
	for name, tc := range map[string]struct {
		resp Response
		want string
	}{
		"text":      {Response{Text: "caf\xc3"}, "text (byte 3)"},
		"tool call": {Response{Text: "ok", ToolCalls: []ToolCall{{ID: "t1", Name: "to\xffdo"}}}, "tool_calls[0].name (byte 2)"},
		"model":     {Response{Text: "ok", Model: "m\x80"}, "model (byte 1)"},
		"body":      {Response{Text: "ok", Body: []byte("{\"content\":\"caf\xc3\"}")}, "body (byte 15)"},
	} {
		var buf bytes.Buffer
		j := New(&buf, &Options{Clock: clock})
		resp, err := j.Call(ctx, ModelFunc(func(context.Context, Request) (Response, error) {
			return tc.resp, nil
		}), request(t, "c1", `{"system": "You are careful."}`))
		if err == nil || !strings.Contains(err.Error(), tc.want+" is not UTF-8") || resp.Text != "" {
			t.Errorf("%s: Call returned %q, %v", name, resp.Text, err)
		}
		j.Close()
		text := buf.String()
		rep, verr := Verify(&buf, nil)
		if verr != nil || !rep.OK() || len(rep.Calls) != 1 || !strings.Contains(rep.Calls[0].Outcome, tc.want+" is not UTF-8") ||
			strings.Contains(text, "\\ufffd") || strings.Contains(text, "\uFFFD") {
			t.Errorf("%s: recorded %+v (%v %+v)\n%s", name, rep.Calls, verr, rep.Problems, text)
		}

		// A harness that drives the provider itself is told the same.
		buf.Reset()
		j = New(&buf, &Options{Clock: clock})
		p, err := j.Begin(ctx, request(t, "c1", `{"system": "You are careful."}`))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Finish(ctx, tc.resp, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Finish = %v", name, err)
		}
		j.Close()
		if rep, _ := Verify(&buf, nil); !rep.OK() || !strings.Contains(rep.Calls[0].Outcome, "not UTF-8") {
			t.Errorf("%s: Finish recorded %+v", name, rep.Calls)
		}
	}

	// A reply that is UTF-8 is kept as it is, whatever JSON escapes it
	// needs on the line.
	const text = "caf\u00e9 <b>&amp;</b> \u2028 \x00 \"q\" \ufffd"
	var buf bytes.Buffer
	j := New(&buf, &Options{Clock: clock, KeepRaw: true})
	resp, err := j.Call(ctx, ModelFunc(func(context.Context, Request) (Response, error) {
		return Response{Text: text}, nil
	}), request(t, "c1", `{"system": "You are careful."}`))
	j.Close()
	rep, verr := Verify(&buf, nil)
	if err != nil || resp.Text != text || verr != nil || !rep.OK() || rep.Calls[0].Outcome != text {
		t.Errorf("returned %q (%v), recorded %+v (%v)", resp.Text, err, rep.Calls, verr)
	}
}

// A model may close its own journal: Close does not wait for the call it
// is called from (it used to deadlock), and the call's outcome is still
// recorded before the session's close.
func TestCloseFromInsideTheModel(t *testing.T) {
	var buf bytes.Buffer
	j := New(&buf, &Options{Clock: clock})
	done := make(chan error, 1)
	go func() {
		_, err := j.Call(ctx, ModelFunc(func(context.Context, Request) (Response, error) {
			return Response{Text: "bye"}, j.Close()
		}), request(t, "c1", `{"system": "You are careful."}`))
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close from inside the model deadlocked")
	}
	text := buf.String()
	rep, err := Verify(&buf, nil)
	if err != nil || !rep.OK() || !strings.Contains(text, `"kind":"journal_close"`) {
		t.Errorf("verify: %v %+v\n%s", err, rep.Problems, buf.String())
	}
}

type panicWriter struct{}

func (panicWriter) Write([]byte) (int, error) { panic("the disk caught fire") }

// A panic inside Call (a model's, or a writer's) leaves no lock held: the
// harness recovers and the journal still works, and closes. A zero Journal
// and a nil writer refuse calls with an error, not a panic.
func TestNoPanicLeavesALock(t *testing.T) {
	var buf bytes.Buffer
	j := New(&buf, &Options{Clock: clock})
	func() {
		defer func() { recover() }()
		j.Call(ctx, ModelFunc(func(context.Context, Request) (Response, error) { panic("model bug") }),
			request(t, "c1", `{"system": "You are careful."}`))
	}()
	if _, err := j.Call(ctx, echo, request(t, "c2", `{"system": "You are careful."}`)); err != nil {
		t.Fatalf("after a panicking model: %v", err)
	}
	closed := make(chan error, 1)
	go func() { closed <- j.Close() }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close blocked after a panicking model")
	}
	rep, _ := Verify(&buf, nil)
	if !rep.OK() || len(rep.Calls) != 2 || !strings.HasPrefix(rep.Calls[0].Outcome, "error: panic: model bug") {
		t.Errorf("calls %+v problems %+v", rep.Calls, rep.Problems)
	}

	w := New(panicWriter{}, nil)
	func() {
		defer func() { recover() }()
		w.Call(ctx, echo, request(t, "c1", `{"system": "x"}`))
	}()
	closed = make(chan error, 1)
	go func() { closed <- w.Close() }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close blocked after a panicking writer")
	}

	for name, z := range map[string]*Journal{"zero": {}, "nil writer": New(nil, nil)} {
		if _, err := z.Call(ctx, echo, request(t, "c1", `{"system": "x"}`)); err == nil {
			t.Errorf("%s journal: a call succeeded", name)
		}
		if err := z.Close(); err != nil {
			t.Errorf("%s journal: Close: %v", name, err)
		}
	}
}

// Open never changes a file it then refuses: a Harn transcript being
// written (its last line torn) and a one-line text file without a final
// newline are refused as they are (they used to lose their last line, or
// be emptied and opened).
func TestOpenLeavesAForeignFileAlone(t *testing.T) {
	for name, content := range map[string]string{
		"harn mid-write":         `{"type":"system_prompt","content":"x","content_hash":"h"}` + "\n" + `{"type":"provider_call_req`,
		"one text line":          "hello there",
		"harn, no final newline": `{"type":"system_prompt","content":"x"}`,
	} {
		path := filepath.Join(t.TempDir(), "t.jsonl")
		os.WriteFile(path, []byte(content), 0o644)
		if _, err := Open(path, nil); !errors.Is(err, ErrForeignTranscript) {
			t.Errorf("%s: Open = %v, want ErrForeignTranscript", name, err)
		}
		if got, _ := os.ReadFile(path); string(got) != content {
			t.Errorf("%s: the file was changed to %q", name, got)
		}
	}
	// A promptloom transcript whose first line was torn is repaired.
	path := filepath.Join(t.TempDir(), "t.jsonl")
	os.WriteFile(path, []byte(`{"prev":"blake3:00`), 0o644)
	j, err := Open(path, nil)
	if err != nil || j.Repaired != len(`{"prev":"blake3:00`) {
		t.Fatalf("torn first line: %v, repaired %d", err, j.Repaired)
	}
	j.Close()
}

// A file truncated under an open journal (logrotate's copytruncate) gets a
// session of its own: the next call opens the session again in the new
// file, which verifies on its own (it used to go on from the old chain,
// with a request before any journal_open, prompt or manifest).
func TestTruncatedFileStartsAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	j, err := Open(path, &Options{Clock: clock, Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"c1", "c2"} {
		if _, err := j.Call(ctx, echo, request(t, c, `{"system": "You are careful."}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Call(ctx, echo, request(t, "c3", `{"system": "You are careful."}`)); err != nil {
		t.Fatal(err)
	}
	j.Close()
	rep := verifyFile(t, path)
	if !rep.OK() || len(rep.Calls) != 1 || rep.Calls[0].Call != "c3" {
		t.Errorf("after truncation: calls %+v problems %+v", rep.Calls, rep.Problems)
	}
}

// Messages, tools, parameters and responses are retained redacted by
// default, and their hashes are of what is written: a secret pasted into a
// message never reaches the transcript, and the transcript verifies. With
// KeepRaw it is kept, and still verifies.
func TestRetainedContentIsRedacted(t *testing.T) {
	const token = "ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	for _, keep := range []bool{false, true} {
		var buf bytes.Buffer
		j := New(&buf, &Options{Clock: clock, KeepRaw: keep})
		r := request(t, "c1", `{"system": "You are careful."}`)
		r.Messages = json.RawMessage(`[{"role":"user","content":"my token is ` + token + `"}]`)
		r.Parameters = json.RawMessage(`{"api_key":"sk-ant-api03-aaaaaaaaaaaaaaaaaaaaaaaa"}`)
		if _, err := j.Call(ctx, ModelFunc(func(context.Context, Request) (Response, error) {
			return Response{Text: "use " + token, Body: []byte(`{"content":"use ` + token + `"}`)}, nil
		}), r); err != nil {
			t.Fatal(err)
		}
		j.Close()
		if got := strings.Contains(buf.String(), token); got != keep {
			t.Errorf("KeepRaw %v: the token in the transcript: %v\n%s", keep, got, buf.String())
		}
		if !keep && strings.Contains(buf.String(), "sk-ant-api03") {
			t.Errorf("a credential parameter reached the transcript:\n%s", buf.String())
		}
		rep, err := Verify(&buf, nil)
		if err != nil || !rep.OK() {
			t.Errorf("KeepRaw %v: does not verify: %v %+v %+v", keep, err, rep.Problems, rep.Calls)
		}
	}
}

// Failed attempts of one call are recorded against its request, and the
// transcript verifies; an attempt or outcome after the outcome is refused.
func TestAttempts(t *testing.T) {
	var buf bytes.Buffer
	j := New(&buf, &Options{Clock: clock})
	p, err := j.Begin(ctx, request(t, "c1", `{"system": "You are careful."}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Attempt(ctx, 429, errors.New("rate limited")); err != nil {
		t.Fatal(err)
	}
	if err := p.Finish(ctx, Response{Text: "ok", Status: 200}, nil); err != nil {
		t.Fatal(err)
	}
	if p.Attempt(ctx, 500, nil) == nil || p.Finish(ctx, Response{}, nil) == nil {
		t.Error("a line after the outcome was accepted")
	}
	j.Close()
	text := buf.String()
	rep, err := Verify(&buf, nil)
	if err != nil || !rep.OK() || rep.Calls[0].Attempts != 1 || !strings.Contains(text, `"failure":{"status":429,"message":"rate limited"}`) {
		t.Errorf("verify: %v %+v %+v\n%s", err, rep.Problems, rep.Calls, buf.String())
	}
}
