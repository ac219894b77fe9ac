package postgres_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"

	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/journal/postgres"
	"github.com/promptloom/promptloom/transcript"
)

// A worker of a fleet records each session into a chain of its own, named
// after the session; an auditor lists the chains and verifies each.
func ExampleStore_Sink() {
	ctx := context.Background()
	store, err := postgres.Open(ctx, os.Getenv("LOOM_TRANSCRIPTS"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	session := "worker-7/run-42"[len("worker-7/"):] // a chain's name has no slash
	j := journal.NewSink(store.Sink(session), &journal.Options{Session: session})
	// ... j.Call(ctx, model, req) for each call ...
	j.Close()

	chains, _ := fs.ReadDir(store, ".")
	for _, c := range chains {
		f, _ := store.Open(c.Name())
		rep, err := transcript.Verify(f, nil)
		f.Close()
		fmt.Println(c.Name(), rep.OK(), err)
	}
}

// A file transcript is imported as one chain by one append of its lines
// as they are (all or none of them), and reads back byte for byte.
func ExampleStore_Sink_import() {
	ctx := context.Background()
	store, err := postgres.Open(ctx, os.Getenv("LOOM_TRANSCRIPTS"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	data, err := os.ReadFile("run.jsonl")
	if err != nil {
		fmt.Println(err)
		return
	}
	err = store.Sink("run.jsonl").Append(ctx, func(t journal.Tail) ([]byte, error) {
		if t.Seq != 0 {
			return nil, fmt.Errorf("chain run.jsonl has %d lines already", t.Seq)
		}
		return data, nil
	})
	fmt.Println(err)
	exported, _ := fs.ReadFile(store, "run.jsonl")
	fmt.Println(string(exported) == string(data))
}

// A URL that does not parse is refused before anything is sent; the error
// quotes it with its password masked.
func ExampleOpen() {
	_, err := postgres.Open(context.Background(), "postgres://alice:s3cret@db.example:port/log", nil)
	fmt.Println(err)
	// Output:
	// journal/postgres: open postgres://alice:xxxxx@db.example:port/log: cannot parse `postgres://alice:xxxxx@db.example:port/log`: invalid port
}
