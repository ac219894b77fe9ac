package report_test

import (
	"bytes"
	"context"
	"os"
	"time"

	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/transcript"
	"github.com/promptloom/promptloom/transcript/report"
)

// A recorded call, verified and shown: its verdict, the fragments it was
// served, its reply, then the verdicts of the whole transcript.
func ExampleWriteText() {
	var tr bytes.Buffer
	at := time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)
	j := journal.New(&tr, &journal.Options{Clock: func() time.Time { return at }, Session: "s1"})
	e, _ := explain.Explain([]byte(`{"system": ["Be brief."], "tools": [{"name": "todo", "guidance": "Track it."}], "call_role": "coder"}`), nil)
	model := journal.ModelFunc(func(context.Context, journal.Request) (journal.Response, error) {
		return journal.Response{Text: "done"}, nil
	})
	j.Call(context.Background(), model, journal.Request{Call: "c1", System: e.System, Manifest: e.Manifest})
	j.Close()

	rep, _ := transcript.Verify(&tr, nil)
	report.WriteText(os.Stdout, rep, nil)
	// Output:
	// ok c1 (role coder, line 4): 20-byte prompt
	//   included system[0]: unconditional
	//   included tool:todo.guidance: tool(s) present: todo
	//   reply: done
	// ok   line 4: call c1 (seq 4)
	// 1 call(s) verified, 0 incomplete, 0 failed (promptloom transcript, 6 lines)
	// chain head blake3:8ab7d29499440cde435069fdf7c19f92ede75500b7e8f28e462b508969a6f38f (the hash of line 6)
}
