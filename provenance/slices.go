package provenance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/promptloom/promptloom/eventlog"
)

// Slice is a read-only source opened at one log position that records
// everything it hands out. A grant is made of slices; Assemble checks what
// parts cite against what the slices handed out. Callers may write their
// own slices: embed a Recorder.
type Slice interface {
	// Upto is the log position the slice reads at.
	Upto() int64
	// HandedOut lists what the slice has handed out so far, in order.
	HandedOut() []Source
}

// Fresher is a slice backed by a fold, which can tell whether the fold is
// at the slice's position.
type Fresher interface {
	Fresh(ctx context.Context) error
}

// ErrNotGranted is returned by a slice asked for something outside its grant.
var ErrNotGranted = errors.New("not granted")

// ErrNilPredicate is a slice opened with a nil predicate. A nil predicate
// admits nothing: a grant is a boundary, and a forgotten predicate must not
// open it. Assemble refuses such a grant before the assembler runs; a slice
// read on its own returns this error, or hands out nothing where the read
// returns no error. Pass AdmitAll or AllScopes to admit everything.
var ErrNilPredicate = errors.New("slice has a nil predicate")

// AdmitAll is the predicate that admits every event.
func AdmitAll(eventlog.Envelope) bool { return true }

// AllScopes is the visible predicate that grants every belief scope.
func AllScopes(string) bool { return true }

// predicated is a slice built around a predicate, which Assemble checks.
type predicated interface {
	hasPredicate() bool
}

// Recorder is the bookkeeping every slice shares: a position and the list
// of sources handed out. Embed it in a slice of your own.
type Recorder struct {
	mu     sync.Mutex
	upto   int64
	handed []Source
	seen   map[Source]bool
}

// NewRecorder returns a recorder at position upto.
func NewRecorder(upto int64) Recorder { return Recorder{upto: upto} }

// Upto implements Slice.
func (r *Recorder) Upto() int64 { return r.upto }

// HandedOut implements Slice.
func (r *Recorder) HandedOut() []Source {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.handed)
}

// Hand records sources as handed out (each once).
func (r *Recorder) Hand(sources ...Source) {
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

// LogSlice reads the events up to a position that an admit predicate
// accepts. The predicate sees only the envelope: an event it rejects is
// never fetched or decoded. A nil predicate admits nothing: Events returns
// ErrNilPredicate.
type LogSlice struct {
	Recorder
	store eventlog.Store
	admit func(eventlog.Envelope) bool
}

// NewLogSlice opens the log at upto for the events admit accepts.
func NewLogSlice(store eventlog.Store, upto int64, admit func(eventlog.Envelope) bool) *LogSlice {
	return &LogSlice{Recorder: NewRecorder(upto), store: store, admit: admit}
}

// Events returns the admitted events, of the given kinds (any kind when
// none is given), in log order.
func (s *LogSlice) Events(ctx context.Context, kinds ...string) ([]eventlog.Event, error) {
	if s.admit == nil {
		return nil, fmt.Errorf("%w: a LogSlice's admit", ErrNilPredicate)
	}
	var out []eventlog.Event
	err := s.store.Scan(ctx, 1, s.upto, func(env eventlog.Envelope) error {
		if len(kinds) > 0 && !slices.Contains(kinds, env.Kind) || !s.admit(env) {
			return nil
		}
		e, err := s.store.Get(ctx, env.Seq)
		if err != nil {
			return err
		}
		out = append(out, e)
		s.Hand(EventSource(e.Seq))
		return nil
	})
	return out, err
}

// EventsSlice hands out a fixed run of events (the current round, the
// messages of a turn), filtered by admit. Events after its position are not
// visible from it. A nil predicate admits nothing.
type EventsSlice struct {
	Recorder
	events []eventlog.Event
	admit  func(eventlog.Envelope) bool
}

// NewEventsSlice returns a slice of events at upto.
func NewEventsSlice(upto int64, events []eventlog.Event, admit func(eventlog.Envelope) bool) *EventsSlice {
	return &EventsSlice{Recorder: NewRecorder(upto), events: events, admit: admit}
}

// Events returns the admitted events at or before the slice's position.
func (s *EventsSlice) Events() []eventlog.Event {
	if s.admit == nil {
		return nil
	}
	var out []eventlog.Event
	for _, e := range s.events {
		if e.Seq <= s.upto && s.admit(e.Envelope) {
			out = append(out, e)
			s.Hand(EventSource(e.Seq))
		}
	}
	return out
}

// BeliefSlice reads the beliefs of the scopes a visible predicate accepts,
// as they stood at its position. Every read checks the fold: once the fold
// has applied a belief event past the slice's position (an assembler, or
// another writer, appended one and the projector folded it), the beliefs no
// longer describe that position and the read is ErrStaleRead, so a context
// never reports one position with beliefs from after it.
type BeliefSlice struct {
	Recorder
	store   eventlog.Store
	beliefs *Beliefs
	visible func(scope string) bool
}

// NewBeliefSlice opens the Beliefs fold at upto for the visible scopes. The
// store is used only to check that the fold is at that position. A nil
// visible predicate grants no scope (see ErrNilPredicate).
func NewBeliefSlice(store eventlog.Store, beliefs *Beliefs, upto int64, visible func(scope string) bool) *BeliefSlice {
	return &BeliefSlice{Recorder: NewRecorder(upto), store: store, beliefs: beliefs, visible: visible}
}

// Beliefs returns the beliefs held in scope at the slice's position; a scope
// outside the grant is ErrNotGranted, a fold that moved past the position by
// a belief event is ErrStaleRead (and nothing is handed out).
func (s *BeliefSlice) Beliefs(scope string) ([]Belief, error) {
	if s.visible == nil {
		return nil, fmt.Errorf("%w: a BeliefSlice's visible", ErrNilPredicate)
	}
	if !s.visible(scope) {
		return nil, fmt.Errorf("%w: beliefs of scope %q", ErrNotGranted, scope)
	}
	at := s.beliefs.read(scope)
	switch {
	case at.last > s.upto:
		return nil, fmt.Errorf("%w: projection %s is at %d, ahead of the slice at %d, and claims event %d (%s)",
			ErrStaleRead, s.beliefs.Name(), at.upto, s.upto, at.last, at.lastKind)
	case at.upto < s.upto || at.upto > s.upto && at.restored > s.upto:
		// What the fold applied is not all known (it is behind, or was
		// restored past the slice): ask the log.
		if err := freshBetween(context.Background(), s.store, s.beliefs, at.upto, s.upto); err != nil {
			return nil, err
		}
	}
	for _, b := range at.held {
		s.Hand(BeliefSource(b.ID))
	}
	return at.held, nil
}

// Fresh implements Fresher.
func (s *BeliefSlice) Fresh(ctx context.Context) error {
	return fresh(ctx, s.store, s.beliefs, s.upto)
}

// ChronicleSlice reads the chronicle sections closed at or before its
// position whose envelope admit accepts. A nil predicate admits nothing.
type ChronicleSlice struct {
	Recorder
	store     eventlog.Store
	chronicle *Chronicle
	admit     func(eventlog.Envelope) bool
}

// NewChronicleSlice opens the Chronicle fold at upto.
func NewChronicleSlice(store eventlog.Store, chronicle *Chronicle, upto int64, admit func(eventlog.Envelope) bool) *ChronicleSlice {
	return &ChronicleSlice{Recorder: NewRecorder(upto), store: store, chronicle: chronicle, admit: admit}
}

// Sections returns the admitted sections that end at or before the slice's
// position.
func (s *ChronicleSlice) Sections() []Section {
	if s.admit == nil {
		return nil
	}
	var out []Section
	for _, sec := range s.chronicle.Sections() {
		env := eventlog.Envelope{Seq: sec.Seq, Kind: KindSectionClosed, Actor: "chronicle", Audience: sec.Audience}
		if sec.To <= s.upto && sec.Seq <= s.upto && s.admit(env) {
			out = append(out, sec)
			s.Hand(SectionSource(sec.ID))
		}
	}
	return out
}

// Fresh implements Fresher.
func (s *ChronicleSlice) Fresh(ctx context.Context) error {
	return fresh(ctx, s.store, s.chronicle, s.upto)
}

func (s *LogSlice) hasPredicate() bool       { return s.admit != nil }
func (s *EventsSlice) hasPredicate() bool    { return s.admit != nil }
func (s *BeliefSlice) hasPredicate() bool    { return s.visible != nil }
func (s *ChronicleSlice) hasPredicate() bool { return s.admit != nil }

// Given is a value the caller hands to the assembler (a brief, a task),
// optionally citing the event it came from.
type Given[T any] struct {
	Recorder
	name  string
	value T
	cites []int64
}

// NewGiven returns a given value named name, at upto.
func NewGiven[T any](name string, upto int64, value T, cites ...int64) *Given[T] {
	return &Given[T]{Recorder: NewRecorder(upto), name: name, value: value, cites: cites}
}

// Value hands out the value.
func (g *Given[T]) Value() T {
	g.Hand(GivenSource(g.name))
	for _, seq := range g.cites {
		g.Hand(EventSource(seq))
	}
	return g.value
}

// ErrStaleRead is returned when a fold is not at its slice's position: an
// event the fold claims lies between them.
var ErrStaleRead = errors.New("stale read")

// fresh checks that no event f claims lies between f's position and upto.
func fresh(ctx context.Context, store eventlog.Store, f Fold, upto int64) error {
	return freshBetween(ctx, store, f, f.Upto(), upto)
}

// freshBetween checks that no event f claims lies between its position at
// (read once by the caller) and upto.
func freshBetween(ctx context.Context, store eventlog.Store, f Fold, at, upto int64) error {
	lo, hi := min(at, upto), max(at, upto)
	if lo == hi {
		return nil
	}
	return store.Scan(ctx, lo+1, hi, func(env eventlog.Envelope) error {
		if f.Claims(env.Kind) {
			dir := "behind"
			if at > upto {
				dir = "ahead of"
			}
			return fmt.Errorf("%w: projection %s is at %d, %s the slice at %d, and claims event %d (%s)",
				ErrStaleRead, f.Name(), at, dir, upto, env.Seq, env.Kind)
		}
		return nil
	})
}
