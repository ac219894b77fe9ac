// Package eventlog is the append-only log everything else in provenance is
// folded from: the one thing that is not derived.
//
// An event is an Envelope (position, kind, actor, audience, time), readable
// without touching the payload, and a JSON payload. A Store appends batches
// atomically and reads envelopes and payloads separately, so a reader can
// decide from the envelope alone whether an event is for it, and never
// decode one that is not. Stores also keep projections' snapshots beside
// their positions (see provenance.CatchUp).
//
// This package is the contract and the in-memory store (NewMemory). The
// durable stores are drivers, in the manner of database/sql's, so that a
// program links a database only when it imports its driver:
// eventlog/sqlite (one file, modernc.org/sqlite, no cgo) and
// eventlog/postgres (one log shared by many processes on many machines,
// through pgx). A program opens the one it wants with its Open.
package eventlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/promptloom/promptloom/eventlog/internal/draft"
)

// Envelope is what can be known of an event without decoding it.
type Envelope struct {
	// Seq is the event's position in the log, from 1.
	Seq  int64  `json:"seq"`
	Kind string `json:"kind"`
	// Actor is who caused the event ("uk", "eu", "chronicle", ...).
	Actor string `json:"actor,omitempty"`
	// Audience lists the roles the event is visible to; empty means every
	// role.
	Audience []string `json:"audience,omitempty"`
	// At is when the event was appended.
	At time.Time `json:"at"`
}

// VisibleTo reports whether role may see the event.
func (e Envelope) VisibleTo(role string) bool {
	return len(e.Audience) == 0 || slices.Contains(e.Audience, role)
}

// Event is an envelope and its payload (JSON).
type Event struct {
	Envelope
	Payload json.RawMessage `json:"payload"`
}

// Decode unmarshals the payload into v.
func (e Event) Decode(v any) error {
	if err := json.Unmarshal(e.Payload, v); err != nil {
		return fmt.Errorf("event %d (%s): %w", e.Seq, e.Kind, err)
	}
	return nil
}

// Draft is an event to append: the store assigns Seq and At.
type Draft struct {
	Kind     string
	Actor    string
	Audience []string
	// Payload is marshalled to JSON.
	Payload any
}

// Projection is a fold's saved state and the position it has read up to.
type Projection struct {
	Upto int64
	// State is the fold's snapshot. A nil State is an empty one: every
	// store saves it, and an empty State loads as nil.
	State []byte
}

// Store is an append-only event log. Implementations are safe for
// concurrent use.
type Store interface {
	// Append adds the drafts as one atomic batch and returns their
	// envelopes: either all of them are in the log or none is.
	Append(ctx context.Context, drafts ...Draft) ([]Envelope, error)
	// Head is the position of the last event, 0 for an empty log.
	Head(ctx context.Context) (int64, error)
	// Scan calls fn with the envelope of every event whose position is in
	// [from, upto], in order, without reading payloads.
	Scan(ctx context.Context, from, upto int64, fn func(Envelope) error) error
	// Get returns one event with its payload.
	Get(ctx context.Context, seq int64) (Event, error)
	// Wait returns the head once it is past after, or ctx's error (or
	// ErrClosed once the store is closed): a worker catching up waits on it
	// instead of polling Head. Appends through the same store wake it at
	// once; how appends by other processes wake it is the store's own (see
	// each driver).
	Wait(ctx context.Context, after int64) (int64, error)

	// LoadProjection returns a projection's saved state, if any.
	LoadProjection(ctx context.Context, name string) (Projection, bool, error)
	// SaveProjection replaces a projection's state and position together.
	SaveProjection(ctx context.Context, name string, p Projection) error
	// DropProjection forgets a projection.
	DropProjection(ctx context.Context, name string) error

	Close() error
}

// Errors of every store. A driver adds its own (see eventlog/postgres).
var (
	// ErrNoEvent is a Get of a position the log does not have.
	ErrNoEvent = errors.New("no such event")
	// ErrInvalidDraft is a draft no store writes: its batch is refused
	// whole, before anything is written. The message names the draft (its
	// place in the batch and its kind) and what is wrong: no kind, a
	// payload that does not marshal to JSON (or, given as a
	// json.RawMessage, is not valid JSON), or, in PostgreSQL, text its
	// text type cannot hold (a kind, actor or audience role with invalid
	// UTF-8 or a NUL byte, which memory and SQLite keep).
	ErrInvalidDraft = draft.ErrInvalid
	// ErrClosed is any use of a closed store.
	ErrClosed = errors.New("event log is closed")
)

// Options configures a store: NewMemory and every driver's Open take them
// (a driver's own options embed them). The zero value is the default.
type Options struct {
	// Clock stamps each event's At as it is appended; nil is the time of
	// day in UTC. Tests and demos give a clock that starts at a fixed time
	// and ticks once per call, so that their output is the same on every
	// run. A store never calls it concurrently.
	Clock func() time.Time
}
