package provenance

import (
	"context"
	"errors"
	"testing"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/eventlog"
)

// A belief event folded mid-assembly must not reach a context that reports
// the grant's older position: every read of a BeliefSlice checks the fold,
// not only the check before the assembler runs.
func TestBeliefSliceRefusesAFoldThatMovedMidAssembly(t *testing.T) {
	f := newFixture(t)
	var readErr error
	var sawNew bool
	c, err := Assemble(ctx, "uk", func(ctx context.Context, g Grant) ([]Part, error) {
		// The assembler (or any writer) appends a belief, and the fold
		// catches up, after the grant was checked.
		must(f.store.Append(ctx, eventlog.Draft{Kind: KindBeliefHeld, Actor: "uk", Audience: []string{"uk"},
			Payload: Belief{Scope: "uk", ID: "uk-later", Text: "written after the grant"}}))
		if err := f.catchUp(ctx); err != nil {
			return nil, err
		}
		held, err := g.Beliefs.Read(ctx)
		readErr = err
		var parts []Part
		for _, b := range held {
			sawNew = sawNew || b.ID == "uk-later"
			parts = append(parts, Part{Slot: "belief:" + b.ID, Register: budget.Considered, Text: b.Text, Cites: []Source{source(kindBelief, b.ID)}})
		}
		return parts, err
	}, f.grant("uk", f.head), nil)
	if !errors.Is(readErr, ErrStaleRead) {
		t.Errorf("Beliefs after the fold moved = %v, want ErrStaleRead", readErr)
	}
	if sawNew {
		t.Error("the slice handed out a belief from after its position")
	}
	if !errors.Is(err, ErrStaleRead) {
		t.Errorf("Assemble = %v (context at %v), want ErrStaleRead", err, c)
	}
}

// A fold that moves past the grant by events it does not claim is not
// stale: the beliefs are those of the grant's position.
func TestBeliefSliceToleratesUnclaimedEventsMidAssembly(t *testing.T) {
	f := newFixture(t)
	_, err := Assemble(ctx, "uk", func(ctx context.Context, g Grant) ([]Part, error) {
		must(f.store.Append(ctx, eventlog.Draft{Kind: "offer", Actor: "uk", Payload: map[string]string{"text": "UK offers 55%"}}))
		if err := f.catchUp(ctx); err != nil {
			return nil, err
		}
		held, err := g.Beliefs.Read(ctx)
		var parts []Part
		for _, b := range held {
			parts = append(parts, Part{Slot: "belief:" + b.ID, Register: budget.Considered, Text: b.Text, Cites: []Source{source(kindBelief, b.ID)}})
		}
		return parts, err
	}, f.grant("uk", f.head), nil)
	if err != nil {
		t.Errorf("Assemble = %v, want no error", err)
	}
}
