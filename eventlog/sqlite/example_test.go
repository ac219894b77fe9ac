package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/eventlog/sqlite"
)

// A log in a file outlives the process that wrote it: opened again, it holds
// every batch that was appended.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "eventlog")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run.db")
	ctx := context.Background()

	store, err := sqlite.Open(path, nil)
	if err != nil {
		panic(err)
	}
	store.Append(ctx,
		eventlog.Draft{Kind: "offer", Actor: "uk", Payload: map[string]int{"share": 60}},
		eventlog.Draft{Kind: "offer", Actor: "eu", Payload: map[string]int{"share": 40}})
	store.Close()

	store, err = sqlite.Open(path, nil)
	if err != nil {
		panic(err)
	}
	defer store.Close()
	e, err := store.Get(ctx, 2)
	if err != nil {
		panic(err)
	}
	fmt.Println(e.Seq, e.Actor, string(e.Payload))
	// Output:
	// 2 eu {"share":40}
}
