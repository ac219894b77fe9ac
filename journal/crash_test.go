package journal

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/promptloom/promptloom/transcript"
)

// TestCrashChild is the child of TestCrashLeavesWholeCalls: it records
// calls with large prompts until it is killed.
func TestCrashChild(t *testing.T) {
	path := os.Getenv("PROMPTLOOM_CRASH_TRANSCRIPT")
	if path == "" {
		t.Skip("the child of TestCrashLeavesWholeCalls")
	}
	j, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("Keep the todo list current and run the tests. ", 20000) // about 900 KB
	for i := 0; ; i++ {
		r := request(t, fmt.Sprintf("c%d", i), fmt.Sprintf(`{"system": [%q, "call %d"]}`, body, i))
		if _, err := j.Call(ctx, echo, r); err != nil {
			t.Fatal(err)
		}
	}
}

// A process recording calls is killed with SIGKILL mid-run: the transcript
// holds whole calls only (once Open has cut a line the kill tore), and
// every one of them verifies.
func TestCrashLeavesWholeCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	path := filepath.Join(t.TempDir(), "t.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
	cmd.Env = append(os.Environ(), "PROMPTLOOM_CRASH_TRANSCRIPT="+path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		data, _ := os.ReadFile(path)
		if bytes.Count(data, []byte(`"kind":"provider_call_response"`)) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the child recorded too little in a minute:\n%s", stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) == 0 {
		t.Fatal("the child wrote nothing")
	}
	if data[len(data)-1] != '\n' {
		// SIGKILL can cut a large write short (the kernel stops between
		// pages): the torn last line is what Open repairs before anything
		// is appended, and Verify must see whole calls after it.
		j, err := Open(path, nil)
		if err != nil {
			t.Fatalf("opening the torn transcript: %v", err)
		}
		if j.repaired == 0 {
			t.Fatal("a torn last line, and Open repaired nothing")
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		if data, err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
		t.Logf("the kill tore the last line; Open cut it")
	}
	// The run was cut short, and the report says so (the session has no
	// close; the last call may lack its response); but the chain holds,
	// and every whole call verifies.
	rep, err := transcript.Verify(bytes.NewReader(data), nil)
	ok := err == nil && len(rep.Problems) == 1 && rep.Problems[0].Rule == transcript.RuleSessionUnclosed && len(rep.Calls) >= 3
	for i, c := range rep.Calls {
		if c.Status != verified && (c.Status != incomplete || i != len(rep.Calls)-1) {
			ok = false
		}
	}
	if !ok {
		var b strings.Builder
		rep.WriteText(&b)
		t.Fatalf("after SIGKILL: %v\n%s", err, b.String())
	}
	t.Logf("killed after %d whole calls (%d bytes)", len(rep.Calls), len(data))
}
