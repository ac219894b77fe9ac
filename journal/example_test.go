package journal_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/transcript"
)

func ExampleJournal_Call() {
	e, _ := explain.Explain([]byte(`{"system": ["You are careful."]}`), nil)
	var run bytes.Buffer
	j := journal.New(&run, nil)
	model := journal.ModelFunc(func(context.Context, journal.Request) (journal.Response, error) {
		return journal.Response{Text: "ok"}, nil
	})
	if _, err := j.Call(context.Background(), model, journal.Request{Call: "c1", System: e.System, Manifest: e.Manifest}); err != nil {
		panic(err)
	}
	written := run.Len()

	// A manifest that does not hold for the bytes about to be sent: no call,
	// no line written.
	_, err := j.Call(context.Background(), model, journal.Request{Call: "c2", System: e.System + "!", Manifest: e.Manifest})
	fmt.Println(err != nil, run.Len() == written)

	// Closing the journal ends its session; the whole run then verifies.
	j.Close()
	report, _ := transcript.Verify(bytes.NewReader(run.Bytes()), nil)
	fmt.Println(report.OK(), len(report.Calls))
	// Output:
	// true true
	// true 1
}
