package provenance

import (
	"context"
	"errors"
	"testing"

	"github.com/promptloom/promptloom/eventlog"
)

// A nil predicate admits nothing and is never a panic: reads that can fail
// say ErrNilPredicate, reads that cannot hand out nothing, and Assemble
// refuses the grant before the assembler runs.
func TestNilPredicates(t *testing.T) {
	f := newFixture(t)
	if _, err := NewLogSlice(f.store, f.head, nil).Events(ctx); !errors.Is(err, ErrNilPredicate) {
		t.Errorf("LogSlice.Events = %v, want ErrNilPredicate", err)
	}
	if _, err := NewBeliefSlice(f.store, f.beliefs, f.head, nil).Beliefs("uk"); !errors.Is(err, ErrNilPredicate) {
		t.Errorf("BeliefSlice.Beliefs = %v, want ErrNilPredicate", err)
	}
	evs := []eventlog.Event{{Envelope: eventlog.Envelope{Seq: 1, Kind: "offer"}}}
	if got := NewEventsSlice(f.head, evs, nil).Events(); len(got) != 0 {
		t.Errorf("EventsSlice.Events handed out %v", got)
	}
	if got := NewChronicleSlice(f.store, f.chronicle, f.head, nil).Sections(); len(got) != 0 {
		t.Errorf("ChronicleSlice.Sections handed out %v", got)
	}

	ran := false
	asm := func(context.Context, Grant) ([]Part, error) { ran = true; return nil, nil }
	for name, g := range map[string]Grant{
		"Log":       {Log: NewLogSlice(f.store, f.head, nil)},
		"Beliefs":   {Beliefs: NewBeliefSlice(f.store, f.beliefs, f.head, nil)},
		"Chronicle": {Chronicle: NewChronicleSlice(f.store, f.chronicle, f.head, nil)},
	} {
		full := f.grant("uk", f.head)
		switch name {
		case "Log":
			full.Log = g.Log
		case "Beliefs":
			full.Beliefs = g.Beliefs
		case "Chronicle":
			full.Chronicle = g.Chronicle
		}
		if _, err := Assemble(ctx, "uk", asm, full, nil); !errors.Is(err, ErrNilPredicate) {
			t.Errorf("Assemble with a nil %s predicate = %v, want ErrNilPredicate", name, err)
		}
	}
	if ran {
		t.Error("the assembler ran on a grant with a nil predicate")
	}

	// AdmitAll and AllScopes admit everything.
	all := Grant{
		Log:       NewLogSlice(f.store, f.head, AdmitAll),
		Beliefs:   NewBeliefSlice(f.store, f.beliefs, f.head, AllScopes),
		Chronicle: NewChronicleSlice(f.store, f.chronicle, f.head, AdmitAll),
		Brief:     NewGiven("brief", f.head, "x"),
	}
	if evs, err := all.Log.Events(ctx, "remark"); err != nil || len(evs) != 1 {
		t.Errorf("AdmitAll read %d remark(s) (%v), want the private one", len(evs), err)
	}
	if held, err := all.Beliefs.Beliefs("eu"); err != nil || len(held) != 1 {
		t.Errorf("AllScopes read %d EU belief(s) (%v), want 1", len(held), err)
	}
}
