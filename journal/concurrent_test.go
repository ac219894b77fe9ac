package journal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/promptloom/promptloom/transcript"
)

const appendCalls = 200

// appendMany records n calls named prefix-0 ... through its own Journal on
// path, then closes it.
func appendMany(t *testing.T, path, prefix string, n int) {
	j, err := Open(path, &Options{Clock: clock})
	if err != nil {
		t.Error(err)
		return
	}
	defer j.Close()
	for i := 0; i < n; i++ {
		// Prompts alternate, so system_prompt and manifest lines come and go.
		r := request(t, fmt.Sprintf("%s-%d", prefix, i), fmt.Sprintf(`{"system": ["Writer %s.", "Rule %d."]}`, prefix, i%3))
		if _, err := j.Call(ctx, echo, r); err != nil {
			t.Error(err)
			return
		}
	}
}

// checkAll verifies a transcript that writers a and b appended n calls
// each to: every call is present, once, and the whole run verifies.
func checkAll(t *testing.T, path string, writers []string, n int) {
	t.Helper()
	rep := verifyFile(t, path)
	seen := map[string]int{}
	for _, c := range rep.Calls {
		seen[c.Call]++
	}
	for _, w := range writers {
		for i := 0; i < n; i++ {
			if name := fmt.Sprintf("%s-%d", w, i); seen[name] != 1 {
				t.Errorf("call %s is in the transcript %d time(s)", name, seen[name])
			}
		}
	}
	if len(rep.Calls) != len(writers)*n {
		t.Errorf("%d calls, want %d", len(rep.Calls), len(writers)*n)
	}
}

func lastBytes(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// Two Journals in one process, two goroutines, one file: nothing lost, the
// chain valid.
func TestTwoGoroutinesAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	var wg sync.WaitGroup
	for _, w := range []string{"a", "b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			appendMany(t, path, w, appendCalls)
		}()
	}
	wg.Wait()
	checkAll(t, path, []string{"a", "b"}, appendCalls)
}

// TestAppendChild is the child of TestTwoProcessesAppend.
func TestAppendChild(t *testing.T) {
	path, prefix := os.Getenv("PROMPTLOOM_APPEND_TRANSCRIPT"), os.Getenv("PROMPTLOOM_APPEND_PREFIX")
	if path == "" {
		t.Skip("the child of TestTwoProcessesAppend")
	}
	n, _ := strconv.Atoi(os.Getenv("PROMPTLOOM_APPEND_CALLS"))
	appendMany(t, path, prefix, n)
}

// Two OS processes appending to one transcript: nothing lost, the chain
// valid.
func TestTwoProcessesAppend(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	path := filepath.Join(t.TempDir(), "t.jsonl")
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for _, w := range []string{"p", "q"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAppendChild$")
		cmd.Env = append(os.Environ(), "PROMPTLOOM_APPEND_TRANSCRIPT="+path, "PROMPTLOOM_APPEND_PREFIX="+w,
			"PROMPTLOOM_APPEND_CALLS="+strconv.Itoa(appendCalls))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, &out)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child %d: %v\n%s", i, err, outs[i])
		}
	}
	checkAll(t, path, []string{"p", "q"}, appendCalls)
}

// A complete last record that merely lacks its newline is kept (and
// ended); only a line that is not complete JSON is cut.
func TestOpenKeepsACompleteRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	whole := recorded(t)
	os.WriteFile(path, []byte(strings.TrimSuffix(whole, "\n")), 0o644)
	j, err := Open(path, &Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	if j.repaired != 0 || j.sink.(*fileSink).t.Seq != 12 {
		t.Errorf("repaired %d bytes, seq %d", j.repaired, j.sink.(*fileSink).t.Seq)
	}
	if _, err := j.Call(ctx, echo, request(t, "c4", `{"system": "four"}`)); err != nil {
		t.Fatal(err)
	}
	j.Close()
	data, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(data), whole) {
		t.Fatal("Open changed a complete record")
	}
	if text, ok := reportText(t, string(data)); !ok || !strings.Contains(text, "4 call(s) verified") {
		t.Errorf("after reopening:\n%s", text)
	}
}

// Open refuses to chain onto a file it did not write.
func TestOpenRefusesAForeignTranscript(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	os.WriteFile(path, []byte(`{"type":"system_prompt","content":"x"}`+"\n"), 0o644)
	if _, err := Open(path, nil); err == nil || !strings.Contains(err.Error(), "not a chained promptloom transcript") {
		t.Errorf("Open = %v", err)
	}
}

// Close while a call waits on its model: Close lets the call finish, its
// answer is recorded before the close line, and the transcript verifies;
// a call begun after Close is ErrClosed.
func TestCloseWaitsForRunningCalls(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	j, err := Open(path, &Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	asked, release := make(chan struct{}), make(chan struct{})
	slow := ModelFunc(func(c context.Context, req Request) (Response, error) {
		close(asked)
		<-release
		return echo(c, req)
	})
	answered := make(chan error, 1)
	go func() {
		_, err := j.Call(ctx, slow, request(t, "slow", `{"system": "Wait."}`))
		answered <- err
	}()
	<-asked
	closed := make(chan error, 1)
	go func() { closed <- j.Close() }()
	// Close has marked the journal closed before it waits: a new call is
	// refused.
	for {
		_, err := j.Call(ctx, echo, request(t, "late", `{"system": "Late."}`))
		if errors.Is(err, ErrClosed) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		runtime.Gosched()
	}
	close(release)
	if err := <-answered; err != nil {
		t.Fatalf("the running call failed: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	verifyFile(t, path)
}

// verifyFile verifies the transcript at path, failing t with the end of
// the report unless it holds.
func verifyFile(t *testing.T, path string) *transcript.Report {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := transcript.Verify(bytes.NewReader(data), nil)
	if err != nil || !rep.OK() {
		var b strings.Builder
		rep.WriteText(&b)
		t.Fatalf("verify: %v\n%s", err, lastBytes(b.String(), 2000))
	}
	return rep
}
