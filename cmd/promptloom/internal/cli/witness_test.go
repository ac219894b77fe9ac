//go:build unix

package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/promptloom/promptloom/internal/witness"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// startWitness runs promptloom witness and returns its URL, once it has
// printed it, and a function that sends SIGTERM and returns the exit code.
func startWitness(t *testing.T, args ...string) (string, func() int) {
	r, w := io.Pipe()
	var errb bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- Main(append([]string{"witness"}, args...), nil, w, &errb)
		w.Close()
	}()
	line, err := bufio.NewReader(r).ReadString('\n')
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		t.Fatalf("first line %q (%v), stderr %s", line, err, errb.String())
	}
	go io.Copy(io.Discard, r)
	return url, func() int {
		if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		return <-code
	}
}

// The witness command cosigns over HTTP, stops on SIGTERM with exit 0 and
// keeps its state for the next start.
func TestWitnessCommand(t *testing.T) {
	dir := t.TempDir()
	w, log, state := filepath.Join(dir, "w"), filepath.Join(dir, "log"), filepath.Join(dir, "state")
	for _, args := range [][]string{{"keygen", "--witness", w}, {"keygen", log}} {
		var out, errb bytes.Buffer
		if code := Main(args, nil, &out, &errb); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
	}
	skey, _ := os.ReadFile(log + ".key")
	signer, err := note.NewSigner(strings.TrimSpace(string(skey)))
	if err != nil {
		t.Fatal(err)
	}
	cp, _ := note.Sign(&note.Note{Text: fmt.Sprintf("log\n1\n%s\n", tlog.RecordHash([]byte("call")))}, signer)
	args := []string{"--key", w + ".key", "--log", log + ".pub", "--state", state}

	url, stop := startWitness(t, args...)
	line, err := witness.Cosign(context.Background(), nil, url, 0, nil, cp)
	if err != nil {
		t.Fatal(err)
	}
	wpub, _ := os.ReadFile(w + ".pub")
	wv, err := witness.NewVerifier(strings.TrimSpace(string(wpub)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := note.Open(append(cp, line...), note.VerifierList(wv)); err != nil {
		t.Fatalf("the cosignature: %v", err)
	}
	if code := stop(); code != ExitOK {
		t.Fatalf("SIGTERM: exit %d", code)
	}

	url, stop = startWitness(t, args...)
	defer stop()
	var e *witness.Error
	if _, err := witness.Cosign(context.Background(), nil, url, 0, nil, cp); !errors.As(err, &e) || e.Status != http.StatusConflict || e.Size != 1 {
		t.Fatalf("after a restart, old 0: %v, want 409 with size 1", err)
	}
}
