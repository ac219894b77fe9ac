package provenance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/internal/testkit/logtest"

	"github.com/google/go-cmp/cmp"
)

var roles = []string{"a", "b", "c"}

// randomLog appends a random history: events for everyone or for a few
// roles, beliefs held in each role's scope (visible to that role only), and
// sections closed for random audiences.
func randomLog(t *testing.T, r *rand.Rand, store eventlog.Store) {
	t.Helper()
	for range 10 + r.IntN(30) {
		var aud []string
		for _, role := range roles {
			if r.IntN(3) == 0 {
				aud = append(aud, role)
			}
		}
		switch r.IntN(6) {
		case 0:
			scope := roles[r.IntN(len(roles))]
			must(store.Append(ctx, eventlog.Draft{Kind: KindBeliefHeld, Actor: scope, Audience: []string{scope},
				Payload: Belief{Scope: scope, Text: "belief " + strconv.Itoa(r.IntN(100))}}))
		case 1:
			head := must(store.Head(ctx))
			if head > 0 {
				from := 1 + r.Int64N(head)
				must(CloseSection(ctx, store, fmt.Sprintf("s%d", head), from, head, aud, func(_ context.Context, evs []eventlog.Event) (string, error) {
					return fmt.Sprintf("%d events", len(evs)), nil
				}))
			}
		default:
			must(store.Append(ctx, eventlog.Draft{Kind: "say", Actor: roles[r.IntN(3)], Audience: aud, Payload: r.IntN(1000)}))
		}
	}
}

// greedy reads everything its grant offers and cites all of it, each source
// in the register the rules require.
func greedy(role string) func(context.Context, Grant) ([]Part, error) {
	return func(ctx context.Context, g Grant) ([]Part, error) {
		var parts []Part
		evs, err := g.Log.Read(ctx)
		if err != nil {
			return nil, err
		}
		for _, e := range evs {
			parts = append(parts, Part{Slot: "e" + strconv.FormatInt(e.Seq, 10), Register: budget.Considered, Text: string(e.Payload), Cites: []Source{eventSource(e.Seq)}})
		}
		held, err := g.Beliefs.Read(ctx)
		if err != nil {
			return nil, err
		}
		for _, b := range held {
			parts = append(parts, Part{Slot: "b:" + b.ID, Register: budget.Considered, Text: b.Text, Cites: []Source{source(kindBelief, b.ID)}})
		}
		sections, err := g.Chronicle.Read(ctx)
		if err != nil {
			return nil, err
		}
		for _, s := range sections {
			parts = append(parts, Part{Slot: "s:" + s.ID, Register: budget.Generated, Text: s.Text, Cites: []Source{source(kindSection, s.ID)}})
		}
		return parts, nil
	}
}

// TestNoContextReadsWhatItsGrantDoesNotAdmit: over random logs, every source
// a role's context read or cites (events, beliefs, sections and the events
// each section summarised) is visible to that role; and an assembler that
// cites an event it was not handed is refused.
func TestNoContextReadsWhatItsGrantDoesNotAdmit(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 99))
		store := eventlog.NewMemory(nil)
		randomLog(t, r, store)
		f := &fixture{store: &countingStore{Store: store}, beliefs: &Beliefs{}, chronicle: &Chronicle{}}
		if err := f.catchUp(ctx); err != nil {
			t.Fatal(err)
		}
		head := must(store.Head(ctx))
		sections := map[string]Section{}
		for _, s := range f.chronicle.sections() {
			sections[s.ID] = s
		}
		beliefScope := map[string]string{}
		for _, role := range roles {
			for _, b := range f.beliefs.read(func(scope string) bool { return scope == role }).held {
				beliefScope[b.ID] = b.Scope
			}
		}
		visible := func(role string, seq int64) bool {
			return must(store.Get(ctx, seq)).VisibleTo(role)
		}
		for _, role := range roles {
			c, err := Assemble(ctx, role, greedy(role), f.grant(role, head), nil)
			if err != nil {
				t.Fatalf("seed %d, role %s: %v", seed, role, err)
			}
			var all []string
			all = append(all, sourceStrings(c.Read)...)
			for _, seg := range c.Manifest.Segments {
				all = append(all, seg.Sources...)
			}
			for _, text := range all {
				kind, id, _ := strings.Cut(text, ":")
				switch kind {
				case kindEvent:
					seq := must(strconv.ParseInt(id, 10, 64))
					if !visible(role, seq) {
						t.Fatalf("seed %d: %s read or cites event %d, not visible to it", seed, role, seq)
					}
				case kindBelief:
					if beliefScope[id] != role {
						t.Fatalf("seed %d: %s read belief %s of scope %s", seed, role, id, beliefScope[id])
					}
				case kindSection:
					s := sections[id]
					if !visible(role, s.Seq) {
						t.Fatalf("seed %d: %s read section %s, not visible to it", seed, role, id)
					}
					for _, seq := range s.Summarised {
						if !visible(role, seq) {
							t.Fatalf("seed %d: %s read section %s, which summarised event %d it may not see", seed, role, id, seq)
						}
					}
				}
			}

			// An assembler that cites an event its grant did not hand out
			// is refused.
			hidden := int64(0)
			for seq := int64(1); seq <= head; seq++ {
				if !visible(role, seq) {
					hidden = seq
					break
				}
			}
			if hidden == 0 {
				continue
			}
			_, err = Assemble(ctx, role, func(ctx context.Context, g Grant) ([]Part, error) {
				return []Part{{Slot: "peek", Text: "x", Cites: []Source{eventSource(hidden)}}}, nil
			}, f.grant(role, head), nil)
			if !errors.Is(err, ErrUncitedSource) {
				t.Fatalf("seed %d: citing hidden event %d for %s: %v", seed, hidden, role, err)
			}
		}
	}
}

// TestRebuildFromSQLiteIsIdentical: dropping and rebuilding the projections
// of a SQLite log gives byte-identical descriptions and manifests.
func TestRebuildFromSQLiteIsIdentical(t *testing.T) {
	open := logtest.SQLite(t)
	rebuildIsIdentical(t, func() eventlog.Store { return must(open()) })
}

// TestRebuildFromPostgresIsIdentical: the same on a PostgreSQL log.
func TestRebuildFromPostgresIsIdentical(t *testing.T) {
	open := logtest.Postgres(t)
	rebuildIsIdentical(t, func() eventlog.Store { return must(open()) })
}

func rebuildIsIdentical(t *testing.T, open func() eventlog.Store) {
	store := open()
	randomLog(t, rand.New(rand.NewPCG(1, 2)), store)

	describeAll := func(store eventlog.Store, beliefs *Beliefs, chronicle *Chronicle) string {
		f := &fixture{store: &countingStore{Store: store}, beliefs: beliefs, chronicle: chronicle}
		head := must(store.Head(ctx))
		var out []any
		for _, role := range roles {
			c, err := Assemble(ctx, role, greedy(role), f.grant(role, head), nil)
			if err != nil {
				t.Fatal(err)
			}
			m := must(c.Manifest.Canonical())
			out = append(out, c, json.RawMessage(m))
		}
		return string(must(json.MarshalIndent(out, "", " ")))
	}

	b1, c1 := &Beliefs{}, &Chronicle{}
	if err := CatchUp(ctx, store, b1, c1); err != nil {
		t.Fatal(err)
	}
	before := describeAll(store, b1, c1)
	store.Close()

	// Reopen: the saved projections load as they were, and nothing is
	// replayed.
	store = open()
	defer store.Close()
	b2, c2 := &Beliefs{}, &Chronicle{}
	counting := &countingStore{Store: store}
	if err := CatchUp(ctx, counting, b2, c2); err != nil {
		t.Fatal(err)
	}
	if b2.upto() == 0 || c2.upto() == 0 || counting.gets.Load() != 0 {
		t.Fatalf("the projections were not saved beside their positions: %d event(s) replayed", counting.gets.Load())
	}
	if diff := cmp.Diff(before, describeAll(store, b2, c2)); diff != "" {
		t.Errorf("after reopening (-before +after):\n%s", diff)
	}

	// Drop and rebuild both by replay.
	if err := Rebuild(ctx, store, b2, c2); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, describeAll(store, b2, c2)); diff != "" {
		t.Errorf("after rebuilding (-before +after):\n%s", diff)
	}
	// And from nothing: a fresh fold over the same file, snapshots dropped.
	for _, name := range []string{"beliefs", "chronicle"} {
		store.DropProjection(ctx, name)
	}
	b3, c3 := &Beliefs{}, &Chronicle{}
	if err := CatchUp(ctx, store, b3, c3); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, describeAll(store, b3, c3)); diff != "" {
		t.Errorf("after replay from nothing (-before +after):\n%s", diff)
	}
}
