package provenance

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/promptloom/promptloom/eventlog"
)

// Event kinds the Beliefs fold claims; the payload of either is a Belief.
const (
	KindBeliefHeld    = "belief.held"
	KindBeliefDropped = "belief.dropped"
)

// Belief is one belief held in a scope, and the payload of the events that
// hold or drop one. As a payload, ID may be left empty (the fold names the
// belief "b" and the event's seq) and Seq is not written: the fold takes it
// from the event, so a belief cites the event it was folded from.
type Belief struct {
	// Scope is whose belief it is (a role, or a shared scope).
	Scope string `json:"scope"`
	ID    string `json:"id,omitempty"`
	Text  string `json:"text,omitempty"`
	Seq   int64  `json:"seq,omitempty"`
}

// Beliefs folds belief events into holder scope -> beliefs. The zero value
// is an empty fold, ready for CatchUp (its projection is "beliefs"). It is
// safe for concurrent use: a fold may catch up while a slice reads.
type Beliefs struct {
	mu     sync.RWMutex
	at     int64
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

func (b *Beliefs) name() string { return "beliefs" }

func (b *Beliefs) claims(kind string) bool {
	return kind == KindBeliefHeld || kind == KindBeliefDropped
}

func (b *Beliefs) apply(e eventlog.Event) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	var p Belief
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
	if b.scopes == nil {
		b.scopes = map[string][]Belief{}
	}
	held := slices.DeleteFunc(b.scopes[p.Scope], func(x Belief) bool { return x.ID == id })
	if e.Kind == KindBeliefHeld {
		held = append(held, Belief{ID: id, Scope: p.Scope, Text: p.Text, Seq: e.Seq})
	}
	b.scopes[p.Scope] = held
	b.at = max(b.at, e.Seq)
	if e.Seq > b.last {
		b.last, b.lastKind = e.Seq, e.Kind
	}
	return nil
}

func (b *Beliefs) upto() int64 {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.at
}

func (b *Beliefs) advance(upto int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.at = max(b.at, upto)
}

func (b *Beliefs) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.clear()
}

func (b *Beliefs) clear() {
	b.at, b.scopes = 0, map[string][]Belief{}
	b.last, b.lastKind, b.restored = 0, "", 0
}

// snapshot is the scopes in order, beliefs in fold order.
func (b *Beliefs) snapshot() ([]byte, error) {
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

func (b *Beliefs) restore(upto int64, state []byte) error {
	var scopes [][]Belief
	if err := json.Unmarshal(state, &scopes); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.clear()
	for _, held := range scopes {
		if len(held) > 0 {
			b.scopes[held[0].Scope] = held
		}
	}
	b.at, b.restored = upto, upto
	return nil
}

// read returns the beliefs of the scopes visible admits (scopes in order,
// beliefs in fold order) with the fold's position and latest applied
// event, all as of one moment.
func (b *Beliefs) read(visible func(scope string) bool) beliefsAt {
	b.mu.RLock()
	defer b.mu.RUnlock()
	at := beliefsAt{upto: b.at, last: b.last, restored: b.restored, lastKind: b.lastKind}
	names := make([]string, 0, len(b.scopes))
	for s := range b.scopes {
		if visible(s) {
			names = append(names, s)
		}
	}
	sort.Strings(names)
	for _, s := range names {
		at.held = append(at.held, b.scopes[s]...)
	}
	return at
}
