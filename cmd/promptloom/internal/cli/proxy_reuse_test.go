package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/internal/testkit/pgtest"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/journal/postgres"
)

// A proxy run again on a PostgreSQL store with the
// same Promptloom-Session opens its session as NAME~1, as a file does,
// rather than meeting the first run's chain ("another writer") and losing
// every call; both chains verify.
func TestAPostgresSessionReusedOpensAnother(t *testing.T) {
	dsn := pgtest.URL(t)
	ctx := context.Background()
	for run := range 2 {
		open, done, err := sessionOpener(ctx, dsn, &journal.Options{})
		if err != nil {
			t.Fatal(err)
		}
		j, err := open("reused", "")
		if err != nil {
			t.Fatal(err)
		}
		body := `{"model":"claude-sonnet-4-5","max_tokens":8,"messages":[{"role":"user","content":"run ` + string(rune('1'+run)) + `"}]}`
		p, err := j.Begin(ctx, journal.Request{Call: "reused/1", Unattributed: true, Body: []byte(body)})
		if err != nil {
			t.Fatalf("run %d: %v", run+1, err)
		}
		if err := p.Finish(ctx, journal.Response{Text: "ok"}, nil); err != nil {
			t.Fatal(err)
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		done()
	}
	store, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, chain := range []string{"reused", "reused~1"} {
		f, err := store.Open(chain)
		if err != nil {
			t.Fatalf("chain %s: %v", chain, err)
		}
		f.Close()
	}
	code, out, errOut := run(t, "verify", "--transcript", dsn, "--closed")
	if code != ExitOK || !strings.Contains(out, "2 of 2 chain(s) verified") {
		t.Errorf("verify: exit %d\n%s%s", code, out, errOut)
	}
}
