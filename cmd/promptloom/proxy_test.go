package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/promptloom/promptloom/internal/testkit/fakeprovider"
	"github.com/promptloom/promptloom/transcript"
)

// SIGTERM with 16 streams in flight: the proxy stops accepting, lets the
// 16 finish, closes the transcript and exits 0; every call is recorded
// whole and the transcript verifies.
func TestProxyDrainsOnSIGTERM(t *testing.T) {
	bin, err := exec.LookPath("promptloom") // testscript.Main put it on $PATH
	if err != nil {
		t.Skip("no promptloom command on $PATH:", err)
	}
	const n = 16
	release := make(chan struct{})
	up := fakeprovider.New()
	defer up.Close()
	for range n {
		up.Push(fakeprovider.Reply{Text: strings.Repeat("word ", 20), StallAfter: 3, Release: release})
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "run.jsonl")
	cmd := exec.Command(bin, "proxy", "--upstream", up.URL, "--transcript", path, "--grace", "30s")
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on http://")
	if err != nil || !ok {
		t.Fatalf("first line %q: %v (%s)", line, err, stderr.String())
	}
	var wg sync.WaitGroup
	got := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"model":"claude-sonnet-4-5","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"client %d"}]}`, i)
			req, _ := http.NewRequest("POST", "http://"+addr+"/v1/messages", strings.NewReader(body))
			req.Header.Set("Promptloom-Session", fmt.Sprintf("c%d", i))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			got[i] = string(b)
		}()
	}
	waitFor(t, "16 requests at the upstream", func() bool { return len(up.Requests()) == n })
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Once it stops accepting, the streams in flight may go on.
	waitFor(t, "the listener closed", func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	close(release)
	wg.Wait()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v\n%s", err, stderr.String())
	}
	for i, b := range got {
		if !strings.Contains(b, "message_stop") {
			t.Errorf("client %d: the stream did not end: %q", i, b)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := transcript.Verify(bytes.NewReader(data), nil)
	if err != nil || !rep.OK() || len(rep.Calls) != n {
		t.Fatalf("verify: %v, %d calls", err, len(rep.Calls))
	}
	if ok, _, _ := rep.Counts(); ok != n {
		t.Errorf("%d calls ok of %d", ok, n)
	}
}

// waitFor polls cond (a condition, not a duration) for up to 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
