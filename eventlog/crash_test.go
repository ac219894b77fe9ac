package eventlog

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/promptloom/promptloom/internal/testkit/pgtest"
)

const crashBatch = 5

// TestCrashChild is the child of TestSQLiteCrash, TestPostgresCrash and
// TestPostgresServerCrash: it
// appends batches to the log PROMPTLOOM_CRASH_DB names (a path or a URL) and
// prints the last seq of each batch once Append has returned.
func TestCrashChild(t *testing.T) {
	dsn := os.Getenv("PROMPTLOOM_CRASH_DB")
	if dsn == "" {
		t.Skip("the child of TestSQLiteCrash and TestPostgresCrash")
	}
	var opts []Option
	if os.Getenv("PROMPTLOOM_CRASH_SERIAL") != "" {
		opts = append(opts, WithSerialFlush())
	}
	s, err := Open(context.Background(), dsn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 4000)
	for b := 0; ; b++ {
		drafts := make([]Draft, crashBatch)
		for i := range drafts {
			drafts[i] = Draft{Kind: "k", Payload: map[string]any{"batch": b, "i": i, "pad": pad}}
		}
		envs, err := s.Append(context.Background(), drafts...)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("acked %d\n", envs[len(envs)-1].Seq)
	}
}

// A writer killed with SIGKILL mid-append: reopened, the log holds every
// acknowledged event, and no partial batch.
func TestSQLiteCrash(t *testing.T) {
	crash(t, filepath.Join(t.TempDir(), "log.db"))
}

// The same on PostgreSQL: the server rolls back the killed client's open
// transaction, so no partial batch and no gap, and the next append follows
// the last whole batch.
func TestPostgresCrash(t *testing.T) {
	crash(t, pgtest.URL(t))
}

func crash(t *testing.T, dsn string) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
	cmd.Env = append(os.Environ(), "PROMPTLOOM_CRASH_DB="+dsn)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	acked := readAcked(sc, 0, 200*crashBatch, time.Now().Add(60*time.Second))
	cmd.Process.Signal(syscall.SIGKILL)
	// drain what the child printed before it died: those were acked too
	acked = readAcked(sc, acked, 0, time.Time{})
	cmd.Wait()
	if acked == 0 {
		t.Fatal("the child acknowledged nothing")
	}

	ctx := context.Background()
	s, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The server may still be rolling back the dead client's transaction:
	// the next append waits for it, and follows the last whole batch.
	next, err := s.Append(ctx, Draft{Kind: "after", Payload: 0})
	if err != nil {
		t.Fatal(err)
	}
	head := next[0].Seq - 1
	if head < acked {
		t.Fatalf("the log has %d events; %d were acknowledged", head, acked)
	}
	if head%crashBatch != 0 {
		t.Fatalf("the log has %d events: a partial batch of %d", head, head%crashBatch)
	}
	want := int64(1)
	err = s.Scan(ctx, 1, head, func(env Envelope) error {
		if env.Seq != want {
			return fmt.Errorf("event %d follows event %d", env.Seq, want-1)
		}
		want++
		e, err := s.Get(ctx, env.Seq)
		if err != nil {
			return err
		}
		var p struct{ Batch, I int }
		if err := e.Decode(&p); err != nil || p.Batch != int(env.Seq-1)/crashBatch || p.I != int(env.Seq-1)%crashBatch {
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

// readAcked reads the child's "acked N" lines until N reaches until (0:
// until its output ends) or the deadline passes, and returns the last N.
func readAcked(sc *bufio.Scanner, acked, until int64, deadline time.Time) int64 {
	for sc.Scan() {
		if s, ok := strings.CutPrefix(sc.Text(), "acked "); ok {
			acked, _ = strconv.ParseInt(s, 10, 64)
		}
		if until > 0 && (acked >= until || time.Now().After(deadline)) {
			break
		}
	}
	return acked
}
