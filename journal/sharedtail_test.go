package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// The sessions of one file in one process (a proxy's) append one after
// another without reading back the tail another just wrote; a file cut
// back under them is still noticed by each, whose session starts again,
// and what is written verifies.
func TestSessionsOfAFileShareItsTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	var js []*Journal
	for i := range 3 {
		j, err := Open(path, &Options{Clock: clock, Session: fmt.Sprint("s", i)})
		if err != nil {
			t.Fatal(err)
		}
		js = append(js, j)
	}
	call := func(round int) {
		t.Helper()
		for i, j := range js {
			if _, err := j.Call(ctx, echo, request(t, fmt.Sprintf("c%d-%d", i, round), `{"system": "You are careful."}`)); err != nil {
				t.Fatal(err)
			}
		}
	}
	call(0) // each session opens, and reads the file's sessions
	before := tailReads.Load()
	for round := 1; round < 6; round++ {
		call(round)
	}
	if n := tailReads.Load() - before; n != 0 {
		t.Errorf("15 calls of 3 sessions read the file's tail back %d times; want none", n)
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	call(6)
	call(7)
	for _, j := range js {
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
	}
	rep := verifyFile(t, path)
	if !rep.OK() || len(rep.Calls) != 6 {
		t.Errorf("after the cut: %d calls, problems %+v", len(rep.Calls), rep.Problems)
	}
	for _, c := range rep.Calls {
		if c.Status != verified {
			t.Errorf("%s: %s", c.Call, c.Status)
		}
	}
}
