package eventlog_test

import (
	"context"
	"fmt"

	"github.com/promptloom/promptloom/eventlog"
)

func ExampleStore() {
	ctx := context.Background()
	var store eventlog.Store = eventlog.NewMemory(nil)
	store.Append(ctx,
		eventlog.Draft{Kind: "offer", Actor: "uk", Payload: map[string]int{"share": 60}},
		eventlog.Draft{Kind: "remark", Actor: "uk", Audience: []string{"eu"}, Payload: "aside"})

	// Envelopes are read without payloads: a reader decides from them alone.
	store.Scan(ctx, 1, 2, func(env eventlog.Envelope) error {
		fmt.Println(env.Seq, env.Kind, env.VisibleTo("uk"))
		return nil
	})
	// Output:
	// 1 offer true
	// 2 remark false
}
