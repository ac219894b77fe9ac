package demo

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/eventlog/postgres"
	"github.com/promptloom/promptloom/eventlog/sqlite"
	"github.com/promptloom/promptloom/internal/testkit/pgtest"
	"github.com/promptloom/promptloom/provenance"

	"github.com/google/go-cmp/cmp"
)

func runNegotiation(t *testing.T, store eventlog.Store) (*Negotiation, []byte) {
	t.Helper()
	model := &ScriptedModel{}
	n, err := RunNegotiation(context.Background(), store, model, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if model.Calls != len(Parties)*Rounds {
		t.Errorf("the model was called %d times, want %d", model.Calls, len(Parties)*Rounds)
	}
	var buf bytes.Buffer
	if err := n.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	return n, buf.Bytes()
}

// The side remark reaches the EU and never the UK: checked on sources (the
// read sets and the manifests), not on wording.
func TestSideRemarkNeverReachesTheUK(t *testing.T) {
	store := eventlog.NewMemory(&eventlog.Options{Clock: NegotiationClock()})
	n, _ := runNegotiation(t, store)
	var remark provenance.Source
	head, _ := store.Head(context.Background())
	store.Scan(context.Background(), 1, head, func(e eventlog.Envelope) error {
		if e.Kind == KindRemark {
			remark = provenance.Source(fmt.Sprintf("event:%d", e.Seq))
		}
		return nil
	})
	if remark == "" {
		t.Fatal("no remark in the log")
	}
	euHeard := false
	for _, c := range n.Calls {
		d := c.Context
		var sources []provenance.Source
		for _, s := range c.Context.Manifest.Segments {
			for _, src := range s.Sources {
				sources = append(sources, provenance.Source(src))
			}
		}
		switch c.Role {
		case "uk":
			if slices.Contains(d.Read, remark) || slices.Contains(sources, remark) {
				t.Errorf("round %d: the UK's context holds the EU-only remark %s", c.Round, remark)
			}
		case "eu":
			euHeard = euHeard || (slices.Contains(d.Read, remark) && slices.Contains(sources, remark))
		}
	}
	if !euHeard {
		t.Errorf("the EU never read the remark %s it overheard", remark)
	}
}

// A run on SQLite is byte-identical to a run in memory.
func TestNegotiationOnSQLiteMatchesMemory(t *testing.T) {
	_, mem := runNegotiation(t, eventlog.NewMemory(&eventlog.Options{Clock: NegotiationClock()}))
	store, err := sqlite.Open(filepath.Join(t.TempDir(), "n.db"), &eventlog.Options{Clock: NegotiationClock()})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	_, lite := runNegotiation(t, store)
	if diff := cmp.Diff(string(mem), string(lite)); diff != "" {
		t.Errorf("SQLite run differs from the in-memory run:\n%s", diff)
	}
	if _, err := RunNegotiation(context.Background(), store, &ScriptedModel{}, Settings{}); err == nil {
		t.Error("a second run over a used log succeeded")
	}
}

// A run on PostgreSQL is byte-identical to a run on SQLite, and a
// recording there replays.
func TestNegotiationOnPostgresMatchesSQLite(t *testing.T) {
	ctx := context.Background()
	lite, err := sqlite.Open(filepath.Join(t.TempDir(), "n.db"), &eventlog.Options{Clock: NegotiationClock()})
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	_, want := runNegotiation(t, lite)
	pg, err := postgres.Open(ctx, pgtest.URL(t), &postgres.Options{Clock: NegotiationClock(), Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	_, got := runNegotiation(t, pg)
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("PostgreSQL run differs from the SQLite run:\n%s", diff)
	}
	if _, err := RunNegotiation(ctx, pg, &ScriptedModel{}, Settings{}); err == nil {
		t.Error("a second run over a used log succeeded")
	}
}
