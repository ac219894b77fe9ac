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
)

const crashBatch = 5

// TestCrashChild is the child of TestSQLiteCrash: it appends batches and
// prints the last seq of each batch once Append has returned.
func TestCrashChild(t *testing.T) {
	path := os.Getenv("PROMPTLOOM_CRASH_DB")
	if path == "" {
		t.Skip("the child of TestSQLiteCrash")
	}
	s, err := OpenSQLite(path)
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
	if testing.Short() {
		t.Skip("starts a child process")
	}
	path := filepath.Join(t.TempDir(), "log.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
	cmd.Env = append(os.Environ(), "PROMPTLOOM_CRASH_DB="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := int64(0)
	sc := bufio.NewScanner(out)
	deadline := time.Now().Add(60 * time.Second)
	for sc.Scan() {
		if s, ok := strings.CutPrefix(sc.Text(), "acked "); ok {
			acked, _ = strconv.ParseInt(s, 10, 64)
		}
		if acked >= 200*crashBatch || time.Now().After(deadline) {
			break
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	// drain what the child printed before it died: those were acked too
	for sc.Scan() {
		if s, ok := strings.CutPrefix(sc.Text(), "acked "); ok {
			acked, _ = strconv.ParseInt(s, 10, 64)
		}
	}
	cmd.Wait()
	if acked == 0 {
		t.Fatal("the child acknowledged nothing")
	}

	s, err := OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	head, _ := s.Head(context.Background())
	if head < acked {
		t.Fatalf("the log has %d events; %d were acknowledged", head, acked)
	}
	if head%crashBatch != 0 {
		t.Fatalf("the log has %d events: a partial batch of %d", head, head%crashBatch)
	}
	for seq := int64(1); seq <= head; seq++ {
		e, err := s.Get(context.Background(), seq)
		if err != nil {
			t.Fatal(err)
		}
		var p struct{ Batch, I int }
		if err := e.Decode(&p); err != nil || p.Batch != int(seq-1)/crashBatch || p.I != int(seq-1)%crashBatch {
			t.Fatalf("event %d: %+v %v", seq, p, err)
		}
	}
	t.Logf("killed after %d acknowledged events; %d on disk", acked, head)
}
