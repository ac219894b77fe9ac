package provenance

import (
	"context"
	"fmt"

	"github.com/promptloom/promptloom/eventlog"
)

// Fold is derived state: it applies the events it claims, in order, and
// nothing else. Its state can be saved beside its position and restored, or
// dropped and rebuilt by replaying the log with identical results.
type Fold interface {
	// Name names the projection in the store.
	Name() string
	// Claims reports whether the fold consumes events of this kind.
	Claims(kind string) bool
	// Apply folds one claimed event in.
	Apply(e eventlog.Event) error
	// Upto is the position the fold has read up to.
	Upto() int64
	// Snapshot encodes the state (deterministically).
	Snapshot() ([]byte, error)
	// Restore replaces the state with a snapshot taken at upto.
	Restore(upto int64, state []byte) error
	// Reset empties the state, at position 0.
	Reset()
	// Advance moves the position to upto once every event up to it was
	// offered (events the fold does not claim move it too).
	Advance(upto int64)
}

// Projector keeps folds in step with a log: it loads each fold's snapshot,
// applies the events after it, and saves state and position together.
type Projector struct {
	store eventlog.Store
	folds []Fold
}

// NewProjector returns a projector of folds over store. Call Load, then
// CatchUp.
func NewProjector(store eventlog.Store, folds ...Fold) *Projector {
	return &Projector{store: store, folds: folds}
}

// Load restores every fold from its saved projection (a fold without one
// starts empty).
func (p *Projector) Load(ctx context.Context) error {
	for _, f := range p.folds {
		saved, ok, err := p.store.LoadProjection(ctx, f.Name())
		if err != nil {
			return err
		}
		f.Reset()
		if ok {
			if err := f.Restore(saved.Upto, saved.State); err != nil {
				return fmt.Errorf("projection %s: %w", f.Name(), err)
			}
		}
	}
	return nil
}

// CatchUp applies every event up to the log's head and saves each fold.
func (p *Projector) CatchUp(ctx context.Context) error {
	head, err := p.store.Head(ctx)
	if err != nil {
		return err
	}
	return p.CatchUpTo(ctx, head)
}

// CatchUpTo applies the events up to upto and saves each fold that moved.
// A fold already past upto is left where it is.
func (p *Projector) CatchUpTo(ctx context.Context, upto int64) error {
	for _, f := range p.folds {
		if f.Upto() >= upto {
			continue
		}
		err := p.store.Scan(ctx, f.Upto()+1, upto, func(env eventlog.Envelope) error {
			if !f.Claims(env.Kind) {
				return nil
			}
			e, err := p.store.Get(ctx, env.Seq)
			if err != nil {
				return err
			}
			return f.Apply(e)
		})
		if err != nil {
			return fmt.Errorf("projection %s: %w", f.Name(), err)
		}
		f.Advance(upto)
		state, err := f.Snapshot()
		if err != nil {
			return err
		}
		if err := p.store.SaveProjection(ctx, f.Name(), eventlog.Projection{Upto: upto, State: state}); err != nil {
			return err
		}
	}
	return nil
}

// Rebuild drops a fold's projection and replays the log up to where the
// fold was.
func (p *Projector) Rebuild(ctx context.Context, name string) error {
	for _, f := range p.folds {
		if f.Name() != name {
			continue
		}
		upto := f.Upto()
		if err := p.store.DropProjection(ctx, name); err != nil {
			return err
		}
		f.Reset()
		return p.CatchUpTo(ctx, upto)
	}
	return fmt.Errorf("no projection %q", name)
}
