package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/transcript"
)

// A live signed file where a second session has opened but not yet
// written its first checkpoint still holds, and Logs still serves the
// session that is signed: the missing first checkpoint of an open session
// is unfinished, not broken.
func TestLogsOfALiveRunWithASessionNotSignedYet(t *testing.T) {
	s, key := keys(t, "live")
	path := filepath.Join(t.TempDir(), "run.jsonl")
	a, err := Open(path, &Options{Clock: clock, Session: "a", Signer: s, CheckpointEvery: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := a.Call(ctx, echo, request(t, fmt.Sprintf("a%d", i), `{"system": ["You are careful."]}`)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := Open(path, &Options{Clock: clock, Session: "b", Signer: s, CheckpointEvery: 5})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Call(ctx, echo, request(t, "b0", `{"system": ["You are careful."]}`)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	logs, rep, err := transcript.Logs(strings.NewReader(string(data)), &transcript.Options{Verifier: key})
	if err != nil || !rep.Holds() || len(logs) != 1 {
		t.Errorf("holds %v, %d log(s), err %v; want a's log", rep.Holds(), len(logs), err)
	}
	if _, ok := logs["a"]; !ok {
		t.Errorf("no log of session a: %v", logs)
	}
}
