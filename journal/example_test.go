package journal_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/journal"
)

func ExampleJournal_Call() {
	e, _ := explain.Explain([]byte(`{"system": ["You are careful."]}`), nil)
	var transcript bytes.Buffer
	j := journal.New(&transcript, nil)
	model := journal.ModelFunc(func(context.Context, journal.Request) (journal.Response, error) {
		return journal.Response{Text: "ok"}, nil
	})
	if _, err := j.Call(context.Background(), model, journal.Request{Call: "c1", System: e.System, Manifest: e.Manifest}); err != nil {
		panic(err)
	}
	written := transcript.Len()

	// A manifest that does not hold for the bytes about to be sent: no call,
	// no line written.
	_, err := j.Call(context.Background(), model, journal.Request{Call: "c2", System: e.System + "!", Manifest: e.Manifest})
	fmt.Println(err != nil, transcript.Len() == written)

	// Closing the journal ends its session; the whole run then verifies.
	j.Close()
	report, _ := journal.Verify(bytes.NewReader(transcript.Bytes()), nil)
	fmt.Println(report.OK(), len(report.Calls))
	// Output:
	// true true
	// true 1
}
