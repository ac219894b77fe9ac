package postgres

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
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

func TestPairedSurrogates(t *testing.T) {
	for raw, want := range map[string]bool{
		`"\ud83d\ude00"`: true, `"\uD83D\uDE00 \u00e9"`: true, `"\\ud83d"`: true, `"x\\\ud83d\ude00"`: true, `1`: true,
		`"\ud83d"`: false, `"\ude00"`: false, `"\ud83d\u0041"`: false, `"\ud83d\n"`: false, `"\\\ud83d"`: false, `"\ud83d\ud83d"`: false,
	} {
		if got := pairedSurrogates([]byte(raw)); got != want {
			t.Errorf("pairedSurrogates(%s) = %v", raw, got)
		}
	}
}

// Payloads jsonb cannot hold (a lone surrogate escape, numbers past
// numeric's range) keep their bytes with a NULL jsonb, alone or in a group
// commit beside others, which keep theirs as jsonb.
func TestPostgresPayloadsJsonbRefuses(t *testing.T) {
	ctx := context.Background()
	s := pgStore(ctx, t, pgtest.URL(t))
	refused := []string{`"cut \ud83d"`, `"\ude00"`, `{"n":1e1000000}`, `[1e-16384]`, `[1, 1e131072]`}
	for _, p := range refused {
		if _, err := s.Append(ctx, eventlog.Draft{Kind: "refused", Payload: json.RawMessage(p)}); err != nil {
			t.Fatalf("Append(%s): %v", p, err)
		}
	}
	// The same beside good batches, appended at once.
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Go(func() {
			p := `{"i":` + strconv.Itoa(i) + `}`
			kind := "good"
			if i%5 == 0 {
				p, kind = refused[i/5], "refused"
			}
			_, errs[i] = s.Append(ctx, eventlog.Draft{Kind: kind, Payload: json.RawMessage(p)}, eventlog.Draft{Kind: "good", Payload: 1})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("batch %d: %v", i, err)
		}
	}
	rows, err := s.pool.Query(ctx, `SELECT kind, payload IS NULL, convert_from(raw, 'UTF8') FROM events ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var kind, raw string
		var null bool
		if err := rows.Scan(&kind, &null, &raw); err != nil {
			t.Fatal(err)
		}
		n++
		if null != (kind == "refused") {
			t.Errorf("%s payload %s: NULL jsonb %v", kind, raw, null)
		}
	}
	if rows.Err() != nil || n != len(refused)+40 {
		t.Errorf("%d events, %v", n, rows.Err())
	}
}
