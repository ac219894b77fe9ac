//go:build unix

package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/journal"
)

// TestReportReadsTheTranscriptOnce: report renders what Verify read and
// judged in its one pass. The transcript comes through a named pipe,
// which can be read once: a second pass (seeking back, or opening it
// again) fails or waits for a writer that never comes.
func TestReportReadsTheTranscriptOnce(t *testing.T) {
	e, err := explain.Explain([]byte(`{"system": "You are careful."}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	j := journal.New(&buf, &journal.Options{Session: "s1"})
	model := journal.ModelFunc(func(context.Context, journal.Request) (journal.Response, error) {
		return journal.Response{Text: "the verified reply"}, nil
	})
	if _, err := j.Call(context.Background(), model, journal.Request{Call: "c1", System: e.System, Manifest: e.Manifest}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	fifo := filepath.Join(t.TempDir(), "run.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipe: %v", err)
	}
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0) // waits for the reader
		if err != nil {
			return
		}
		f.Write(buf.Bytes())
		f.Close()
	}()
	type result struct {
		code     int
		out, err string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errOut := run(t, "report", "--transcript", fifo)
		done <- result{code, out, errOut}
	}()
	select {
	case r := <-done:
		if r.code != ExitOK || !strings.Contains(r.out, "reply: the verified reply") {
			t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.out, r.err)
		}
	case <-time.After(20 * time.Second):
		// Unblock the second open, so the test ends.
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		t.Fatal("report waited for the transcript a second time: it reads it twice")
	}
}
