// Package storetest checks an event store against everything
// eventlog.Store promises, in the manner of testing/fstest: each store's
// own tests call Run with a function that opens a fresh, empty store, and
// Reopen, Crash and BenchAppend with one that opens the same log again. It
// also holds the clock those tests stamp events with.
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/promptloom/promptloom/eventlog"
)

// t0 is where the clock Run gives a store starts.
var t0 = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)

// Run checks the stores open makes against every promise of eventlog.Store,
// each promise in a subtest of its own on a fresh store. open returns an
// empty store that stamps its events with clock (a Clock starting at
// 2026-11-01 09:00 UTC); Run closes it.
func Run(t *testing.T, open func(t *testing.T, clock func() time.Time) eventlog.Store) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := open(t, Clock(t0))
			defer s.Close()
			c.test(t, s)
		})
	}
	// The close cases close the store themselves.
	for _, c := range closeCases {
		t.Run(c.name, func(t *testing.T) { c.test(t, open(t, Clock(t0))) })
	}
}

type storeCase struct {
	name string
	test func(t *testing.T, s eventlog.Store)
}

var errStop = errors.New("stop")

var cases = []storeCase{
	{"AudienceIsTheStoresOwn", func(t *testing.T, s eventlog.Store) {
		// What Append returns does not change when the caller reuses its
		// draft's slice; an empty audience comes back nil, as Get reads it.
		ctx := context.Background()
		aud := []string{"eu"}
		envs, err := s.Append(ctx, eventlog.Draft{Kind: "k", Audience: aud, Payload: 1}, eventlog.Draft{Kind: "k", Audience: []string{}, Payload: 2})
		if err != nil {
			t.Fatal(err)
		}
		aud[0] = "uk"
		if envs[0].Audience[0] != "eu" || envs[1].Audience != nil {
			t.Errorf("audiences %q and %#v", envs[0].Audience, envs[1].Audience)
		}
	}},
	{"AppendScanGet", func(t *testing.T, s eventlog.Store) {
		ctx := context.Background()
		envs, err := s.Append(ctx,
			eventlog.Draft{Kind: "offer", Actor: "uk", Payload: map[string]string{"text": "60%"}},
			eventlog.Draft{Kind: "remark", Actor: "uk", Audience: []string{"eu"}, Payload: "aside"})
		if err != nil {
			t.Fatal(err)
		}
		if envs[0].Seq != 1 || envs[1].Seq != 2 || !envs[1].At.After(envs[0].At) {
			t.Fatalf("envelopes %+v", envs)
		}
		if _, err := s.Append(ctx, eventlog.Draft{Kind: "offer", Actor: "eu", Payload: 40}); err != nil {
			t.Fatal(err)
		}
		got := all(t, s)
		if len(got) != 3 || got[1].Kind != "remark" || !got[1].VisibleTo("eu") || got[1].VisibleTo("uk") || len(got[0].Audience) != 0 {
			t.Fatalf("events %+v", got)
		}
		for i, env := range envs {
			if !env.At.Equal(got[i].At) || env.Seq != got[i].Seq || env.Actor != got[i].Actor {
				t.Errorf("Append returned %+v, Get reads %+v", env, got[i].Envelope)
			}
		}
		var n int
		if err := got[2].Decode(&n); err != nil || n != 40 {
			t.Errorf("payload %s: %v", got[2].Payload, err)
		}
		if _, err := s.Get(ctx, 4); !errors.Is(err, eventlog.ErrNoEvent) {
			t.Errorf("Get(4) = %v, want ErrNoEvent", err)
		}
		if _, err := s.Get(ctx, 0); !errors.Is(err, eventlog.ErrNoEvent) {
			t.Errorf("Get(0) = %v, want ErrNoEvent", err)
		}
	}},
	{"HeadOfEmptyLogIsZero", func(t *testing.T, s eventlog.Store) {
		if head, err := s.Head(context.Background()); head != 0 || err != nil {
			t.Errorf("Head = %d, %v", head, err)
		}
	}},
	{"PayloadBytesAreKeptExactly", func(t *testing.T, s eventlog.Store) {
		// Spacing, key order, duplicate keys, escapes and a \u0000 that
		// PostgreSQL's jsonb would refuse: the bytes come back as appended.
		payloads := []string{
			`{ "b" : 1,  "a":[1 ,2] }`,
			`{"k":1,"k":2}`,
			`"caf\u00e9 \u0000 \ud83d\ude00"`,
			`1.50e+3`,
			"[\n\t\"x\"\n]",
			// A lone surrogate escape (JavaScript's JSON.stringify of a
			// string cut mid-emoji) and numbers past PostgreSQL's numeric:
			// JSON, and kept.
			`"cut \ud83d"`,
			`["\ude00", "\\ud83d", "\ud83d\u0041"]`,
			`{"n":1e1000000}`,
			`[-1e-16384]`,
		}
		ctx := context.Background()
		for _, p := range payloads {
			if _, err := s.Append(ctx, eventlog.Draft{Kind: "k", Payload: json.RawMessage(p)}); err != nil {
				t.Fatalf("Append(%s): %v", p, err)
			}
		}
		for i, e := range all(t, s) {
			if string(e.Payload) != payloads[i] {
				t.Errorf("event %d payload %q, appended %q", e.Seq, e.Payload, payloads[i])
			}
		}
	}},
	{"EnvelopesCarryEverythingButThePayload", func(t *testing.T, s eventlog.Store) {
		ctx := context.Background()
		drafts := []eventlog.Draft{
			{Kind: "k1", Actor: "", Payload: nil},
			{Kind: "k2", Actor: "uk", Audience: []string{"eu", "uk", "a \"quoted\" role"}, Payload: map[string]int{"x": 1}},
			{Kind: "k3 with spaces", Actor: "é", Audience: []string{}, Payload: "s"},
		}
		if _, err := s.Append(ctx, drafts...); err != nil {
			t.Fatal(err)
		}
		var envs []eventlog.Envelope
		if err := s.Scan(ctx, 1, 3, func(e eventlog.Envelope) error { envs = append(envs, e); return nil }); err != nil {
			t.Fatal(err)
		}
		want := []eventlog.Envelope{
			{Seq: 1, Kind: "k1", At: t0},
			{Seq: 2, Kind: "k2", Actor: "uk", Audience: []string{"eu", "uk", "a \"quoted\" role"}, At: t0.Add(time.Second)},
			{Seq: 3, Kind: "k3 with spaces", Actor: "é", At: t0.Add(2 * time.Second)},
		}
		// An empty audience may come back empty or nil here.
		if !slices.EqualFunc(want, envs, func(a, b eventlog.Envelope) bool { return sameEnvelope(a, b, false) }) {
			t.Errorf("Scan envelopes:\n got %+v\nwant %+v", envs, want)
		}
		if e, _ := s.Get(ctx, 1); string(e.Payload) != "null" {
			t.Errorf("nil payload stored as %q, want null", e.Payload)
		}
	}},
	{"ScanRanges", func(t *testing.T, s eventlog.Store) {
		ctx := context.Background()
		for range 5 {
			if _, err := s.Append(ctx, eventlog.Draft{Kind: "k", Payload: 1}); err != nil {
				t.Fatal(err)
			}
		}
		for _, r := range []struct {
			from, upto int64
			want       []int64
		}{
			{1, 5, []int64{1, 2, 3, 4, 5}},
			{2, 10, []int64{2, 3, 4, 5}},
			{-3, 2, []int64{1, 2}},
			{0, 0, nil},
			{3, 3, []int64{3}},
			{4, 2, nil},
			{6, 9, nil},
		} {
			var seqs []int64
			if err := s.Scan(ctx, r.from, r.upto, func(e eventlog.Envelope) error { seqs = append(seqs, e.Seq); return nil }); err != nil {
				t.Fatal(err)
			}
			if (seqs == nil) != (r.want == nil) || !slices.Equal(r.want, seqs) {
				t.Errorf("Scan(%d, %d) = %v, want %v", r.from, r.upto, seqs, r.want)
			}
		}
		// fn's error stops the scan and is returned as it is.
		var seen int
		err := s.Scan(ctx, 1, 5, func(e eventlog.Envelope) error {
			seen++
			if e.Seq == 2 {
				return errStop
			}
			return nil
		})
		if !errors.Is(err, errStop) || seen != 2 {
			t.Errorf("Scan stopped by fn: err %v after %d envelopes", err, seen)
		}
		// fn may call back into the store.
		err = s.Scan(ctx, 1, 5, func(e eventlog.Envelope) error {
			_, err := s.Get(ctx, e.Seq)
			return err
		})
		if err != nil {
			t.Errorf("Get inside Scan: %v", err)
		}
	}},
	{"BadBatchWritesNothing", func(t *testing.T, s eventlog.Store) {
		ctx := context.Background()
		_, err := s.Append(ctx, eventlog.Draft{Kind: "ok", Payload: 1}, eventlog.Draft{Kind: "", Payload: 2})
		if !errors.Is(err, eventlog.ErrInvalidDraft) {
			t.Errorf("Append with an empty kind = %v", err)
		}
		_, err = s.Append(ctx, eventlog.Draft{Kind: "ok", Payload: 1}, eventlog.Draft{Kind: "bad", Payload: func() {}})
		if !errors.Is(err, eventlog.ErrInvalidDraft) {
			t.Errorf("Append of an unmarshalable payload = %v", err)
		}
		_, err = s.Append(ctx, eventlog.Draft{Kind: "ok", Payload: 1}, eventlog.Draft{Kind: "bad", Payload: json.RawMessage(`{`)})
		if !errors.Is(err, eventlog.ErrInvalidDraft) {
			t.Errorf("Append of invalid raw JSON = %v", err)
		}
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := s.Append(cancelled, eventlog.Draft{Kind: "ok", Payload: 1}); err == nil {
			t.Error("Append with a cancelled context succeeded")
		}
		if head, _ := s.Head(ctx); head != 0 {
			t.Errorf("failed batches left %d events", head)
		}
		// and the next batch starts at 1: nothing was used up
		if envs, err := s.Append(ctx, eventlog.Draft{Kind: "ok", Payload: 1}); err != nil || envs[0].Seq != 1 {
			t.Errorf("first good Append after failures = %+v, %v", envs, err)
		}
	}},
	{"Projections", func(t *testing.T, s eventlog.Store) {
		ctx := context.Background()
		if _, ok, err := s.LoadProjection(ctx, "beliefs"); ok || err != nil {
			t.Fatalf("fresh store has a projection: %v %v", ok, err)
		}
		if err := s.SaveProjection(ctx, "beliefs", eventlog.Projection{Upto: 3, State: []byte(`{"a":1}`)}); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveProjection(ctx, "chronicle", eventlog.Projection{Upto: 0, State: []byte{}}); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveProjection(ctx, "beliefs", eventlog.Projection{Upto: 5, State: []byte("\x00\xff binary")}); err != nil {
			t.Fatal(err)
		}
		p, ok, err := s.LoadProjection(ctx, "beliefs")
		if !ok || err != nil || p.Upto != 5 || string(p.State) != "\x00\xff binary" {
			t.Errorf("LoadProjection(beliefs) = %+v %v %v", p, ok, err)
		}
		if p, ok, _ := s.LoadProjection(ctx, "chronicle"); !ok || p.Upto != 0 || len(p.State) != 0 {
			t.Errorf("LoadProjection(chronicle) = %+v %v", p, ok)
		}
		if err := s.DropProjection(ctx, "beliefs"); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := s.LoadProjection(ctx, "beliefs"); ok {
			t.Error("projection survived its drop")
		}
		if _, ok, _ := s.LoadProjection(ctx, "chronicle"); !ok {
			t.Error("dropping one projection dropped another")
		}
		if err := s.DropProjection(ctx, "never-saved"); err != nil {
			t.Errorf("DropProjection of an unknown name: %v", err)
		}
	}},
	{"EmptyProjectionState", func(t *testing.T, s eventlog.Store) {
		// A nil state is an empty one: saved, it loads as nil, as an
		// empty one does, in every store.
		ctx := context.Background()
		for name, state := range map[string][]byte{"nil": nil, "empty": {}} {
			if err := s.SaveProjection(ctx, name, eventlog.Projection{Upto: 7, State: state}); err != nil {
				t.Fatalf("SaveProjection(%s): %v", name, err)
			}
			p, ok, err := s.LoadProjection(ctx, name)
			if !ok || err != nil || p.Upto != 7 || p.State != nil {
				t.Errorf("LoadProjection(%s) = %#v %v %v, want upto 7 and a nil state", name, p, ok, err)
			}
		}
	}},
	{"ConcurrentAppendsAreContiguous", func(t *testing.T, s eventlog.Store) {
		ctx := context.Background()
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for i := range 25 {
					if _, err := s.Append(ctx, eventlog.Draft{Kind: "k", Payload: []int{w, i}}, eventlog.Draft{Kind: "k2", Payload: i}); err != nil {
						t.Error(err)
						return
					}
					s.Head(ctx)
				}
			})
		}
		wg.Wait()
		got := all(t, s)
		if len(got) != 200 {
			t.Fatalf("%d events, want 200", len(got))
		}
		for i, e := range got {
			if e.Seq != int64(i+1) {
				t.Fatalf("event %d has seq %d", i, e.Seq)
			}
			// batches are contiguous: every k is followed by its k2
			if e.Kind == "k" && got[i+1].Kind != "k2" {
				t.Fatalf("batch split at %d", e.Seq)
			}
		}
	}},
	{"WaitWakesOnAppend", func(t *testing.T, s eventlog.Store) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		got := make(chan int64, 1)
		go func() {
			head, err := s.Wait(ctx, 1)
			if err != nil {
				t.Error(err)
			}
			got <- head
		}()
		for i := range 2 {
			time.Sleep(20 * time.Millisecond)
			if _, err := s.Append(ctx, eventlog.Draft{Kind: "k", Payload: i}); err != nil {
				t.Fatal(err)
			}
		}
		if head := <-got; head != 2 {
			t.Errorf("Wait(1) = %d, want 2", head)
		}
		// Already past: returns at once.
		if head, err := s.Wait(ctx, 0); head != 2 || err != nil {
			t.Errorf("Wait(0) = %d, %v", head, err)
		}
		short, cancel2 := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel2()
		if _, err := s.Wait(short, 2); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Wait past the head = %v, want the context's deadline", err)
		}
	}},
}

var closeCases = []storeCase{
	{"CloseRefusesUse", func(t *testing.T, s eventlog.Store) {
		ctx := context.Background()
		if _, err := s.Append(ctx, eventlog.Draft{Kind: "k", Payload: 1}); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, eventlog.Draft{Kind: "k", Payload: 1}); !errors.Is(err, eventlog.ErrClosed) {
			t.Errorf("Append after Close = %v, want ErrClosed", err)
		}
		if _, err := s.Wait(ctx, 5); !errors.Is(err, eventlog.ErrClosed) {
			t.Errorf("Wait after Close = %v, want ErrClosed", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close = %v", err)
		}
	}},
	{"CloseWakesWaiters", func(t *testing.T, s eventlog.Store) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done := make(chan error, 1)
		go func() { _, err := s.Wait(ctx, 0); done <- err }()
		time.Sleep(50 * time.Millisecond)
		s.Close()
		if err := <-done; !errors.Is(err, eventlog.ErrClosed) {
			t.Errorf("Wait across Close = %v, want ErrClosed", err)
		}
	}},
}

// Reopen checks that a log closed and opened again reads as it was: every
// event, envelope and payload, and the projections saved beside them.
// open opens the same log each time; the first time with clock, the second
// with nil (the store's default clock).
func Reopen(t *testing.T, open func(clock func() time.Time) (eventlog.Store, error)) {
	s, err := open(Clock(t0))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 5 {
		if _, err := s.Append(ctx, eventlog.Draft{Kind: "k", Actor: "a", Audience: []string{"x", "y"}, Payload: json.RawMessage(`{"i":` + string(rune('0'+i)) + `}`)}); err != nil {
			t.Fatal(err)
		}
	}
	before := all(t, s)
	s.SaveProjection(ctx, "p", eventlog.Projection{Upto: 5, State: []byte("state")})
	s.Close()

	s2, err := open(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if after := all(t, s2); !slices.EqualFunc(before, after, sameEvent) {
		t.Errorf("reopened log differs:\n got %+v\nwant %+v", after, before)
	}
	if p, ok, _ := s2.LoadProjection(ctx, "p"); !ok || p.Upto != 5 {
		t.Errorf("projection after reopen: %+v", p)
	}
}

// all reads the whole log through Scan and Get, checking they agree.
func all(t *testing.T, s eventlog.Store) []eventlog.Event {
	t.Helper()
	ctx := context.Background()
	head, err := s.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []eventlog.Event
	err = s.Scan(ctx, 1, head, func(env eventlog.Envelope) error {
		e, err := s.Get(ctx, env.Seq)
		if err != nil {
			return err
		}
		if !sameEnvelope(env, e.Envelope, true) {
			t.Errorf("Scan and Get disagree on event %d:\nScan %+v\n Get %+v", env.Seq, env, e.Envelope)
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameEnvelope reports whether a and b are one envelope: times equal as
// instants, audiences equal element by element and, when strict, both nil
// or both not.
func sameEnvelope(a, b eventlog.Envelope, strict bool) bool {
	return a.Seq == b.Seq && a.Kind == b.Kind && a.Actor == b.Actor && a.At.Equal(b.At) &&
		slices.Equal(a.Audience, b.Audience) && (!strict || (a.Audience == nil) == (b.Audience == nil))
}

// sameEvent reports whether a and b are one event, their payloads the same
// bytes (both nil or both not).
func sameEvent(a, b eventlog.Event) bool {
	return sameEnvelope(a.Envelope, b.Envelope, true) &&
		bytes.Equal(a.Payload, b.Payload) && (a.Payload == nil) == (b.Payload == nil)
}
