package provenance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/internal/testkit/storetest"

	"github.com/google/go-cmp/cmp"
)

var ctx = context.Background()

// countingStore counts payload reads, to prove what a slice never decoded.
type countingStore struct {
	eventlog.Store
	gets atomic.Int64
	got  []int64
}

func (c *countingStore) Get(ctx context.Context, seq int64) (eventlog.Event, error) {
	c.gets.Add(1)
	c.got = append(c.got, seq)
	return c.Store.Get(ctx, seq)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func publicOr(role string) func(eventlog.Envelope) bool {
	return func(e eventlog.Envelope) bool { return e.VisibleTo(role) }
}

// fixture is a small negotiation log: public offers, a remark only the EU
// hears, beliefs of both sides and a closed section.
type fixture struct {
	store     *countingStore
	beliefs   *Beliefs
	chronicle *Chronicle
	head      int64
	// logKinds are the kinds of event a grant's log slice admits (nil:
	// every kind).
	logKinds []string
}

// catchUp brings the fixture's folds up to the log's head.
func (f *fixture) catchUp(ctx context.Context) error {
	return CatchUp(ctx, f.store, f.beliefs, f.chronicle)
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	store := &countingStore{Store: eventlog.NewMemory(&eventlog.Options{Clock: storetest.Clock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))})}
	f := &fixture{store: store, beliefs: &Beliefs{}, chronicle: &Chronicle{}, logKinds: []string{"offer", "remark"}}
	must(store.Append(ctx,
		eventlog.Draft{Kind: "offer", Actor: "uk", Payload: map[string]string{"text": "UK offers 60%"}},
		eventlog.Draft{Kind: "remark", Actor: "uk", Audience: []string{"eu"}, Payload: map[string]string{"text": "we could live with 50%"}},
		eventlog.Draft{Kind: "offer", Actor: "eu", Payload: map[string]string{"text": "EU offers 40%"}},
		eventlog.Draft{Kind: KindBeliefHeld, Actor: "uk", Audience: []string{"uk"}, Payload: Belief{Scope: "uk", ID: "uk-floor", Text: "our floor is 55%"}},
		eventlog.Draft{Kind: KindBeliefHeld, Actor: "eu", Audience: []string{"eu"}, Payload: Belief{Scope: "eu", ID: "eu-read", Text: "the UK will settle near 50%"}},
	))
	must(CloseSection(ctx, store, "round-1", 1, 5, nil, func(_ context.Context, evs []eventlog.Event) (string, error) {
		var kinds []string
		for _, e := range evs {
			kinds = append(kinds, fmt.Sprintf("%d:%s", e.Seq, e.Kind))
		}
		return "Round 1 saw " + strings.Join(kinds, ", "), nil
	}))
	if err := f.catchUp(ctx); err != nil {
		t.Fatal(err)
	}
	f.head = must(store.Head(ctx))
	store.gets.Store(0)
	store.got = nil
	return f
}

// Grant is the grant of the tests: one slice of each kind.
type Grant struct {
	Log       *Slice[eventlog.Event]
	Beliefs   *BeliefSlice
	Chronicle *Slice[Section]
	Brief     *Given[string]
}

func (f *fixture) grant(role string, upto int64) Grant {
	return Grant{
		Log: OpenLog(f.store, upto, func(e eventlog.Envelope) bool {
			return e.VisibleTo(role) && (f.logKinds == nil || slices.Contains(f.logKinds, e.Kind))
		}),
		Beliefs:   OpenBeliefs(f.store, f.beliefs, upto, func(scope string) bool { return scope == role }),
		Chronicle: OpenChronicle(f.store, f.chronicle, upto, publicOr(role)),
		Brief:     NewGiven("brief", upto, "You negotiate for "+role+"."),
	}
}

// assembler reads everything its grant offers and cites it honestly.
func assembler(role string) func(context.Context, Grant) ([]Part, error) {
	return func(ctx context.Context, g Grant) ([]Part, error) {
		parts := []Part{{Slot: "brief", Register: budget.Binding, Text: g.Brief.Value(), Cites: []Source{source(kindGiven, "brief")}}}
		evs, err := g.Log.Read(ctx)
		if err != nil {
			return nil, err
		}
		var lines []string
		var cites []Source
		for _, e := range evs {
			var p map[string]string
			e.Decode(&p)
			lines = append(lines, e.Actor+": "+p["text"])
			cites = append(cites, eventSource(e.Seq))
		}
		parts = append(parts, Part{Slot: "record", Register: budget.Considered, Rank: 2, Text: strings.Join(lines, "\n"), Cites: cites})
		held, err := g.Beliefs.Read(ctx)
		if err != nil {
			return nil, err
		}
		for _, b := range held {
			parts = append(parts, Part{Slot: "belief:" + b.ID, Register: budget.Considered, Rank: 1, Text: b.Text, Cites: []Source{source(kindBelief, b.ID)}})
		}
		sections, err := g.Chronicle.Read(ctx)
		if err != nil {
			return nil, err
		}
		for _, s := range sections {
			parts = append(parts, Part{Slot: "summary:" + s.ID, Register: budget.Generated, Text: s.Text, Cites: []Source{source(kindSection, s.ID)}})
		}
		parts = append(parts, Part{Slot: "style", Register: budget.Craft, Text: "Be brief and courteous."})
		return parts, nil
	}
}

func TestAssembleDescribesAndCites(t *testing.T) {
	f := newFixture(t)
	c, err := Assemble(ctx, "uk", assembler("uk"), f.grant("uk", f.head), nil)
	if err != nil {
		t.Fatal(err)
	}
	wantRead := []Source{"event:1", "event:3", "belief:uk-floor", "section:round-1", "given:brief"}
	if diff := cmp.Diff(wantRead, c.Read); diff != "" {
		t.Errorf("read (-want +got):\n%s", diff)
	}
	// The EU-only remark was never fetched for the UK, let alone decoded.
	for _, seq := range f.store.got {
		if seq == 2 {
			t.Error("the UK's log slice fetched the EU-only remark")
		}
	}
	var slots []string
	for _, s := range c.Manifest.Segments {
		slots = append(slots, s.ID+"|"+s.Register+"|"+strings.Join(s.Sources, ","))
	}
	// One heading per register, on the register's first part.
	if strings.Count(c.Prompt, "\n## ") != 3 || !strings.HasPrefix(c.Prompt, "## Rules (binding)\n") {
		t.Errorf("headings in %q", c.Prompt)
	}
	// by register, highest rank first within each
	want := []string{
		"brief|binding|given:brief",
		"record|considered|event:1,event:3", "belief:uk-floor|considered|belief:uk-floor",
		"style|craft|",
		"summary:round-1|generated|section:round-1",
	}
	if diff := cmp.Diff(want, slots); diff != "" {
		t.Errorf("manifest segments (-want +got):\n%s", diff)
	}
	if !strings.Contains(c.Prompt, "advisory, not canon") {
		t.Error("the generated heading does not say the prose is advisory")
	}
	if strings.Contains(c.Prompt, "50%") && !strings.Contains(c.Prompt, "Round 1") {
		t.Error("the UK prompt holds the EU-only remark")
	}
	// The public section summarised public events only.
	if strings.Contains(c.Prompt, "2:remark") {
		t.Error("the chronicle summarised the private remark into a public section")
	}
}

func TestErrors(t *testing.T) {
	f := newFixture(t)
	uk := assembler("uk")
	type StoreGrant struct {
		Log   *Slice[eventlog.Event]
		Store eventlog.Store
	}
	tests := []struct {
		name string
		run  func() error
		want error
	}{
		{"grant holding a store", func() error {
			_, err := Assemble(ctx, "uk", func(context.Context, StoreGrant) ([]Part, error) { return nil, nil },
				StoreGrant{Log: OpenLog(f.store, f.head, publicOr("uk")), Store: f.store}, nil)
			return err
		}, ErrInvalidGrant},
		{"slices at different positions", func() error {
			g := f.grant("uk", f.head)
			g.Brief = NewGiven("brief", f.head-1, "x")
			_, err := Assemble(ctx, "uk", uk, g, nil)
			return err
		}, ErrInvalidGrant},
		{"grant used twice", func() error {
			g := f.grant("uk", f.head)
			if _, err := Assemble(ctx, "uk", uk, g, nil); err != nil {
				return err
			}
			_, err := Assemble(ctx, "uk", uk, g, nil)
			return err
		}, ErrInvalidGrant},
		{"belief fold behind the slice", func() error {
			must(f.store.Append(ctx, eventlog.Draft{Kind: KindBeliefHeld, Payload: Belief{Scope: "uk", Text: "new"}}))
			head := must(f.store.Head(ctx))
			_, err := Assemble(ctx, "uk", uk, f.grant("uk", head), nil)
			return err
		}, ErrStaleRead},
		{"belief fold ahead of the slice", func() error {
			_, err := Assemble(ctx, "uk", uk, f.grant("uk", 3), nil) // the fold holds beliefs from events 4 and 5
			return err
		}, ErrStaleRead},
		{"part citing what was not handed out", func() error {
			_, err := Assemble(ctx, "uk", func(ctx context.Context, g Grant) ([]Part, error) {
				return []Part{{Slot: "leak", Text: "we could live with 50%", Cites: []Source{eventSource(2)}}}, nil
			}, f.grant("uk", f.head), nil)
			return err
		}, ErrUncitedSource},
		{"chronicle prose not labelled generated", func() error {
			_, err := Assemble(ctx, "uk", func(ctx context.Context, g Grant) ([]Part, error) {
				s := must(g.Chronicle.Read(ctx))[0]
				return []Part{{Slot: "summary", Register: budget.Considered, Text: s.Text, Cites: []Source{source(kindSection, s.ID)}}}, nil
			}, f.grant("uk", f.head), nil)
			return err
		}, ErrInvalidPart},
		{"chronicle prose read but cited by nothing", func() error {
			_, err := Assemble(ctx, "uk", func(ctx context.Context, g Grant) ([]Part, error) {
				s := must(g.Chronicle.Read(ctx))[0]
				return []Part{{Slot: "laundered", Register: budget.Binding, Text: s.Text}}, nil
			}, f.grant("uk", f.head), nil)
			return err
		}, ErrInvalidPart},
		{"two parts in one slot", func() error {
			_, err := Assemble(ctx, "uk", func(ctx context.Context, g Grant) ([]Part, error) {
				return []Part{{Slot: "a", Text: "x"}, {Slot: "a", Text: "y"}}, nil
			}, f.grant("uk", f.head), nil)
			return err
		}, ErrInvalidPart},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.run(); !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
		})
	}
}

// A slice hands out only what its predicate admits, at or before its
// position; a given value hands out itself and the events it cites.
func TestSlicesHandOutOnlyWhatTheyAdmit(t *testing.T) {
	f := newFixture(t)
	log := OpenLog(f.store, 2, publicOr("uk"))
	got := must(log.Read(ctx))
	if len(got) != 1 || got[0].Seq != 1 {
		t.Errorf("events at 2 for the UK: %+v (want only event 1: 2 is the EU's, 3 is after the position)", got)
	}
	beliefs := f.grant("uk", f.head).Beliefs
	for _, b := range must(beliefs.Read(ctx)) {
		if b.Scope != "uk" {
			t.Errorf("the UK's belief slice handed out %+v", b)
		}
	}
	if diff := cmp.Diff([]Source{source(kindBelief, "uk-floor")}, beliefs.HandedOut()); diff != "" {
		t.Errorf("beliefs handed out (-want +got):\n%s", diff)
	}
	g := NewGiven("task", 2, "settle", 1)
	g.Value()
	if diff := cmp.Diff([]Source{source(kindGiven, "task"), eventSource(1)}, g.HandedOut()); diff != "" {
		t.Errorf("given handed out:\n%s", diff)
	}
}

func TestAssembleUnderBudgetShedsParts(t *testing.T) {
	f := newFixture(t)
	full, err := Assemble(ctx, "uk", assembler("uk"), f.grant("uk", f.head), nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &budget.Budget{Counter: budget.Bytes(), Total: len(full.Reduction.System) - 1}
	c, err := Assemble(ctx, "uk", assembler("uk"), f.grant("uk", f.head), b)
	if err != nil {
		t.Fatal(err)
	}
	// considered goes first: of the two considered parts, the lower rank.
	if diff := cmp.Diff([]string{"belief:uk-floor"}, c.Shed); diff != "" {
		t.Errorf("shed (-want +got):\n%s", diff)
	}
	for _, s := range c.Manifest.Segments {
		if s.Register == "binding" && !s.Included {
			t.Errorf("binding %s was shed", s.ID)
		}
		if s.Tokens == nil {
			t.Errorf("%s has no tokens under a budget", s.ID)
		}
	}
	tiny := &budget.Budget{Counter: budget.Bytes(), Total: 5}
	if _, err := Assemble(ctx, "uk", assembler("uk"), f.grant("uk", f.head), tiny); !errors.Is(err, budget.ErrExceeded) {
		t.Errorf("a budget the rules alone exceed: %v", err)
	}
}
