package provenance

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/promptloom/promptloom/eventlog"
)

// Slice is a read-only view of the log, or of a fold, at one log position
// that records everything it hands out: OpenLog's events, OpenBeliefs'
// beliefs, OpenChronicle's sections. A grant is a struct of slices (and
// Given values); Assemble checks what parts cite against what they handed
// out.
//
// A slice is opened with a predicate, and a nil predicate admits nothing:
// a grant is a boundary, and a forgotten predicate must not open it.
// Assemble refuses such a grant before the assembler runs, and Read on its
// own returns ErrInvalidGrant. Pass All to admit everything.
type Slice[T any] struct {
	recorder
	// what names the slice's kind in errors.
	what string
	// read hands out what the slice admits.
	read func(ctx context.Context) ([]T, error)
	// cite names a value the slice hands out.
	cite func(T) Source
	// open is false when the slice was opened with a nil predicate.
	open bool
	// store and fold, for a slice of a fold, tell whether the fold is at
	// the slice's position.
	store eventlog.Store
	fold  Fold
}

// Read returns everything the slice admits, in order, and records it as
// handed out.
func (s *Slice[T]) Read(ctx context.Context) ([]T, error) {
	if !s.open {
		return nil, fmt.Errorf("%w: the %s slice has a nil predicate; pass All to admit everything", ErrInvalidGrant, s.what)
	}
	return s.read(ctx)
}

// Cite names v as a source a part may cite: the event, belief or section
// the slice handed out.
func (s *Slice[T]) Cite(v T) Source { return s.cite(v) }

// All is the predicate that admits everything: every event (OpenLog,
// OpenChronicle) or every belief scope (OpenBeliefs).
func All[T any](T) bool { return true }

// OpenLog opens the log at upto for the events admit accepts, in log order.
// The predicate sees only the envelope: an event it rejects is never
// fetched or decoded.
func OpenLog(store eventlog.Store, upto int64, admit func(eventlog.Envelope) bool) *Slice[eventlog.Event] {
	s := &Slice[eventlog.Event]{recorder: recorder{at: upto}, what: "log", open: admit != nil,
		cite: func(e eventlog.Event) Source { return eventSource(e.Seq) }}
	s.read = func(ctx context.Context) ([]eventlog.Event, error) {
		var out []eventlog.Event
		err := store.Scan(ctx, 1, upto, func(env eventlog.Envelope) error {
			if !admit(env) {
				return nil
			}
			e, err := store.Get(ctx, env.Seq)
			if err != nil {
				return err
			}
			out = append(out, e)
			s.hand(s.cite(e))
			return nil
		})
		return out, err
	}
	return s
}

// OpenEvents opens a fixed run of events at upto, for a reader handed its
// range rather than the log (a summariser given one round's events): Read
// returns those admit accepts, at or before upto, in the order given. The
// events are the caller's to choose; the slice vouches only that nothing
// else was handed out.
func OpenEvents(events []eventlog.Event, upto int64, admit func(eventlog.Envelope) bool) *Slice[eventlog.Event] {
	s := &Slice[eventlog.Event]{recorder: recorder{at: upto}, what: "events", open: admit != nil,
		cite: func(e eventlog.Event) Source { return eventSource(e.Seq) }}
	run := slices.Clone(events)
	s.read = func(context.Context) ([]eventlog.Event, error) {
		var out []eventlog.Event
		for _, e := range run {
			if e.Seq <= upto && admit(e.Envelope) {
				out = append(out, e)
				s.hand(s.cite(e))
			}
		}
		return out, nil
	}
	return s
}

// BeliefSlice is a Slice of the Beliefs fold that can also be asked for one
// scope: Scope refuses a scope its predicate does not grant with
// ErrNotGranted, where Read hands out every granted scope.
type BeliefSlice struct {
	*Slice[Belief]
	scope func(ctx context.Context, scope string) ([]Belief, error)
}

// Scope returns the beliefs held in one scope as they stood at the slice's
// position, and records them as handed out. A scope the slice's predicate
// does not accept is ErrNotGranted, handing out nothing.
func (s *BeliefSlice) Scope(ctx context.Context, scope string) ([]Belief, error) {
	if !s.open {
		return nil, fmt.Errorf("%w: the %s slice has a nil predicate; pass All to admit everything", ErrInvalidGrant, s.what)
	}
	return s.scope(ctx, scope)
}

// OpenBeliefs opens the Beliefs fold at upto for the scopes visible
// accepts: Read returns their beliefs as they stood at that position
// (scopes in order, each in the order it was folded), Scope one of them.
// The store is used only to check that the fold is at that position. Every
// read checks the fold: once it has applied a belief event past the slice's
// position (an assembler, or another writer, appended one and the fold
// caught up), the beliefs no longer describe that position and the read is
// ErrStaleRead, handing out nothing, so a context never reports one
// position with beliefs from after it.
func OpenBeliefs(store eventlog.Store, beliefs *Beliefs, upto int64, visible func(scope string) bool) *BeliefSlice {
	s := &Slice[Belief]{recorder: recorder{at: upto}, what: "beliefs", open: visible != nil, store: store, fold: beliefs,
		cite: func(b Belief) Source { return source(kindBelief, b.ID) }}
	read := func(ctx context.Context, visible func(string) bool) ([]Belief, error) {
		at := beliefs.read(visible)
		switch {
		case at.last > upto:
			return nil, fmt.Errorf("%w: projection %s is at %d, ahead of the slice at %d, and claims event %d (%s)",
				ErrStaleRead, beliefs.name(), at.upto, upto, at.last, at.lastKind)
		case at.upto < upto || at.upto > upto && at.restored > upto:
			// What the fold applied is not all known (it is behind, or was
			// restored past the slice): ask the log.
			if err := freshBetween(ctx, store, beliefs, at.upto, upto); err != nil {
				return nil, err
			}
		}
		for _, b := range at.held {
			s.hand(s.cite(b))
		}
		return at.held, nil
	}
	s.read = func(ctx context.Context) ([]Belief, error) { return read(ctx, visible) }
	return &BeliefSlice{Slice: s, scope: func(ctx context.Context, scope string) ([]Belief, error) {
		if !visible(scope) {
			return nil, fmt.Errorf("%w: scope %q is not in the beliefs slice's grant", ErrNotGranted, scope)
		}
		return read(ctx, func(s string) bool { return s == scope })
	}}
}

// OpenChronicle opens the Chronicle fold at upto: Read returns the sections
// closed at or before that position whose envelope admit accepts, in log
// order.
func OpenChronicle(store eventlog.Store, chronicle *Chronicle, upto int64, admit func(eventlog.Envelope) bool) *Slice[Section] {
	s := &Slice[Section]{recorder: recorder{at: upto}, what: "chronicle", open: admit != nil, store: store, fold: chronicle,
		cite: func(sec Section) Source { return source(kindSection, sec.ID) }}
	s.read = func(context.Context) ([]Section, error) {
		var out []Section
		for _, sec := range chronicle.sections() {
			env := eventlog.Envelope{Seq: sec.Seq, Kind: kindSectionClosed, Actor: "chronicle", Audience: sec.Audience}
			if sec.To <= upto && sec.Seq <= upto && admit(env) {
				out = append(out, sec)
				s.hand(s.cite(sec))
			}
		}
		return out, nil
	}
	return s
}

// Given is a value the caller hands to the assembler through its grant (a
// brief, a task), optionally citing the events it came from.
type Given[T any] struct {
	recorder
	name  string
	value T
	cites []int64
}

// NewGiven returns a given value named name, at upto.
func NewGiven[T any](name string, upto int64, value T, cites ...int64) *Given[T] {
	return &Given[T]{recorder: recorder{at: upto}, name: name, value: value, cites: cites}
}

// Value hands out the value: its own source, then the events it cites.
func (g *Given[T]) Value() T {
	g.hand(g.Cite())
	for _, seq := range g.cites {
		g.hand(eventSource(seq))
	}
	return g.value
}

// Cite names the value as a source a part may cite. (A part citing one
// of the events the value cites names it as Source("event:N").)
func (g *Given[T]) Cite() Source { return source(kindGiven, g.name) }

// Reader is the protocol a grant's every field satisfies: the log position
// it reads at and what it has handed out. The library's readers (Slice,
// BeliefSlice, Given) satisfy it; so can an application's own, whose
// sources then take part like theirs: Assemble holds it to the grant's
// position and to being unused, puts what it handed out in the context's
// read set, and lets parts cite it. Whatever a reader returns from
// HandedOut it vouches for: Assemble cannot see how it read.
type Reader interface {
	Upto() int64
	HandedOut() []Source
}

// checked is what the library's own readers add to the protocol, for the
// checks only they can answer.
type checked interface {
	// admits is false for a slice opened with a nil predicate.
	admits() bool
	// fresh refuses a slice backed by a fold that is not at its position.
	fresh(ctx context.Context) error
}

func (s *Slice[T]) admits() bool { return s.open }

func (s *Slice[T]) fresh(ctx context.Context) error {
	if s.fold == nil {
		return nil
	}
	return freshBetween(ctx, s.store, s.fold, s.fold.upto(), s.at)
}

func (g *Given[T]) admits() bool { return true }

func (g *Given[T]) fresh(context.Context) error { return nil }

// recorder is the bookkeeping every slice shares: a position and the list
// of sources handed out.
type recorder struct {
	mu     sync.Mutex
	at     int64
	handed []Source
	seen   map[Source]bool
}

// Upto is the log position the reader was opened at.
func (r *recorder) Upto() int64 { return r.at }

// HandedOut is every source the reader handed out, in order, each once.
func (r *recorder) HandedOut() []Source {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.handed)
}

// hand records sources as handed out (each once).
func (r *recorder) hand(sources ...Source) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[Source]bool{}
	}
	for _, s := range sources {
		if !r.seen[s] {
			r.seen[s] = true
			r.handed = append(r.handed, s)
		}
	}
}

// freshBetween checks that no event f claims lies between its position at
// (read once by the caller) and upto.
func freshBetween(ctx context.Context, store eventlog.Store, f Fold, at, upto int64) error {
	lo, hi := min(at, upto), max(at, upto)
	if lo == hi {
		return nil
	}
	return store.Scan(ctx, lo+1, hi, func(env eventlog.Envelope) error {
		if f.claims(env.Kind) {
			dir := "behind"
			if at > upto {
				dir = "ahead of"
			}
			return fmt.Errorf("%w: projection %s is at %d, %s the slice at %d, and claims event %d (%s)",
				ErrStaleRead, f.name(), at, dir, upto, env.Seq, env.Kind)
		}
		return nil
	})
}
