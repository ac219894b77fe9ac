package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/promptloom/promptloom/internal/testkit/fakecache"
	"github.com/promptloom/promptloom/proxy"
)

// streamWriter is a page's socket: each write the events make, whole.
type streamWriter struct {
	h      http.Header
	writes chan []byte
}

func (w *streamWriter) Header() http.Header { return w.h }
func (w *streamWriter) WriteHeader(int)     {}
func (w *streamWriter) Flush()              {}
func (w *streamWriter) Write(b []byte) (int, error) {
	w.writes <- bytes.Clone(b)
	return len(b), nil
}

// fakeTimer is one wait of a page's batch, fired (or stopped) by the test.
type fakeTimer struct {
	c       chan time.Time
	stopped atomic.Bool
}

// pageEvent is an event's row, as much as the tests read.
type pageEvent struct {
	Seq               int
	Status, Predicted string
	HTML              string
}

// eventsOf are the events one write carries; a write that is not whole
// events fails the test.
func eventsOf(t *testing.T, b []byte) []pageEvent {
	t.Helper()
	var out []pageEvent
	for _, ev := range strings.SplitAfter(string(b), "\n\n") {
		if ev == "" || strings.HasPrefix(ev, ":") {
			continue
		}
		data, ok := strings.CutPrefix(ev, "event: call\ndata: ")
		var e pageEvent
		if !ok || !strings.HasSuffix(data, "\n\n") || json.Unmarshal([]byte(data), &e) != nil {
			t.Fatalf("a write is not whole events: %q", b)
		}
		out = append(out, e)
	}
	return out
}

// watchPage opens the events on g's proxy as a page does, with the batch
// clock the test's; it returns the page's writes, the waits of its
// batches, and a func that disconnects it and waits until its stream ends.
func watchPage(t *testing.T, g *rig) (writes chan []byte, waits chan *fakeTimer, disconnect func()) {
	t.Helper()
	waits = make(chan *fakeTimer, 100)
	t.Cleanup(proxy.BatchClock(func(time.Duration) (<-chan time.Time, func() bool) {
		ft := &fakeTimer{c: make(chan time.Time)}
		waits <- ft
		return ft.c, func() bool { return !ft.stopped.Swap(true) }
	}))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req := httptest.NewRequest("GET", "/promptloom/events", nil).WithContext(ctx)
	req.RemoteAddr = "127.0.0.1:1234"
	w := &streamWriter{h: http.Header{}, writes: make(chan []byte, 1000)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.p.ServeHTTP(w, req)
	}()
	select {
	case b := <-w.writes: // the comment that opens the stream
		if !strings.HasPrefix(string(b), ":") {
			t.Fatalf("the stream opened with %q", b)
		}
	case <-done:
		t.Fatal("the stream ended before it opened")
	}
	return w.writes, waits, func() { cancel(); <-done }
}

// Calls made within one interval reach a page watching as one write,
// carrying each call's row once, as it stands at the end: twenty pages
// sent a write each for every call admitted, answered and given its
// verdict held up the calls' tail.
func TestCallsWithinAnIntervalAreOneWrite(t *testing.T) {
	const calls = 5
	g := newRig(t, nil)
	writes, waits, disconnect := watchPage(t, g)
	defer disconnect()
	for i := range calls {
		if code, out := g.post(t, "/v1/messages", fakecache.NewAgent().Turn("hello"), "Promptloom-Session", "s"+string(rune('a'+i))); code != 200 {
			t.Fatal(code, out)
		}
	}
	// The interval ends: the wait under way, and each after it, ends now.
	go func() {
		for {
			select {
			case ft := <-waits:
				close(ft.c)
			case <-t.Context().Done():
				return
			}
		}
	}()
	var b []byte
	select {
	case b = <-writes:
	case <-time.After(time.Minute): // a hang fails
		t.Fatal("no write")
	}
	evs := eventsOf(t, b)
	seen := map[int]int{}
	for _, e := range evs {
		seen[e.Seq]++
		if !strings.HasPrefix(e.Status, "ok") {
			t.Errorf("call %d's row in the batch is %q, not as it stands (ok)", e.Seq, e.Status)
		}
	}
	for seq := 1; seq <= calls; seq++ {
		if seen[seq] != 1 {
			t.Errorf("the first write has call %d's row %d times, want once (%d events in it)", seq, seen[seq], len(evs))
		}
	}
}

// A page quiet for a while still has each row's last change (its
// verdict), and a call after the quiet spell; a page that disconnects
// while its batch waits stops the batch's timer.
func TestPageGetsTheLastChangeAndStopsItsTimer(t *testing.T) {
	g := newRig(t, nil)
	writes, waits, disconnect := watchPage(t, g)
	// Every wait ends as the test reads, until rows has what want asks.
	until := func(want func(pageEvent) bool) {
		t.Helper()
		timeout := time.After(time.Minute) // a hang fails
		for {
			select {
			case ft := <-waits:
				close(ft.c)
			case b := <-writes:
				for _, e := range eventsOf(t, b) {
					if want(e) {
						return
					}
				}
			case <-timeout:
				t.Fatal("the page never had the change")
			}
		}
	}
	post := func(session string) {
		t.Helper()
		if code, out := g.post(t, "/v1/messages", fakecache.NewAgent().Turn("hello"), "Promptloom-Session", session); code != 200 {
			t.Fatal(code, out)
		}
	}
	post("a")
	until(func(e pageEvent) bool { return e.Seq == 1 && e.Predicted != "" })
	post("b")
	until(func(e pageEvent) bool { return e.Seq == 2 && strings.HasPrefix(e.Status, "ok") })
	// A call while no wait ends: the page's batch waits on it.
	post("c")
	var ft *fakeTimer
	select {
	case ft = <-waits:
	case <-time.After(time.Minute): // a hang fails
		t.Fatal("the page never waited for its batch")
	}
	disconnect()
	if !ft.stopped.Load() {
		t.Error("a page disconnected while its batch waited, and left its timer running")
	}
}
