package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom/internal/chain"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/transcript"
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
		"tool call": {Response{Text: "ok", ToolCalls: []payload.ToolCall{{ID: "t1", Name: "to\xffdo"}}}, "tool_calls[0].name (byte 2)"},
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
		rep, verr := transcript.Verify(&buf, nil)
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
		if rep, _ := transcript.Verify(&buf, nil); !rep.OK() || !strings.Contains(rep.Calls[0].Outcome, "not UTF-8") {
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
	rep, verr := transcript.Verify(&buf, nil)
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
	rep, err := transcript.Verify(&buf, nil)
	if err != nil || !rep.OK() || !strings.Contains(text, `"kind":"journal_close"`) {
		t.Errorf("verify: %v %+v\n%s", err, rep.Problems, buf.String())
	}
}

// failingClose is a sink whose Close fails.
type failingClose struct{ Sink }

func (failingClose) Close() error { return errors.New("the disk is full") }

// A model closing its own journal: on a signed file journal, a call the
// model makes after it is ErrClosed, and the session ends, signed, with
// the outcome; when ending fails, a Close after the call says so (the
// error used to be dropped, and every Close said nil).
func TestCloseFromInsideTheModelEndsTheSession(t *testing.T) {
	signer, verifier := keys(t, "k")
	path := filepath.Join(t.TempDir(), "run.jsonl")
	j, err := Open(path, &Options{Clock: clock, Signer: signer, CheckpointEvery: 1})
	if err != nil {
		t.Fatal(err)
	}
	var inner error
	if _, err := j.Call(ctx, ModelFunc(func(context.Context, Request) (Response, error) {
		if err := j.Close(); err != nil {
			return Response{}, err
		}
		_, inner = j.Call(ctx, echo, request(t, "inner", `{"system": "x"}`))
		return Response{Text: "bye"}, j.Close()
	}), request(t, "c1", `{"system": "You are careful."}`)); err != nil || !errors.Is(inner, ErrClosed) {
		t.Fatalf("call: %v, inner call: %v", err, inner)
	}
	data, _ := os.ReadFile(path)
	if rep, err := transcript.Verify(bytes.NewReader(data), &transcript.Options{Verifier: verifier}); err != nil || !rep.OK() || len(rep.Calls) != 1 {
		t.Errorf("verify: %v %+v\n%s", err, rep.Problems, data)
	}

	var buf bytes.Buffer
	j = NewSink(failingClose{&writerSink{w: &buf, t: Tail{Prev: chain.Genesis}}}, &Options{Clock: clock})
	if _, err := j.Call(ctx, ModelFunc(func(context.Context, Request) (Response, error) {
		return Response{Text: "bye"}, j.Close()
	}), request(t, "c1", `{"system": "You are careful."}`)); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err == nil || !strings.Contains(err.Error(), "the disk is full") {
		t.Errorf("Close after the session ended = %v", err)
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
	rep, _ := transcript.Verify(&buf, nil)
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

// closeCounter counts its sink's closes.
type closeCounter struct {
	Sink
	n int
}

func (c *closeCounter) Close() error { c.n++; return nil }

// nilModel is a Model whose nil pointer panics when asked.
type nilModel struct{ text string }

func (m *nilModel) Complete(context.Context, Request) (Response, error) {
	return Response{Text: m.text}, nil
}

// No exported zero value or nil argument of the package panics or locks:
// each of these returns (an error, or nothing to do) within a second, and
// a journal that a Clock's panic interrupted still closes.
func TestNoNilOrZeroValuePanics(t *testing.T) {
	req := request(t, "c1", `{"system": "x"}`)
	var nilJournal *Journal
	var nilPending *Pending
	var nilReport *transcript.Report
	var nilBuffer *bytes.Buffer
	var nilReader *bytes.Reader
	var nilSink *writerSink
	boom := 0
	closes := &closeCounter{Sink: &writerSink{w: &bytes.Buffer{}, t: Tail{Prev: chain.Genesis}}}
	panicky := NewSink(closes, &Options{Clock: func() time.Time {
		if boom++; boom > 1 {
			panic("clock")
		}
		return time.Unix(0, 0)
	}})
	for name, f := range map[string]func() error{
		"nil journal Call":  func() error { _, err := nilJournal.Call(ctx, echo, req); return want(err) },
		"nil journal Begin": func() error { _, err := nilJournal.Begin(ctx, req); return want(err) },
		"nil journal Close": func() error { return nilJournal.Close() },
		"zero journal": func() error {
			var j Journal
			if _, err := j.Begin(ctx, req); err == nil {
				return errors.New("Begin succeeded")
			}
			j.Close()
			return j.Close()
		},
		"typed nil writer":   func() error { _, err := New(nilBuffer, nil).Call(ctx, echo, req); return want(err) },
		"typed nil sink":     func() error { _, err := NewSink(nilSink, nil).Call(ctx, echo, req); return want(err) },
		"nil ModelFunc":      func() error { _, err := New(&bytes.Buffer{}, nil).Call(ctx, ModelFunc(nil), req); return want(err) },
		"nil pointer model":  func() error { _, err := New(&bytes.Buffer{}, nil).Call(ctx, (*nilModel)(nil), req); return want(err) },
		"nil ModelFunc call": func() error { _, err := ModelFunc(nil).Complete(ctx, req); return want(err) },
		"nil context": func() error {
			j := New(&bytes.Buffer{}, nil)
			//lint:ignore SA1012 a nil context is what is tested
			if _, err := j.Call(nil, echo, req); err != nil {
				return err
			}
			//lint:ignore SA1012 a nil context is what is tested
			p, err := j.Begin(nil, req)
			if err != nil {
				return err
			}
			//lint:ignore SA1012 a nil context is what is tested
			if err := p.Attempt(nil, 500, nil); err != nil {
				return err
			}
			//lint:ignore SA1012 a nil context is what is tested
			if err := p.Finish(nil, Response{Text: "ok"}, nil); err != nil {
				return err
			}
			return j.Close()
		},
		"zero Pending": func() error {
			var p Pending
			return errors.Join(want(p.Finish(ctx, Response{}, nil)), want(p.Attempt(ctx, 500, nil)))
		},
		"nil Pending": func() error {
			return errors.Join(want(nilPending.Finish(ctx, Response{}, nil)), want(nilPending.Attempt(ctx, 500, nil)))
		},
		"Verify nil reader":       func() error { _, err := transcript.Verify(nil, nil); return want(err) },
		"Verify typed nil reader": func() error { _, err := transcript.Verify(nilReader, nil); return want(err) },
		"nil transcript.Report": func() error {
			if nilReport.OK() {
				return errors.New("a nil report is OK")
			}
			nilReport.Counts()
			return nilReport.WriteText(&bytes.Buffer{})
		},
		"zero calls in a transcript.Report": func() error {
			r := &transcript.Report{Calls: []transcript.CallReport{{}, {Status: "incomplete"}}}
			return errors.Join(r.WriteText(&bytes.Buffer{}), want(r.WriteText(nil)))
		},
		"zero Request": func() error { Request{}.served(); return nil },
		"a panicking Clock": func() error {
			func() {
				defer func() { recover() }()
				panicky.Call(ctx, echo, req)
			}()
			func() {
				defer func() { recover() }()
				panicky.Close() // the clock panics again, writing the close
			}()
			if err := panicky.Close(); err != nil || closes.n != 1 {
				return fmt.Errorf("Close: %v, the sink closed %d time(s)", err, closes.n)
			}
			return nil
		},
	} {
		done := make(chan error, 1)
		go func() {
			defer func() {
				if r := recover(); r != nil {
					done <- fmt.Errorf("panic: %v", r)
				}
			}()
			done <- f()
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%s: locked", name)
		}
	}
}

// want turns the error a call must return into nil, and its absence into
// an error.
func want(err error) error {
	if err == nil {
		return errors.New("no error")
	}
	return nil
}

// Open never changes a file it then refuses: a Harn transcript being
// written (its last line torn) and a one-line text file without a final
// newline are refused as they are (they used to lose their last line, or
// be emptied and opened).
func TestOpenLeavesAForeignFileAlone(t *testing.T) {
	const first = `{"prev":"blake3:0000000000000000000000000000000000000000000000000000000000000000","seq":1,"kind":"journal_open","at":"2026-11-03T00:00:00Z","session":"s"}`
	for name, content := range map[string]string{
		"harn mid-write":         `{"type":"system_prompt","content":"x","content_hash":"h"}` + "\n" + `{"type":"provider_call_req`,
		"one text line":          "hello there",
		"harn, no final newline": `{"type":"system_prompt","content":"x"}`,
		// These used to be emptied, or cut, and opened.
		"a brace":         "{",
		"a brace, quote":  `{"`,
		"text after ours": first + "\nhello",
		"a line not next": first + "\n" + `{"prev":"blake3:0000000000000000000000000000000000000000000000000000000000000000","seq":2,"ki`,
		"a seq not next":  first + "\n" + `{"prev":"` + chain.LineHash([]byte(first)) + `","seq":3,"ki`,
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
	// A promptloom transcript whose first line, or last line, was torn is
	// repaired: the torn line is the start of the chain's next line.
	for _, c := range []struct{ before, torn string }{
		{"", `{"prev":"blake3:00`},
		{"", `{"prev":"blake3:0000000000000000000000000000000000000000000000000000000000000000","seq":1,"kind":"journal_op`},
		{first + "\n", `{`},
		{first + "\n", `{"prev":"` + chain.LineHash([]byte(first)) + `","seq":2,"kind":"system_prompt","at":"2026`},
	} {
		path := filepath.Join(t.TempDir(), "t.jsonl")
		os.WriteFile(path, []byte(c.before+c.torn), 0o644)
		j, err := Open(path, nil)
		if err != nil || j.repaired != len(c.torn) {
			t.Fatalf("torn line %q: %v", c.torn, err)
		}
		j.Close()
		if got, _ := os.ReadFile(path); string(got) != c.before {
			t.Errorf("torn line %q: the file is %q", c.torn, got)
		}
	}
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

// A file truncated under an open journal and written again by another
// before the journal's next call, past the size the journal knew, is
// noticed too: the journal's session opens again after the other's lines
// (it used to go on as if the other's chain were its own: a request with
// no journal_open, prompt or manifest before it), and a call begun before
// the truncation fails to record its outcome rather than name a request
// that is gone.
func TestTruncatedFileWrittenAgainStartsAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	j, err := Open(path, &Options{Clock: clock, Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Call(ctx, echo, request(t, "c1", `{"system": "You are careful."}`)); err != nil {
		t.Fatal(err)
	}
	p, err := j.Begin(ctx, request(t, "c2", `{"system": "You are careful."}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	k, err := Open(path, &Options{Clock: clock, Session: "s2"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"k1", "k2", "k3", "k4"} {
		if _, err := k.Call(ctx, echo, request(t, c, `{"system": "You are careful, and longer."}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Finish(ctx, Response{Text: "late"}, nil); err == nil || !strings.Contains(err.Error(), "cut back") {
		t.Errorf("the outcome of a request that is gone: %v", err)
	}
	if _, err := j.Call(ctx, echo, request(t, "c3", `{"system": "You are careful."}`)); err != nil {
		t.Fatal(err)
	}
	j.Close()
	k.Close()
	rep := verifyFile(t, path)
	if got := len(rep.Calls); got != 5 || rep.Calls[4].Call != "c3" {
		t.Errorf("after truncation: %d calls %+v", got, rep.Calls)
	}
}

// A file cut back to a part of itself (its last lines gone) still holds
// the session's journal_open: the journal goes on in a session of a new
// id, never opening one id twice in a chain, and its calls verify; what is
// left of the old session is reported as cut short, not as a forgery.
func TestFileCutToAPartStartsANewSession(t *testing.T) {
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
	b, _ := os.ReadFile(path)
	i := bytes.LastIndexByte(b[:len(b)-1], '\n')
	i = bytes.LastIndexByte(b[:i], '\n') // c2's request and response are gone
	if err := os.Truncate(path, int64(i+1)); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Call(ctx, echo, request(t, "c3", `{"system": "You are careful."}`)); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	rep, err := transcript.Verify(bytes.NewReader(b), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Problems {
		if p.Rule == transcript.RuleSessionReopened || p.Rule == transcript.RuleCloseCount {
			t.Errorf("problem: %s", p.Detail)
		}
	}
	last := rep.Calls[len(rep.Calls)-1]
	if last.Call != "c3" || last.Status != verified || !strings.Contains(string(b), `"session":"s1~1"`) {
		t.Errorf("c3: %+v\n%s", last, b)
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
		rep, err := transcript.Verify(&buf, nil)
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
	rep, err := transcript.Verify(&buf, nil)
	if err != nil || !rep.OK() || rep.Calls[0].Attempts != 1 || !strings.Contains(text, `"failure":{"status":429,"message":"rate limited"}`) {
		t.Errorf("verify: %v %+v %+v\n%s", err, rep.Problems, rep.Calls, buf.String())
	}
}

// halfWriter writes half of its n-th write and fails it.
type halfWriter struct {
	bytes.Buffer
	n, fail int
}

func (w *halfWriter) Write(b []byte) (int, error) {
	if w.n++; w.n == w.fail {
		w.Buffer.Write(b[:len(b)/2])
		return len(b) / 2, errors.New("no space left on device")
	}
	return w.Buffer.Write(b)
}

// A writer that fails part way through a line leaves the chain torn: the
// journal writes nothing more (every later call fails before the model is
// called), so what it wrote stays a transcript cut short, never one with a
// torn line in its middle.
func TestShortWriteStopsTheJournal(t *testing.T) {
	w := &halfWriter{fail: 3}
	j := New(w, &Options{Clock: clock})
	calls := 0
	model := ModelFunc(func(context.Context, Request) (Response, error) { calls++; return Response{Text: "x"}, nil })
	var errs []error
	for _, c := range []string{"c1", "c2", "c3"} {
		_, err := j.Call(ctx, model, request(t, c, `{"system": "You are careful."}`))
		errs = append(errs, err)
	}
	j.Close()
	if errs[0] != nil || errs[1] == nil || errs[2] == nil || calls != 1 {
		t.Fatalf("errors %v, model called %d times", errs, calls)
	}
	for i, l := range strings.Split(strings.TrimSuffix(w.String(), "\n"), "\n")[:strings.Count(w.String(), "\n")] {
		if !json.Valid([]byte(l)) {
			t.Errorf("line %d is not JSON: %s", i+1, l)
		}
	}
}
