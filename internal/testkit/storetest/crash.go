package storetest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/promptloom/promptloom/eventlog"
)

// CrashBatch is the length of every batch a crash test's writer appends.
const CrashBatch = 5

// crashEnv names the log a writer process appends to.
const crashEnv = "PROMPTLOOM_CRASH_DB"

// CrashChild is the body of a store's TestCrashChild, the writer process of
// its crash tests (StartWriter runs it): it opens the log its parent named
// and appends batches of CrashBatch events until it is killed, printing
// "acked N" once the Append whose last position is N has returned. It
// skips when it is not run as a writer.
func CrashChild(t *testing.T, open func(dsn string) (eventlog.Store, error)) {
	dsn := os.Getenv(crashEnv)
	if dsn == "" {
		t.Skip("the writer of a crash test")
	}
	s, err := open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 4000)
	for b := 0; ; b++ {
		drafts := make([]eventlog.Draft, CrashBatch)
		for i := range drafts {
			drafts[i] = eventlog.Draft{Kind: "k", Payload: map[string]any{"batch": b, "i": i, "pad": pad}}
		}
		envs, err := s.Append(context.Background(), drafts...)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("acked %d\n", envs[len(envs)-1].Seq)
	}
}

// Writer is a writer process, appending to a log until it is killed.
type Writer struct {
	cmd   *exec.Cmd
	sc    *bufio.Scanner
	acked int64
}

// StartWriter starts the test binary's TestCrashChild, appending to the log
// dsn names, with env added to its environment.
func StartWriter(t *testing.T, dsn string, env ...string) *Writer {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
	cmd.Env = append(append(os.Environ(), crashEnv+"="+dsn), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return &Writer{cmd: cmd, sc: bufio.NewScanner(out)}
}

// Acked waits until the writer has acknowledged n events or 60 seconds
// have passed (or its output ended), and returns the last position it
// acknowledged.
func (w *Writer) Acked(n int64) int64 {
	w.readAcked(n, time.Now().Add(60*time.Second))
	return w.acked
}

// Kill kills the writer with SIGKILL and returns the last position it
// acknowledged, counting what it printed before it died.
func (w *Writer) Kill() int64 {
	w.cmd.Process.Signal(syscall.SIGKILL)
	w.readAcked(0, time.Time{})
	w.cmd.Wait()
	return w.acked
}

// readAcked reads the writer's "acked N" lines until N reaches until (0:
// until its output ends) or the deadline passes.
func (w *Writer) readAcked(until int64, deadline time.Time) {
	for w.sc.Scan() {
		if s, ok := strings.CutPrefix(w.sc.Text(), "acked "); ok {
			w.acked, _ = strconv.ParseInt(s, 10, 64)
		}
		if until > 0 && (w.acked >= until || time.Now().After(deadline)) {
			break
		}
	}
}

// Crash kills a writer appending to the log dsn names with SIGKILL
// mid-append, and checks that the log, opened again with open, holds every
// acknowledged event and no partial batch, and that the next append follows
// the last whole batch.
func Crash(t *testing.T, dsn string, open func() (eventlog.Store, error)) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	w := StartWriter(t, dsn)
	w.Acked(200 * CrashBatch)
	acked := w.Kill()
	if acked == 0 {
		t.Fatal("the child acknowledged nothing")
	}

	ctx := context.Background()
	s, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The server may still be rolling back the dead client's transaction:
	// the next append waits for it, and follows the last whole batch.
	next, err := s.Append(ctx, eventlog.Draft{Kind: "after", Payload: 0})
	if err != nil {
		t.Fatal(err)
	}
	head := next[0].Seq - 1
	if head < acked {
		t.Fatalf("the log has %d events; %d were acknowledged", head, acked)
	}
	if head%CrashBatch != 0 {
		t.Fatalf("the log has %d events: a partial batch of %d", head, head%CrashBatch)
	}
	want := int64(1)
	err = s.Scan(ctx, 1, head, func(env eventlog.Envelope) error {
		if env.Seq != want {
			return fmt.Errorf("event %d follows event %d", env.Seq, want-1)
		}
		want++
		e, err := s.Get(ctx, env.Seq)
		if err != nil {
			return err
		}
		var p struct{ Batch, I int }
		if err := e.Decode(&p); err != nil || p.Batch != int(env.Seq-1)/CrashBatch || p.I != int(env.Seq-1)%CrashBatch {
			return fmt.Errorf("event %d: %+v %v", env.Seq, p, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want != head+1 {
		t.Fatalf("scanned %d events, head %d", want-1, head)
	}
	t.Logf("killed after %d acknowledged events; %d in the log", acked, head)
}
