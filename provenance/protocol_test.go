package provenance

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/eventlog"

	"github.com/google/go-cmp/cmp"
)

// docReader is an application's own reader: not one of the library's
// slices, only the Reader protocol.
type docReader struct {
	upto   int64
	handed []Source
}

func (d *docReader) Upto() int64         { return d.upto }
func (d *docReader) HandedOut() []Source { return d.handed }

func (d *docReader) read(name string) string {
	d.handed = append(d.handed, Source("doc:"+name))
	return "the contents of " + name
}

// An application's own reader takes part in a grant: what it handed out is
// in the read set and may be cited; a part citing what it did not hand out
// is refused, as for the library's slices.
func TestOwnReaderTakesPart(t *testing.T) {
	f := newFixture(t)
	type grant struct {
		Docs *docReader
		Log  *Slice[eventlog.Event]
	}
	asm := func(ctx context.Context, g grant) ([]Part, error) {
		text := g.Docs.read("readme")
		if _, err := g.Log.Read(ctx); err != nil {
			return nil, err
		}
		return []Part{{Slot: "docs", Register: budget.Considered, Text: text, Cites: []Source{"doc:readme"}}}, nil
	}
	offers := func(e eventlog.Envelope) bool { return e.Kind == "offer" }
	c, err := Assemble(ctx, "uk", asm, grant{&docReader{upto: f.head}, OpenLog(f.store, f.head, offers)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Source{"doc:readme", "event:1", "event:3"}, c.Read); diff != "" {
		t.Errorf("read set (-want +got):\n%s", diff)
	}
	if !strings.Contains(c.Prompt, "the contents of readme") {
		t.Errorf("prompt lacks the reader's part: %q", c.Prompt)
	}

	lying := func(ctx context.Context, g grant) ([]Part, error) {
		return []Part{{Slot: "docs", Register: budget.Considered, Text: "x", Cites: []Source{"doc:secret"}}}, nil
	}
	if _, err := Assemble(ctx, "uk", lying, grant{&docReader{upto: f.head}, OpenLog(f.store, f.head, All)}, nil); !errors.Is(err, ErrUncitedSource) {
		t.Errorf("a citation the reader never handed out: %v, want ErrUncitedSource", err)
	}
	if _, err := Assemble(ctx, "uk", asm, grant{&docReader{upto: f.head - 1}, OpenLog(f.store, f.head, All)}, nil); !errors.Is(err, ErrInvalidGrant) {
		t.Errorf("a reader at another position: %v, want ErrInvalidGrant", err)
	}
	used := &docReader{upto: f.head, handed: []Source{"doc:old"}}
	if _, err := Assemble(ctx, "uk", asm, grant{used, OpenLog(f.store, f.head, All)}, nil); !errors.Is(err, ErrInvalidGrant) {
		t.Errorf("a reader used before: %v, want ErrInvalidGrant", err)
	}
}

// OpenEvents hands out the run it was given, filtered by admit and cut at
// its position, and nothing it was not given.
func TestOpenEvents(t *testing.T) {
	f := newFixture(t)
	var run []eventlog.Event
	for _, seq := range []int64{1, 2, 3} {
		run = append(run, must(f.store.Get(ctx, seq)))
	}
	s := OpenEvents(run, 2, publicOr("uk"))
	got, err := s.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	for _, e := range got {
		seqs = append(seqs, e.Seq)
	}
	// Event 2 is the EU's alone, event 3 lies past the slice's position.
	if diff := cmp.Diff([]int64{1}, seqs); diff != "" {
		t.Errorf("events handed out (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Source{"event:1"}, s.HandedOut()); diff != "" {
		t.Errorf("handed out (-want +got):\n%s", diff)
	}
	if _, err := OpenEvents(run, 2, nil).Read(ctx); !errors.Is(err, ErrInvalidGrant) {
		t.Errorf("a nil predicate: %v, want ErrInvalidGrant", err)
	}
}

// A belief slice asked for a scope its predicate does not accept refuses
// with ErrNotGranted and hands out nothing; a granted scope reads as Read
// does for it.
func TestBeliefScopeNotGranted(t *testing.T) {
	f := newFixture(t)
	s := OpenBeliefs(f.store, f.beliefs, f.head, func(scope string) bool { return scope == "uk" })
	if _, err := s.Scope(ctx, "eu"); !errors.Is(err, ErrNotGranted) {
		t.Fatalf("Scope(eu) = %v, want ErrNotGranted", err)
	}
	if h := s.HandedOut(); len(h) != 0 {
		t.Fatalf("a refused scope handed out %v", h)
	}
	held, err := s.Scope(ctx, "uk")
	if err != nil {
		t.Fatal(err)
	}
	if len(held) != 1 || held[0].ID != "uk-floor" {
		t.Fatalf("Scope(uk) = %v", held)
	}
	if diff := cmp.Diff([]Source{"belief:uk-floor"}, s.HandedOut()); diff != "" {
		t.Errorf("handed out (-want +got):\n%s", diff)
	}
	if _, err := OpenBeliefs(f.store, f.beliefs, f.head, nil).Scope(ctx, "uk"); !errors.Is(err, ErrInvalidGrant) {
		t.Errorf("a nil predicate: %v, want ErrInvalidGrant", err)
	}
}

// A grant of all five library kinds (log, events, beliefs, chronicle,
// given) is accepted, and the read set collects what each handed out, in
// the grant's field order.
func TestGrantOfEveryKind(t *testing.T) {
	f := newFixture(t)
	type grant struct {
		Log       *Slice[eventlog.Event]
		Events    *Slice[eventlog.Event]
		Beliefs   *BeliefSlice
		Chronicle *Slice[Section]
		Brief     *Given[string]
	}
	round := []eventlog.Event{must(f.store.Get(ctx, 3))}
	g := grant{
		Log:       OpenLog(f.store, f.head, func(e eventlog.Envelope) bool { return e.Seq == 1 }),
		Events:    OpenEvents(round, f.head, All),
		Beliefs:   OpenBeliefs(f.store, f.beliefs, f.head, func(scope string) bool { return scope == "uk" }),
		Chronicle: OpenChronicle(f.store, f.chronicle, f.head, publicOr("uk")),
		Brief:     NewGiven("brief", f.head, "Negotiate.", 2),
	}
	asm := func(ctx context.Context, g grant) ([]Part, error) {
		var parts []Part
		brief := g.Brief.Value()
		parts = append(parts, Part{Slot: "brief", Register: budget.Binding, Text: brief, Cites: []Source{g.Brief.Cite()}})
		for _, read := range []func(context.Context) ([]eventlog.Event, error){g.Log.Read, g.Events.Read} {
			evs, err := read(ctx)
			if err != nil {
				return nil, err
			}
			for _, e := range evs {
				parts = append(parts, Part{Slot: e.Kind + ":" + string(eventSource(e.Seq)), Register: budget.Considered, Text: string(e.Payload), Cites: []Source{eventSource(e.Seq)}})
			}
		}
		held, err := g.Beliefs.Scope(ctx, "uk")
		if err != nil {
			return nil, err
		}
		for _, b := range held {
			parts = append(parts, Part{Slot: b.ID, Register: budget.Considered, Text: b.Text, Cites: []Source{g.Beliefs.Cite(b)}})
		}
		secs, err := g.Chronicle.Read(ctx)
		if err != nil {
			return nil, err
		}
		for _, s := range secs {
			parts = append(parts, Part{Slot: s.ID, Register: budget.Generated, Text: s.Text, Cites: []Source{g.Chronicle.Cite(s)}})
		}
		return parts, nil
	}
	c, err := Assemble(ctx, "uk", asm, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Source{"event:1", "event:3", "belief:uk-floor", "section:round-1", "given:brief", "event:2"}
	if diff := cmp.Diff(want, c.Read); diff != "" {
		t.Errorf("read set (-want +got):\n%s", diff)
	}
}
