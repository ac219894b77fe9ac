package journal

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/transcript"
)

// holdSyncs makes every fsync wait until release is closed, saying on
// started that one began.
func holdSyncs(t *testing.T) (started chan struct{}, release chan struct{}) {
	started, release = make(chan struct{}, 64), make(chan struct{})
	old := syncFile
	syncFile = func(f *os.File) error {
		started <- struct{}{}
		<-release
		return old(f)
	}
	t.Cleanup(func() { syncFile = old })
	return started, release
}

// Finish returns once the outcome is on stable storage; with
// DeferOutcomeSync once it is written, its fsync under way, and Sync
// after it waits for that fsync.
func TestDeferOutcomeSync(t *testing.T) {
	for _, deferred := range []bool{false, true} {
		t.Run(fmt.Sprint("deferred=", deferred), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.jsonl")
			j, err := Open(path, &Options{Session: "s", DeferOutcomeSync: deferred})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			p, err := j.Begin(ctx, request(t, "c", `{"system": "You are careful."}`))
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Sync(); err != nil {
				t.Fatal(err)
			}
			started, release := holdSyncs(t)
			finished := make(chan error, 1)
			go func() { finished <- p.Finish(ctx, Response{Text: "ok"}, nil) }()
			<-started // the outcome's fsync, held
			if deferred {
				// Not held up by the fsync (were it, this would wait for
				// ever: release is closed below).
				if err := <-finished; err != nil {
					t.Fatal(err)
				}
				if b, _ := os.ReadFile(path); !bytes.Contains(b, []byte(`"kind":"provider_call_response"`)) {
					t.Fatal("Finish returned before the outcome was written")
				}
				synced := make(chan error, 1)
				go func() { synced <- p.Sync() }()
				select {
				case <-synced:
					t.Fatal("Sync after Finish returned before the outcome's fsync ended")
				default:
				}
				close(release)
				if err := <-synced; err != nil {
					t.Fatal(err)
				}
			} else {
				select {
				case err := <-finished:
					t.Fatalf("Finish returned (%v) before the outcome's fsync ended", err)
				default:
				}
				close(release)
				if err := <-finished; err != nil {
					t.Fatal(err)
				}
			}
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			if rep := verifyFile(t, path); !rep.OK() || len(rep.Calls) != 1 {
				t.Fatalf("verify: %+v", rep)
			}
		})
	}
}

// Group commit under concurrency, and a cut where the disk would leave
// the file: many sessions of one file call at once, their fsyncs shared.
// Each fsync's reach (the file's size when it began) is noted: Sync
// returns only once the request line is within it, Finish (or, with
// DeferOutcomeSync, Sync after Finish) once the outcome line is, and the
// file cut at any fsync's reach (what a machine that lost power then
// keeps) holds as far as it goes, every call answered before it whole.
func TestGroupCommitKeepsEveryLine(t *testing.T) {
	for _, deferred := range []bool{false, true} {
		t.Run(fmt.Sprint("deferred=", deferred), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.jsonl")
			var mu sync.Mutex
			var reaches []int64 // each fsync's reach, as it ended
			durable := int64(0)
			old := syncFile
			syncFile = func(f *os.File) error {
				st, err := f.Stat()
				if err != nil {
					return err
				}
				err = old(f)
				mu.Lock()
				durable = max(durable, st.Size())
				reaches = append(reaches, st.Size())
				mu.Unlock()
				return err
			}
			t.Cleanup(func() { syncFile = old })
			reach := func() int64 { mu.Lock(); defer mu.Unlock(); return durable }
			type seen struct {
				seq               int64
				request, answered int64 // the reach when Sync, then the outcome, returned
			}
			var calls []seen
			var cmu sync.Mutex
			var wg sync.WaitGroup
			ctx := context.Background()
			var js []*Journal
			for s := range 4 {
				j, err := Open(path, &Options{Session: fmt.Sprint("s", s), DeferOutcomeSync: deferred})
				if err != nil {
					t.Fatal(err)
				}
				js = append(js, j)
				for g := range 4 {
					wg.Go(func() {
						for i := range 6 {
							p, err := j.Begin(ctx, request(t, fmt.Sprintf("c%d-%d", g, i), `{"system": "You are careful."}`))
							if err != nil {
								t.Error(err)
								return
							}
							if err := p.Sync(); err != nil {
								t.Error(err)
								return
							}
							c := seen{seq: p.Seq, request: reach()}
							if err := p.Finish(ctx, Response{Text: "ok"}, nil); err != nil {
								t.Error(err)
								return
							}
							if deferred {
								if err := p.Sync(); err != nil {
									t.Error(err)
									return
								}
							}
							c.answered = reach()
							cmu.Lock()
							calls = append(calls, c)
							cmu.Unlock()
						}
					})
				}
			}
			wg.Wait()
			for _, j := range js {
				if err := j.Close(); err != nil {
					t.Fatal(err)
				}
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// Where each request line, and the outcome naming it, ends.
			reqEnd, outEnd := map[int64]int64{}, map[int64]int64{}
			at := int64(0)
			sc := bufio.NewScanner(bytes.NewReader(b))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				line := sc.Bytes()
				at += int64(len(line)) + 1
				var kind string
				var seq, reqSeq int64
				for it := pjson.NewIter(string(line)); ; {
					k, _, v, _, ok := it.Next()
					if !ok {
						break
					}
					switch pjson.Unquote(k) {
					case "kind":
						kind = pjson.Unquote(v)
					case "seq":
						seq, _ = strconv.ParseInt(v, 10, 64)
					case "request_seq":
						reqSeq, _ = strconv.ParseInt(v, 10, 64)
					}
				}
				switch kind {
				case "provider_call_request":
					reqEnd[seq] = at
				case "provider_call_response":
					outEnd[reqSeq] = at
				}
			}
			if len(calls) != 4*4*6 || len(outEnd) != len(calls) {
				t.Fatalf("%d calls made, %d outcomes in the file; want %d", len(calls), len(outEnd), 4*4*6)
			}
			for _, c := range calls {
				if reqEnd[c.seq] == 0 || reqEnd[c.seq] > c.request {
					t.Errorf("request %d ends at %d: Sync returned when %d bytes were synced", c.seq, reqEnd[c.seq], c.request)
				}
				if outEnd[c.seq] > c.answered {
					t.Errorf("the outcome of %d ends at %d: it was given when %d bytes were synced", c.seq, outEnd[c.seq], c.answered)
				}
			}
			mu.Lock()
			cuts := append([]int64(nil), reaches...)
			mu.Unlock()
			checked := 0
			for _, n := range cuts {
				cut := b[:n]
				if !bytes.Contains(cut, []byte(`"kind":"provider_call_response"`)) {
					continue // no call answered yet: nothing to hold
				}
				rep, err := transcript.Verify(bytes.NewReader(cut), nil)
				if err != nil || !rep.Holds() {
					var w bytes.Buffer
					if rep != nil {
						rep.WriteText(&w)
					}
					t.Fatalf("the file cut at an fsync's reach (%d of %d bytes) does not hold: %v\n%s", n, len(b), err, w.Bytes())
				}
				checked++
			}
			if checked == 0 {
				t.Fatal("no cut checked")
			}
		})
	}
}

// The sessions of one file in one process share its fsyncs: requests of
// four sessions written while an fsync runs are made durable together by
// the next one, not by one fsync each.
func TestSessionsShareTheirSyncs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	ctx := context.Background()
	var js []*Journal
	for i := range 4 {
		j, err := Open(path, &Options{Session: fmt.Sprint("s", i)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := j.Call(ctx, echo, request(t, "open", `{"system": "You are careful."}`)); err != nil {
			t.Fatal(err)
		}
		js = append(js, j)
	}
	var mu sync.Mutex
	n := 0
	release := make(chan struct{})
	first := make(chan struct{})
	old := syncFile
	syncFile = func(f *os.File) error {
		mu.Lock()
		n++
		if n == 1 {
			close(first)
		}
		mu.Unlock()
		<-release
		return old(f)
	}
	t.Cleanup(func() { syncFile = old })
	var ps []*Pending
	for i, j := range js {
		p, err := j.Begin(ctx, request(t, "c", `{"system": "You are careful."}`))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			<-first // its fsync runs, held, while the others write
		}
		ps = append(ps, p)
	}
	close(release)
	for _, p := range ps {
		if err := p.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	got := n
	mu.Unlock()
	if got > 2 {
		t.Errorf("four sessions' requests took %d fsyncs; want at most 2 (the one running, and one for the rest)", got)
	}
	for _, p := range ps {
		if err := p.Finish(ctx, Response{Text: "ok"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, j := range js {
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if rep := verifyFile(t, path); !rep.OK() || len(rep.Calls) != 8 {
		t.Fatalf("verify: %d calls, %+v", len(rep.Calls), rep.Problems)
	}
}

// Finish waits for its outcome's fsync without holding the session's
// lock: while one call's fsync runs, the session's other calls begin and
// record theirs (before, a session's outcomes were synced one after
// another, each under the lock).
func TestFinishSyncsOutsideTheSessionsLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	j, err := Open(path, &Options{Session: "s"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p, err := j.Begin(ctx, request(t, "a", `{"system": "You are careful."}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Sync(); err != nil {
		t.Fatal(err)
	}
	started, release := holdSyncs(t)
	finished := make(chan error, 1)
	go func() { finished <- p.Finish(ctx, Response{Text: "ok"}, nil) }()
	<-started
	// The fsync is held; the session's lock is free (were Finish holding
	// it through the fsync, this would wait for ever).
	j.mu.Lock()
	running := j.running
	j.mu.Unlock()
	if running != 0 {
		t.Fatalf("%d call(s) running while the outcome's fsync is held; want the call counted done", running)
	}
	q, err := j.Begin(ctx, request(t, "b", `{"system": "You are careful."}`))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-finished:
		t.Fatalf("Finish returned (%v) before its fsync ended", err)
	default:
	}
	close(release)
	if err := <-finished; err != nil {
		t.Fatal(err)
	}
	if err := q.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := q.Finish(ctx, Response{Text: "ok"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if rep := verifyFile(t, path); !rep.OK() || len(rep.Calls) != 2 {
		t.Fatalf("verify: %+v", rep)
	}
}

// With DeferOutcomeSync, calls one after another make one fsync each:
// an outcome's fsync is left to the next call's request, whose fsync
// covers it (or to a timer, here set past the test).
func TestDeferredOutcomesRideTheNextSync(t *testing.T) {
	defer func(w time.Duration) { lazySyncWindow = w }(lazySyncWindow)
	lazySyncWindow = time.Hour
	path := filepath.Join(t.TempDir(), "t.jsonl")
	j, err := Open(path, &Options{Session: "s", DeferOutcomeSync: true})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	syncs, reach := 0, int64(0)
	old := syncFile
	syncFile = func(f *os.File) error {
		st, err := f.Stat()
		if err != nil {
			return err
		}
		err = old(f)
		mu.Lock()
		syncs++
		reach = max(reach, st.Size())
		mu.Unlock()
		return err
	}
	t.Cleanup(func() { syncFile = old })
	count := func() (int, int64) { mu.Lock(); defer mu.Unlock(); return syncs, reach }
	ctx := context.Background()
	for i := range 5 {
		p, err := j.Begin(ctx, request(t, fmt.Sprint("c", i), `{"system": "You are careful."}`))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Sync(); err != nil {
			t.Fatal(err)
		}
		before, _ := count()
		if err := p.Finish(ctx, Response{Text: "ok"}, nil); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := count(); n != before {
			t.Fatalf("call %d: Finish made %d fsync(s); want none (the next call's makes it)", i, n-before)
		}
		// The next call's request (or, for the last, Close) syncs it.
		if i == 4 {
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
		} else {
			q, err := j.Begin(ctx, request(t, "next", `{"system": "You are careful."}`))
			if err != nil {
				t.Fatal(err)
			}
			if err := q.Sync(); err != nil {
				t.Fatal(err)
			}
			if err := q.Finish(ctx, Response{Text: "ok"}, nil); err != nil {
				t.Fatal(err)
			}
		}
		if _, r := count(); r < st.Size() {
			t.Fatalf("call %d: its outcome (to byte %d) was not synced by the next request's fsync (to %d)", i, st.Size(), r)
		}
	}
	if rep := verifyFile(t, path); !rep.OK() || len(rep.Calls) != 9 {
		t.Fatalf("verify: %d calls, %+v", len(rep.Calls), rep.Problems)
	}
}
