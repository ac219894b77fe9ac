package postgres

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/internal/testkit/pgtest"

	"github.com/jackc/pgx/v5"
)

// schemaURL is a URL of the test database whose search_path is a new
// schema named name (quoted: any characters), dropped when the test ends.
func schemaURL(t *testing.T, name string) string {
	t.Helper()
	base := pgtest.URL(t) // skips without a database
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	quoted := pgx.Identifier{name}.Sanitize()
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+quoted); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(ctx, os.Getenv(pgtest.Env))
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP SCHEMA "+quoted+" CASCADE"); err != nil {
			t.Error(err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", quoted)
	u.RawQuery = q.Encode()
	return u.String()
}

// A schema whose name is not ASCII, long enough that the channel's 63rd
// byte falls inside a character: the channel is cut before that
// character, so Append notifies, and Wait in another store is woken.
func TestPostgresNonASCIISchemaChannel(t *testing.T) {
	name := strings.Repeat("é", 30) // the channel's prefix is 20 bytes: byte 63 is mid-é
	dsn := schemaURL(t, name)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a, b := pgStore(ctx, t, dsn), pgStore(ctx, t, dsn)
	if len(a.channel) > 63 || !strings.HasPrefix(a.channel, "promptloom_eventlog_é") {
		t.Fatalf("channel %q", a.channel)
	}
	if err := b.listen(ctx); err != nil {
		t.Fatal(err)
	}
	got := make(chan int64, 1)
	go func() {
		head, err := b.Wait(ctx, 0)
		if err != nil {
			t.Error(err)
		}
		got <- head
	}()
	if _, err := a.Append(ctx, eventlog.Draft{Kind: "k", Payload: 1}); err != nil {
		t.Fatal(err)
	}
	if head := <-got; head != 1 {
		t.Errorf("Wait = %d, want 1", head)
	}
}
