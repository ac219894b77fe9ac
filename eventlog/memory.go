package eventlog

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/promptloom/promptloom/eventlog/internal/draft"
	"github.com/promptloom/promptloom/eventlog/internal/wake"
)

// memory is the in-memory Store NewMemory returns.
type memory struct {
	mu          sync.RWMutex
	clock       func() time.Time
	events      []Event
	projections map[string]Projection
	closed      bool
	notify      wake.Notifier
}

// NewMemory returns an empty log held in memory, for tests and short-lived
// runs: it keeps every promise of Store but does not outlive the process.
func NewMemory(opts *Options) Store {
	if opts == nil {
		opts = &Options{}
	}
	return &memory{clock: draft.Clock(opts.Clock), projections: map[string]Projection{}}
}

// Append implements Store.
func (m *memory) Append(ctx context.Context, drafts ...Draft) ([]Envelope, error) {
	payloads, err := draft.Marshal(drafts)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]Envelope, len(drafts))
	for i, d := range drafts {
		env := Envelope{
			Seq:      int64(len(m.events) + 1),
			Kind:     d.Kind,
			Actor:    d.Actor,
			Audience: draft.Audience(d.Audience),
			At:       m.clock(),
		}
		m.events = append(m.events, Event{Envelope: env, Payload: slices.Clone(payloads[i])})
		out[i] = env
	}
	m.notify.Wake()
	return out, nil
}

// Head implements Store.
func (m *memory) Head(ctx context.Context) (int64, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return int64(len(m.events)), nil
}

// Scan implements Store.
func (m *memory) Scan(ctx context.Context, from, upto int64, fn func(Envelope) error) error {
	m.mu.RLock()
	from, upto = max(from, 1), min(upto, int64(len(m.events)))
	envs := make([]Envelope, 0, max(0, upto-from+1))
	for seq := from; seq <= upto; seq++ {
		envs = append(envs, m.events[seq-1].Envelope)
	}
	m.mu.RUnlock()
	for _, e := range envs {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// Get implements Store.
func (m *memory) Get(ctx context.Context, seq int64) (Event, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if seq < 1 || seq > int64(len(m.events)) {
		return Event{}, fmt.Errorf("%w: %d", ErrNoEvent, seq)
	}
	return m.events[seq-1], nil
}

// LoadProjection implements Store.
func (m *memory) LoadProjection(ctx context.Context, name string) (Projection, bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	p, ok := m.projections[name]
	return p, ok, nil
}

// SaveProjection implements Store.
func (m *memory) SaveProjection(ctx context.Context, name string, p Projection) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var state []byte
	if len(p.State) > 0 {
		state = slices.Clone(p.State)
	}
	m.projections[name] = Projection{Upto: p.Upto, State: state}
	return nil
}

// DropProjection implements Store.
func (m *memory) DropProjection(ctx context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.projections, name)
	return nil
}

// Wait implements Store.
func (m *memory) Wait(ctx context.Context, after int64) (int64, error) {
	return wake.Head(ctx, &m.notify, 0, func(ctx context.Context) (int64, error) {
		m.mu.RLock()
		defer m.mu.RUnlock()
		if m.closed {
			return 0, ErrClosed
		}
		return int64(len(m.events)), nil
	}, after)
}

// Close implements Store.
func (m *memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	m.notify.Wake()
	return nil
}
