package provenance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
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
				Payload: BeliefPayload{Scope: scope, Text: "belief " + strconv.Itoa(r.IntN(100))}}))
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
func greedy(role string) Assembler[Grant] {
	return func(ctx context.Context, g Grant) ([]Part, error) {
		var parts []Part
		evs, err := g.Log.Events(ctx)
		if err != nil {
			return nil, err
		}
		for _, e := range evs {
			parts = append(parts, Part{Slot: "e" + strconv.FormatInt(e.Seq, 10), Register: budget.Considered, Text: string(e.Payload), Cites: []Source{EventSource(e.Seq)}})
		}
		held, err := g.Beliefs.Beliefs(role)
		if err != nil {
			return nil, err
		}
		for _, b := range held {
			parts = append(parts, Part{Slot: "b:" + b.ID, Register: budget.Considered, Text: b.Text, Cites: []Source{BeliefSource(b.ID)}})
		}
		for _, s := range g.Chronicle.Sections() {
			parts = append(parts, Part{Slot: "s:" + s.ID, Register: budget.Generated, Text: s.Text, Cites: []Source{SectionSource(s.ID)}})
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
		f := &fixture{store: &countingStore{Store: store}, beliefs: NewBeliefs(), chronicle: NewChronicle()}
		f.proj = NewProjector(store, f.beliefs, f.chronicle)
		if err := f.proj.CatchUp(ctx); err != nil {
			t.Fatal(err)
		}
		head := must(store.Head(ctx))
		sections := map[string]Section{}
		for _, s := range f.chronicle.Sections() {
			sections[s.ID] = s
		}
		beliefScope := map[string]string{}
		for _, role := range roles {
			for _, b := range f.beliefs.In(role) {
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
				src := must(ParseSource(text))
				switch src.Kind {
				case KindEvent:
					seq := must(strconv.ParseInt(src.ID, 10, 64))
					if !visible(role, seq) {
						t.Fatalf("seed %d: %s read or cites event %d, not visible to it", seed, role, seq)
					}
				case KindBelief:
					if beliefScope[src.ID] != role {
						t.Fatalf("seed %d: %s read belief %s of scope %s", seed, role, src.ID, beliefScope[src.ID])
					}
				case KindSection:
					s := sections[src.ID]
					if !visible(role, s.Seq) {
						t.Fatalf("seed %d: %s read section %s, not visible to it", seed, role, src.ID)
					}
					for _, seq := range s.Summarised {
						if !visible(role, seq) {
							t.Fatalf("seed %d: %s read section %s, which summarised event %d it may not see", seed, role, src.ID, seq)
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
				return []Part{{Slot: "peek", Text: "x", Cites: []Source{EventSource(hidden)}}}, nil
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
			out = append(out, c.Describe(), json.RawMessage(m))
		}
		return string(must(json.MarshalIndent(out, "", " ")))
	}

	b1, c1 := NewBeliefs(), NewChronicle()
	p1 := NewProjector(store, b1, c1)
	if err := p1.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p1.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	before := describeAll(store, b1, c1)
	store.Close()

	// Reopen: the saved projections load as they were.
	store = open()
	defer store.Close()
	b2, c2 := NewBeliefs(), NewChronicle()
	p2 := NewProjector(store, b2, c2)
	if err := p2.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if b2.Upto() == 0 || c2.Upto() == 0 {
		t.Fatal("the projections were not saved beside their positions")
	}
	if diff := cmp.Diff(before, describeAll(store, b2, c2)); diff != "" {
		t.Errorf("after reopening (-before +after):\n%s", diff)
	}

	// Drop and rebuild both by replay.
	for _, name := range []string{"beliefs", "chronicle"} {
		if err := p2.Rebuild(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(before, describeAll(store, b2, c2)); diff != "" {
		t.Errorf("after rebuilding (-before +after):\n%s", diff)
	}
	// And from nothing: a fresh fold over the same file, snapshots dropped.
	for _, name := range []string{"beliefs", "chronicle"} {
		store.DropProjection(ctx, name)
	}
	b3, c3 := NewBeliefs(), NewChronicle()
	p3 := NewProjector(store, b3, c3)
	if err := p3.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p3.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, describeAll(store, b3, c3)); diff != "" {
		t.Errorf("after replay from nothing (-before +after):\n%s", diff)
	}
}
