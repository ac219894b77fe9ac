package postgres

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/transcript"

	"golang.org/x/mod/sumdb/note"
)

const (
	fleetProcs    = 8
	fleetSessions = 2   // per process: 16 in all
	fleetCalls    = 100 // per session: 200 a process
)

// withPool is dsn with pool_max_conns set to n.
func withPool(t testing.TB, dsn string, n int) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("pool_max_conns", strconv.Itoa(n))
	u.RawQuery = q.Encode()
	return u.String()
}

func fleetSession(w, s int) string { return fmt.Sprintf("w%d-s%d", w, s) }

// TestPostgresFleetChild is one of TestPostgresFleet's processes: worker
// PROMPTLOOM_FLEET_WORKER records its sessions' calls, all at once, on two
// connections, signed by PROMPTLOOM_FLEET_KEY.
func TestPostgresFleetChild(t *testing.T) {
	dsn := os.Getenv("PROMPTLOOM_FLEET_DB")
	if dsn == "" {
		t.Skip("a child of TestPostgresFleet")
	}
	w, _ := strconv.Atoi(os.Getenv("PROMPTLOOM_FLEET_WORKER"))
	s, signer := child(t, dsn)
	var wg sync.WaitGroup
	for i := range fleetSessions {
		sess := fleetSession(w, i)
		wg.Go(func() {
			record(t, journal.NewSink(s.Sink(sess), &journal.Options{Session: sess, Signer: signer, CheckpointEvery: 25}), sess+"/c", fleetCalls)
		})
	}
	wg.Wait()
}

// Eight OS processes, on two connections each, record 200 calls each
// across sixteen sessions into one database at once: every call is there,
// each session's chain is gapless and verifies with the signer's key.
func TestPostgresFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	s, dsn := open(t) // the migration is its own step; the workers only append
	skey, vkey, err := note.GenerateKey(rand.Reader, "fleet")
	if err != nil {
		t.Fatal(err)
	}
	verifier, _ := note.NewVerifier(vkey)
	var wg sync.WaitGroup
	errs := make([]error, fleetProcs)
	outs := make([][]byte, fleetProcs)
	for w := range fleetProcs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPostgresFleetChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "PROMPTLOOM_FLEET_DB="+withPool(t, dsn, 2),
			"PROMPTLOOM_FLEET_WORKER="+strconv.Itoa(w), "PROMPTLOOM_FLEET_KEY="+skey)
		wg.Go(func() { outs[w], errs[w] = cmd.CombinedOutput() })
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Fatalf("worker %d: %v\n%s", w, err, outs[w])
		}
	}
	total := 0
	for w := range fleetProcs {
		for i := range fleetSessions {
			sess := fleetSession(w, i)
			rep := verify(t, read(t, s, sess), &transcript.Options{Verifier: verifier})
			if len(rep.Calls) != fleetCalls {
				t.Errorf("session %s: %d calls", sess, len(rep.Calls))
			}
			for n, c := range rep.Calls {
				if want := fmt.Sprintf("%s/c%d", sess, n); c.Call != want {
					t.Errorf("session %s: call %d is %s", sess, n, c.Call)
				}
			}
			total += len(rep.Calls)
		}
	}
	// Gapless in the table too: each chain's lines are 1..seq.
	var chains, bad int
	err = s.pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE c.seq <> l.n OR c.seq <> l.top)
		FROM transcript_chains c JOIN (SELECT chain, count(*) AS n, max(seq) AS top FROM transcript_lines GROUP BY chain) l USING (chain)`).Scan(&chains, &bad)
	if err != nil || chains != fleetProcs*fleetSessions || bad != 0 {
		t.Errorf("%d chains, %d with a gap: %v", chains, bad, err)
	}
	if total != fleetProcs*fleetSessions*fleetCalls {
		t.Errorf("%d calls in all", total)
	}
}

// TestPostgresCrashChild is TestPostgresCrash's worker: it records calls
// with large prompts into chain "crash", signed, printing "acked N" after
// each, until it is killed.
func TestPostgresCrashChild(t *testing.T) {
	dsn := os.Getenv("PROMPTLOOM_CRASH_DB")
	if dsn == "" {
		t.Skip("the worker of TestPostgresCrash")
	}
	s, signer := child(t, dsn)
	chain := os.Getenv("PROMPTLOOM_CRASH_CHAIN")
	j := journal.NewSink(s.Sink(chain), &journal.Options{Session: chain, Signer: signer, CheckpointEvery: 3})
	body := strings.Repeat("Keep the todo list current and run the tests. ", 5000) // about 230 KB
	slow := journal.ModelFunc(func(ctx context.Context, req journal.Request) (journal.Response, error) {
		time.Sleep(time.Millisecond)
		return echo(ctx, req)
	})
	for i := 0; ; i++ {
		e, err := explain.Explain([]byte(fmt.Sprintf(`{"system": [%q, "call %d"]}`, body, i)), nil)
		if err != nil {
			t.Fatal(err)
		}
		r := journal.Request{Call: fmt.Sprintf("c%d", i), System: e.System, Manifest: e.Manifest}
		if _, err := j.Call(ctx, slow, r); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("acked %d\n", i+1)
	}
}

// A worker recording into PostgreSQL is killed with SIGKILL mid-call, five
// times at different moments: each chain holds every acknowledged call,
// whole lines and whole appends only (at most the last call lacks its
// outcome), and goes on after the dead worker's transaction.
func TestPostgresCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	s, dsn := open(t)
	skey, vkey, _ := note.GenerateKey(rand.Reader, "fleet")
	verifier, _ := note.NewVerifier(vkey)
	for i := range 5 {
		crash(t, s, dsn, fmt.Sprintf("crash%d", i), skey, verifier, time.Duration(i)*3*time.Millisecond)
	}
}

func crash(t *testing.T, s *Store, dsn, chain, skey string, verifier note.Verifier, delay time.Duration) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestPostgresCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "PROMPTLOOM_CRASH_DB="+dsn, "PROMPTLOOM_FLEET_KEY="+skey, "PROMPTLOOM_CRASH_CHAIN="+chain)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	acked := 0
	for acked < 20 && sc.Scan() {
		if n, ok := strings.CutPrefix(sc.Text(), "acked "); ok {
			acked, _ = strconv.Atoi(n)
		}
	}
	// Kill it a moment later, wherever it is: in the model, or in an append.
	time.Sleep(delay)
	cmd.Process.Signal(syscall.SIGKILL)
	for sc.Scan() {
		if n, ok := strings.CutPrefix(sc.Text(), "acked "); ok {
			acked, _ = strconv.Atoi(n)
		}
	}
	cmd.Wait()
	if acked < 20 {
		t.Fatalf("the worker acknowledged %d calls:\n%s", acked, stderr.String())
	}
	// The next append waits for the dead worker's transaction to roll
	// back, and follows the last whole append.
	var tail journal.Tail
	if err := s.Sink(chain).Append(ctx, func(t journal.Tail) ([]byte, error) { tail = t; return nil, nil }); err != nil {
		t.Fatal(err)
	}
	tr := read(t, s, chain)
	if n := int64(bytes.Count(tr, []byte("\n"))); n != tail.Seq {
		t.Fatalf("%d lines read, the chain's tail is at %d", n, tail.Seq)
	}
	rep, err := transcript.Verify(bytes.NewReader(tr), nil)
	var b strings.Builder
	rep.WriteText(&b)
	ok := err == nil && len(rep.Problems) == 1 && rep.Problems[0].Rule == transcript.RuleSessionUnclosed && len(rep.Calls) >= acked
	for i, c := range rep.Calls {
		if c.Status != "ok" && (c.Status != "incomplete" || i != len(rep.Calls)-1) {
			ok = false
		}
	}
	if !ok {
		t.Fatalf("after SIGKILL (%d acknowledged): %v\n%s", acked, err, b.String())
	}
	// Signed every third call: every checkpoint written holds with the
	// key, and the session's end is missing (no journal_close; and no
	// checkpoint after its last lines, unless it was killed just after
	// one).
	calls := len(rep.Calls)
	rep, _ = transcript.Verify(bytes.NewReader(tr), &transcript.Options{Verifier: verifier})
	b.Reset()
	rep.WriteText(&b)
	for _, p := range rep.Problems {
		if p.Rule != transcript.RuleUnsignedEnd && p.Rule != transcript.RuleUnsignedLines && p.Rule != transcript.RuleSessionUnclosed {
			t.Errorf("with the key: %s", p.Detail)
		}
	}
	if rep.OK() || rep.Checkpoints < calls/3-1 {
		t.Errorf("with the key, %d checkpoints:\n%s", rep.Checkpoints, b.String())
	}
	_, incomplete, _ := rep.Counts()
	t.Logf("%s: killed %v after the 20th call, %d acknowledged; %d calls (%d without an outcome), %d lines in the chain", chain, delay, acked, len(rep.Calls), incomplete, tail.Seq)
}

// child is a worker's store on dsn (not migrated: the parent did that) and
// its signer, from PROMPTLOOM_FLEET_KEY.
func child(t *testing.T, dsn string) (*Store, note.Signer) {
	signer, err := note.NewSigner(os.Getenv("PROMPTLOOM_FLEET_KEY"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, signer
}
