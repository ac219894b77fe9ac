// Package eventlog is the append-only log everything else in provenance is
// folded from: the one thing that is not derived.
//
// An event is an Envelope (position, kind, actor, audience, time), readable
// without touching the payload, and a JSON payload. A Store appends batches
// atomically and reads envelopes and payloads separately, so a reader can
// decide from the envelope alone whether an event is for it, and never
// decode one that is not. Stores also keep projections' snapshots beside
// their cursors (see provenance.Projector). Three stores are provided:
// Memory; SQLite (modernc.org/sqlite, no cgo, WAL, one transaction per
// batch); and Postgres, one log shared by many processes on many machines
// (pgx, one statement per batch, LISTEN/NOTIFY to wake waiters). Open picks
// SQLite or Postgres from its argument.
package eventlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
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

// Public reports whether every role may see the event.
func (e Envelope) Public() bool { return len(e.Audience) == 0 }

// VisibleTo reports whether role may see the event.
func (e Envelope) VisibleTo(role string) bool {
	return e.Public() || slices.Contains(e.Audience, role)
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
	Upto  int64
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

// Errors of the stores.
var (
	ErrNoEvent    = errors.New("no such event")
	ErrEmptyKind  = draft.ErrEmptyKind
	ErrClosed     = errors.New("event log is closed")
	ErrBadPayload = draft.ErrBadPayload
	// ErrSchemaVersion is a PostgreSQL log whose schema version this build
	// does not know (docs/postgres.md).
	ErrSchemaVersion = errors.New("event log schema version is not this build's")
)

// Open opens the log named by dsn: a postgres:// or postgresql:// URL opens
// a PostgreSQL log (OpenPostgres), anything else is the path of a SQLite
// file (OpenSQLite), taken as it is.
func Open(ctx context.Context, dsn string, opts ...Option) (Store, error) {
	if IsURL(dsn) {
		return OpenPostgres(ctx, dsn, opts...)
	}
	return OpenSQLite(dsn, opts...)
}

// IsURL reports whether dsn names a PostgreSQL log rather than a file.
func IsURL(dsn string) bool {
	l := strings.ToLower(dsn)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// Option configures a store.
type Option func(*config)

type config struct {
	clock       func() time.Time
	serialFlush bool
}

// WithSerialFlush makes a Postgres store flush each batch's WAL while the
// batch holds the head, as SQLite does: no event is visible before it is on
// disk, at the price of one fsync at a time for the whole log (see
// docs/postgres.md). Memory and SQLite ignore it.
func WithSerialFlush() Option { return func(c *config) { c.serialFlush = true } }

// WithClock sets the clock that stamps events; tests and demos use a fixed
// one so that their output is stable.
func WithClock(clock func() time.Time) Option { return func(c *config) { c.clock = clock } }

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		o(&c)
	}
	c.clock = draft.Clock(c.clock)
	return c
}
