package provenance

import (
	"context"
	"fmt"

	"github.com/promptloom/promptloom/eventlog"
)

// Fold is derived state kept in step with the log: a *Beliefs or a
// *Chronicle. It applies the events it claims, in order, and nothing else,
// so its state can be saved beside its position and restored, or dropped and
// rebuilt by replaying the log with identical results.
type Fold interface {
	// name names the projection in the store.
	name() string
	// claims reports whether the fold consumes events of this kind.
	claims(kind string) bool
	// apply folds one claimed event in.
	apply(e eventlog.Event) error
	// upto is the position the fold has read up to.
	upto() int64
	// snapshot encodes the state (deterministically).
	snapshot() ([]byte, error)
	// restore replaces the state with a snapshot taken at upto.
	restore(upto int64, state []byte) error
	// reset empties the state, at position 0.
	reset()
	// advance moves the position to upto once every event up to it was
	// offered (events the fold does not claim move it too).
	advance(upto int64)
}

// CatchUp brings folds up to the log's head and saves each beside its
// position. A fold that has read nothing first restores its saved
// projection, so a process that restarts replays only what came after it.
func CatchUp(ctx context.Context, store eventlog.Store, folds ...Fold) error {
	head, err := store.Head(ctx)
	if err != nil {
		return err
	}
	for _, f := range folds {
		if f.upto() != 0 {
			continue
		}
		saved, ok, err := store.LoadProjection(ctx, f.name())
		if err != nil {
			return err
		}
		// A projection saved past the head describes positions this log
		// does not have (yet): the fold is replayed from the start instead.
		if ok && saved.Upto <= head {
			if err := f.restore(saved.Upto, saved.State); err != nil {
				return fmt.Errorf("projection %s: %w", f.name(), err)
			}
		}
	}
	return catchUpTo(ctx, store, head, folds)
}

// Rebuild drops each fold's saved projection and replays the log up to
// where the fold was (or its head, if the fold was past it): the state is
// derived, so the result is the same.
func Rebuild(ctx context.Context, store eventlog.Store, folds ...Fold) error {
	head, err := store.Head(ctx)
	if err != nil {
		return err
	}
	for _, f := range folds {
		upto := min(f.upto(), head)
		if err := store.DropProjection(ctx, f.name()); err != nil {
			return err
		}
		f.reset()
		if err := catchUpTo(ctx, store, upto, []Fold{f}); err != nil {
			return err
		}
	}
	return nil
}

// catchUpTo applies the events up to upto and saves each fold that moved.
// A fold already past upto is left where it is. upto is at most the head:
// a fold saved at a position past what it folded would never fold the
// events appended later at those positions.
func catchUpTo(ctx context.Context, store eventlog.Store, upto int64, folds []Fold) error {
	for _, f := range folds {
		if f.upto() >= upto {
			continue
		}
		err := store.Scan(ctx, f.upto()+1, upto, func(env eventlog.Envelope) error {
			if !f.claims(env.Kind) {
				return nil
			}
			e, err := store.Get(ctx, env.Seq)
			if err != nil {
				return err
			}
			return f.apply(e)
		})
		if err != nil {
			return fmt.Errorf("projection %s: %w", f.name(), err)
		}
		f.advance(upto)
		state, err := f.snapshot()
		if err != nil {
			return err
		}
		if err := store.SaveProjection(ctx, f.name(), eventlog.Projection{Upto: upto, State: state}); err != nil {
			return err
		}
	}
	return nil
}
