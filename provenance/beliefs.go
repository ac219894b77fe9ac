package provenance

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/promptloom/promptloom/eventlog"
)

// Event kinds the Beliefs fold claims.
const (
	KindBeliefHeld    = "belief.held"
	KindBeliefDropped = "belief.dropped"
)

// BeliefPayload is the payload of belief.held and belief.dropped events.
type BeliefPayload struct {
	// Scope is whose belief it is (a role, or a shared scope).
	Scope string `json:"scope"`
	// ID names the belief; empty means "b" followed by the event's seq.
	ID   string `json:"id,omitempty"`
	Text string `json:"text,omitempty"`
}

// Belief is one belief held in a scope, citing the event it was folded from.
type Belief struct {
	ID    string `json:"id"`
	Scope string `json:"scope"`
	Text  string `json:"text"`
	Seq   int64  `json:"seq"`
}

// Beliefs folds belief events into holder scope -> beliefs. It is safe for
// concurrent use: a projector may fold while a slice reads.
type Beliefs struct {
	mu     sync.RWMutex
	upto   int64
	scopes map[string][]Belief
	// last and lastKind are the seq and kind of the latest event applied
	// since the state was last restored (at restored) or reset.
	last     int64
	lastKind string
	restored int64
}

// beliefsAt is what one read of the fold saw, taken under one lock.
type beliefsAt struct {
	held                 []Belief
	upto, last, restored int64
	lastKind             string
}

// NewBeliefs returns an empty Beliefs fold.
func NewBeliefs() *Beliefs { return &Beliefs{scopes: map[string][]Belief{}} }

// Name implements Fold.
func (b *Beliefs) Name() string { return "beliefs" }

// Claims implements Fold.
func (b *Beliefs) Claims(kind string) bool {
	return kind == KindBeliefHeld || kind == KindBeliefDropped
}

// Apply implements Fold.
func (b *Beliefs) Apply(e eventlog.Event) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	var p BeliefPayload
	if err := e.Decode(&p); err != nil {
		return err
	}
	if p.Scope == "" {
		return fmt.Errorf("event %d: belief without a scope", e.Seq)
	}
	id := p.ID
	if id == "" {
		id = fmt.Sprintf("b%d", e.Seq)
	}
	held := slices.DeleteFunc(b.scopes[p.Scope], func(x Belief) bool { return x.ID == id })
	if e.Kind == KindBeliefHeld {
		held = append(held, Belief{ID: id, Scope: p.Scope, Text: p.Text, Seq: e.Seq})
	}
	b.scopes[p.Scope] = held
	b.upto = max(b.upto, e.Seq)
	if e.Seq > b.last {
		b.last, b.lastKind = e.Seq, e.Kind
	}
	return nil
}

// Upto implements Fold.
func (b *Beliefs) Upto() int64 {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.upto
}

// Advance implements Fold.
func (b *Beliefs) Advance(upto int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.upto = max(b.upto, upto)
}

// Reset implements Fold.
func (b *Beliefs) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reset()
}

func (b *Beliefs) reset() {
	b.upto, b.scopes = 0, map[string][]Belief{}
	b.last, b.lastKind, b.restored = 0, "", 0
}

// Snapshot implements Fold: scopes in order, beliefs in fold order.
func (b *Beliefs) Snapshot() ([]byte, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	names := make([]string, 0, len(b.scopes))
	for s := range b.scopes {
		names = append(names, s)
	}
	sort.Strings(names)
	out := make([][]Belief, 0, len(names))
	for _, s := range names {
		out = append(out, b.scopes[s])
	}
	return json.Marshal(out)
}

// Restore implements Fold.
func (b *Beliefs) Restore(upto int64, state []byte) error {
	var scopes [][]Belief
	if err := json.Unmarshal(state, &scopes); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reset()
	for _, held := range scopes {
		if len(held) > 0 {
			b.scopes[held[0].Scope] = held
		}
	}
	b.upto, b.restored = upto, upto
	return nil
}

// In returns the beliefs held in scope, in the order they were folded.
func (b *Beliefs) In(scope string) []Belief { return b.read(scope).held }

// read returns the beliefs of scope with the fold's position and latest
// applied event, all as of one moment.
func (b *Beliefs) read(scope string) beliefsAt {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return beliefsAt{held: slices.Clone(b.scopes[scope]), upto: b.upto, last: b.last, restored: b.restored, lastKind: b.lastKind}
}
