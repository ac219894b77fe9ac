package postgres_test

import (
	"context"
	"fmt"
	"os"

	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/eventlog/postgres"
)

// Every worker of a fleet opens the same log (the URL's search_path names
// its schema): a batch gets consecutive positions, one order for all, and a
// worker catching up is woken by LISTEN/NOTIFY, not by polling. The tables
// were made once, by a deployment step holding CREATE on the schema:
// postgres.Open(ctx, url, &postgres.Options{Migrate: true}).
func ExampleOpen() {
	ctx := context.Background()
	store, err := postgres.Open(ctx, os.Getenv("LOOM_LOG"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	var seen int64 // the position this worker has read up to
	if _, err := store.Append(ctx, eventlog.Draft{Kind: "offer", Actor: "uk", Payload: map[string]int{"share": 60}}); err != nil {
		fmt.Println(err)
		return
	}
	head, err := store.Wait(ctx, seen)
	fmt.Println(head > seen, err)
}

// A URL that does not parse is refused before anything is sent; the error
// quotes it with its password masked.
func ExampleOpen_badURL() {
	_, err := postgres.Open(context.Background(), "postgres://alice:s3cret@db.example:port/log", nil)
	fmt.Println(err)
	// Output:
	// eventlog: open postgres://alice:xxxxx@db.example:port/log: cannot parse `postgres://alice:xxxxx@db.example:port/log`: invalid port
}
