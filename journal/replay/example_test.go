package replay_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/journal/replay"
)

// A run is recorded with its answers pinned in its log; a replay answers
// from the pins without calling any model, and a call whose prompt
// changed misses, saying which fragment changed.
func Example() {
	ctx := context.Background()
	call := func(options string) journal.Request {
		e, _ := explain.Explain([]byte(options), nil)
		return journal.Request{Call: "c1", System: e.System, Manifest: e.Manifest}
	}
	model := journal.ModelFunc(func(context.Context, journal.Request) (journal.Response, error) {
		return journal.Response{Text: "done"}, nil
	})

	log := eventlog.NewMemory(nil)
	rec, _ := replay.New(ctx, model, &replay.Options{Log: log})
	rec.Complete(ctx, call(`{"system": ["Be brief.", "Answer in English."]}`))

	strict, _ := replay.New(ctx, nil, &replay.Options{Strict: true, Recorded: log})
	resp, err := strict.Complete(ctx, call(`{"system": ["Be brief.", "Answer in English."]}`))
	fmt.Println(resp.Text, err)
	_, err = strict.Complete(ctx, call(`{"system": ["Be brief.", "Answer in French."]}`))
	var miss *replay.MissError
	fmt.Println(errors.Is(err, replay.ErrPinMiss), errors.As(err, &miss), miss.Changed[0])
	// Output:
	// done <nil>
	// true true system[1] (digest)
}
