package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/promptloom/promptloom/internal/chain"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/transcript"
)

// chainSink is one chain in memory that many journals append to, as the
// proxy's journals share one file: no lock and no fsync, so that a long
// run is quick to write.
type chainSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
	t   journal.Tail
}

func (s *chainSink) Append(_ context.Context, build func(journal.Tail) ([]byte, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.t.Prev == "" {
		s.t.Prev = chain.Genesis
	}
	lines, err := build(s.t)
	if err != nil {
		return err
	}
	s.buf.Write(lines)
	ls := bytes.Split(bytes.TrimSuffix(lines, []byte("\n")), []byte("\n"))
	s.t = journal.Tail{Prev: chain.LineHash(ls[len(ls)-1]), Seq: s.t.Seq + int64(len(ls))}
	return nil
}

func (s *chainSink) Close() error { return nil }

// proxyRun writes calls proxied calls (bodies kept as segments, each
// session a conversation of perSession calls) into sink, the last session
// left open; it returns that session's journal.
func proxyRun(tb testing.TB, sink *chainSink, prefix string, from, calls, perSession int) *journal.Journal {
	tb.Helper()
	at := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { at = at.Add(time.Millisecond); return at }
	answer := journal.ModelFunc(func(context.Context, journal.Request) (journal.Response, error) {
		return journal.Response{Text: "I looked."}, nil
	})
	var j *journal.Journal
	history := ""
	for i := from; i < from+calls; i++ {
		if i%perSession == 0 || j == nil {
			if j != nil {
				if err := j.Close(); err != nil {
					tb.Fatal(err)
				}
			}
			j = journal.NewSink(sink, &journal.Options{Clock: clock, Session: fmt.Sprintf("%s%d", prefix, i/perSession)})
			history = ""
		}
		history += fmt.Sprintf(`,{"role":"user","content":"turn %d: look at this file."}`, i)
		body := []byte(`{"model":"claude-sonnet-4-5","max_tokens":64,"system":"You are careful.","messages":[` + history[1:] + `]}`)
		if _, err := j.Call(context.Background(), answer, journal.Request{Call: fmt.Sprintf("%s%d/%d", prefix, i/perSession, i%perSession), Body: body, Provider: "anthropic", Unattributed: true}); err != nil {
			tb.Fatal(err)
		}
		history += `,{"role":"assistant","content":"I looked."}`
	}
	return j
}

// countingFile counts the bytes the page reads.
type countingFile struct {
	*os.File
	n *int64
}

func (f countingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	*f.n += int64(n)
	return n, err
}

func countingPage(path string) (*pageVerifier, *int64) {
	p := newPageVerifier(path, nil)
	n := new(int64)
	p.open = func(name string) (pageFile, error) {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		return countingFile{f, n}, nil
	}
	return p, n
}

// verifyWhole is verify's verdict on the whole file, as the page words it.
func verifyWhole(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := transcript.Verify(f, &transcript.Options{MaxLineBytes: maxLineBytes})
	return liveState(rep, err)
}

// A load of the page reads what was appended since the last (and its last
// line read, once more), never the whole file again, and says what verify
// says of the whole file, a line being written included.
func TestThePageReadsOnlyWhatWasAppended(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	sink := &chainSink{}
	j := proxyRun(t, sink, "s", 0, 200, 30)
	page, read := countingPage(path)
	written := 0
	last := 0 // the length of the last whole line written
	for step := range 5 {
		if step > 0 {
			j = proxyRun(t, sink, "s", 200+step*7, 7, 3)
		}
		data := sink.buf.Bytes()
		if step == 3 {
			data = data[:len(data)-40] // a line being written
		}
		if err := os.WriteFile(path+".new", data, 0o600); err != nil {
			t.Fatal(err)
		}
		// Appended in place, as a journal appends.
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(data[written:]); err != nil {
			t.Fatal(err)
		}
		f.Close()
		*read = 0
		got := page.state()
		if want := verifyWhole(t, path); got != want {
			t.Fatalf("step %d: the page says %q, verify %q", step, got, want)
		}
		if limit := int64(len(data)-written) + int64(last); *read > limit {
			t.Fatalf("step %d: the page read %d bytes, %d appended (and a last line of %d)", step, *read, len(data)-written, last)
		}
		if step == 0 && *read != int64(len(data)) {
			t.Fatalf("the first load read %d of %d bytes", *read, len(data))
		}
		whole := bytes.TrimSuffix(data[:bytes.LastIndexByte(data, '\n')], []byte("\n"))
		last = len(data[:bytes.LastIndexByte(data, '\n')+1]) - (bytes.LastIndexByte(whole, '\n') + 1)
		written = len(data)
	}
	j.Close()
}

// A file replaced, cut shorter, changed without growing, or whose last
// line read was rewritten is read again from its start, and the page says
// so, with verify's verdict on the file as it is now: an earlier line
// tampered with is caught.
func TestThePageReadsAChangedFileAgain(t *testing.T) {
	sink := &chainSink{}
	proxyRun(t, sink, "s", 0, 40, 10).Close()
	orig := append([]byte(nil), sink.buf.Bytes()...)
	lines := strings.SplitAfter(string(orig), "\n")
	longest := 0
	for _, l := range lines {
		longest = max(longest, len(l))
	}
	tamper := func(s string) string { return strings.Replace(s, "I looked.", "I lOoked.", 1) }
	for _, tc := range []struct {
		name, why string
		change    func(path string)
	}{
		{"replaced", "the file was replaced", func(path string) {
			data := []byte(tamper(string(orig)))
			os.WriteFile(path+".tmp", data, 0o600)
			os.Rename(path+".tmp", path)
		}},
		{"cut", "the file was cut shorter", func(path string) {
			os.Truncate(path, int64(len(orig)-len(lines[len(lines)-2])-1))
		}},
		{"edited in place", "the file was changed without growing", func(path string) {
			f, _ := os.OpenFile(path, os.O_WRONLY, 0)
			i := strings.Index(string(orig), "I looked.")
			f.WriteAt([]byte("I lOoked."), int64(i))
			f.Close()
			// Its time is what says so: a coarse clock may not have
			// moved since the page's load.
			os.Chtimes(path, time.Now().Add(time.Minute), time.Now().Add(time.Minute))
		}},
		{"last line rewritten", "its last line read was rewritten", func(path string) {
			f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			f.Write([]byte(`{"prev":"x"}` + "\n"))
			f.Close()
			// The last line read, rewritten (same length), and a line
			// appended: the size grew.
			data, _ := os.ReadFile(path)
			at := len(orig) - len(lines[len(lines)-2])
			data[at+len(lines[len(lines)-2])-3] ^= 1
			os.WriteFile(path, data, 0o600)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "run.jsonl")
			os.WriteFile(path, orig, 0o600)
			page, read := countingPage(path)
			if got, want := page.state(), verifyWhole(t, path); got != want || !strings.HasPrefix(got, "4") {
				t.Fatalf("the page says %q, verify %q", got, want)
			}
			tc.change(path)
			*read = 0
			got, want := page.state(), verifyWhole(t, path)
			if !strings.HasPrefix(got, "read again from its start ("+tc.why+"): ") || strings.TrimPrefix(got, "read again from its start ("+tc.why+"): ") != want {
				t.Fatalf("the page says %q, verify %q", got, want)
			}
			if fi, _ := os.Stat(path); *read < fi.Size() {
				t.Fatalf("read %d bytes of %d again", *read, fi.Size())
			}
			if tc.name != "cut" && !strings.HasPrefix(want, "FAIL") {
				t.Fatalf("the tampered file verifies: %q", want)
			}
			// The next load, nothing changed, reads only the last line.
			*read = 0
			if got := page.state(); strings.HasPrefix(got, "read again") || *read > int64(longest) {
				t.Fatalf("a load of an unchanged file read %d bytes: %q", *read, got)
			}
		})
	}
}

// BenchmarkPageLoad measures the page's first load over a transcript of
// 10,000 and of 100,000 proxied calls, in 200 sessions (the last open)
// and in sessions of 50 calls: B/op is what a load allocates (the whole
// file is read once); retained-B the heap the page's verifier holds after
// it, garbage collected, which grows with the sessions (their ids, chain
// hashes and Merkle trees), not with the calls. verify-whole is the heap
// Verify's report of the whole file holds (every call listed), what each
// load held before the page kept a verifier. next-load is a load after 100
// more calls, read alone.
//
//	go test ./cmd/promptloom/internal/cli -run '^$' -bench PageLoad -benchmem -benchtime 3x
func BenchmarkPageLoad(b *testing.B) {
	for _, run := range []struct{ calls, sessions int }{{10_000, 200}, {100_000, 200}, {100_000, 2000}} {
		sink := &chainSink{}
		j := proxyRun(b, sink, "s", 0, run.calls, run.calls/run.sessions)
		path := filepath.Join(b.TempDir(), "run.jsonl")
		if err := os.WriteFile(path, sink.buf.Bytes(), 0o600); err != nil {
			b.Fatal(err)
		}
		size := sink.buf.Len()
		name := fmt.Sprintf("calls=%d/sessions=%d", run.calls, run.sessions)
		b.Run("first-load/"+name, func(b *testing.B) {
			var retained uint64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				p := newPageVerifier(path, nil)
				if s := p.state(); !strings.HasPrefix(s, fmt.Sprintf("%d call(s) verified", run.calls)) {
					b.Fatal(s)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				retained = max(retained, after.HeapAlloc-min(after.HeapAlloc, before.HeapAlloc))
				runtime.KeepAlive(p)
			}
			b.ReportMetric(float64(retained), "retained-B")
			b.ReportMetric(float64(size), "file-B")
		})
		// What a load held before the page kept a verifier: Verify's
		// report of the whole file, every call listed.
		b.Run("verify-whole/"+name, func(b *testing.B) {
			var retained uint64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				f, _ := os.Open(path)
				rep, err := transcript.Verify(f, &transcript.Options{MaxLineBytes: maxLineBytes})
				f.Close()
				if err != nil || len(rep.Calls) != run.calls+0 {
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				retained = max(retained, after.HeapAlloc-min(after.HeapAlloc, before.HeapAlloc))
				runtime.KeepAlive(rep)
			}
			b.ReportMetric(float64(retained), "retained-B")
		})
		b.Run("next-load/"+name, func(b *testing.B) {
			p := newPageVerifier(path, nil)
			p.state()
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				from := sink.buf.Len()
				j = proxyRun(b, sink, "next", i*100, 100, 100)
				f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
				f.Write(sink.buf.Bytes()[from:])
				f.Close()
				b.StartTimer()
				if s := p.state(); strings.HasPrefix(s, "FAIL") || strings.HasPrefix(s, "read again") {
					b.Fatal(s)
				}
			}
		})
		j.Close()
	}
}
