// Package sqlite is the event log in one SQLite file, through
// modernc.org/sqlite (pure Go, no cgo): the durable eventlog.Store for one
// machine. Importing it is what links SQLite into a program; eventlog
// itself links no database.
//
// The file is in WAL mode with full synchronous commits: an Append that
// returned is on disk, and a batch is one transaction, so a crash leaves
// whole batches only. Projections live in the same file, each state written
// in the same statement as its position.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/eventlog/internal/draft"
	"github.com/promptloom/promptloom/eventlog/internal/wake"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver: no cgo
)

// store is the eventlog.Store Open returns.
type store struct {
	db     *sql.DB
	clock  func() time.Time
	notify wake.Notifier
}

const schema = `
CREATE TABLE IF NOT EXISTS events (
	seq      INTEGER PRIMARY KEY,
	kind     TEXT NOT NULL,
	actor    TEXT NOT NULL,
	audience TEXT NOT NULL,
	at       TEXT NOT NULL,
	payload  BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS projections (
	name  TEXT PRIMARY KEY,
	upto  INTEGER NOT NULL,
	state BLOB NOT NULL
);`

// Open opens the log in the file at path, creating the file and its tables
// if need be. The path is taken as it is: it is not a URI, and no byte of it
// is syntax.
func Open(path string, opts *eventlog.Options) (eventlog.Store, error) {
	if opts == nil {
		opts = &eventlog.Options{}
	}
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", sqliteURI(path)+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("eventlog: open %s: %w", path, err)
	}
	// One connection: appends are serialised, and every reader sees every
	// committed batch.
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("eventlog: open %s: %w", path, err)
	}
	return &store{db: db, clock: draft.Clock(opts.Clock)}, nil
}

// sqliteURI is the file: URI that names path, whatever bytes it holds:
// SQLite decodes %XX in a URI's path and ends the path at '?' or '#', so
// those three are escaped; an absolute path gets an empty authority
// ("file:///abs"), so that one starting with "//" is not read as a host.
func sqliteURI(path string) string {
	var b strings.Builder
	b.WriteString("file:")
	if strings.HasPrefix(path, "/") {
		b.WriteString("//")
	}
	for i := 0; i < len(path); i++ {
		switch c := path[i]; c {
		case '%', '?', '#':
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// Append implements eventlog.Store: the batch is one transaction.
func (s *store) Append(ctx context.Context, drafts ...eventlog.Draft) ([]eventlog.Envelope, error) {
	payloads, err := draft.Marshal(drafts)
	if err != nil {
		return nil, err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer tx.Rollback()
	var head int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM events`).Scan(&head); err != nil {
		return nil, s.wrap(err)
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO events (seq, kind, actor, audience, at, payload) VALUES (?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer stmt.Close()
	out := make([]eventlog.Envelope, len(drafts))
	for i, d := range drafts {
		env := eventlog.Envelope{Seq: head + int64(i) + 1, Kind: d.Kind, Actor: d.Actor, Audience: draft.Audience(d.Audience), At: s.clock()}
		if _, err := stmt.ExecContext(ctx, env.Seq, env.Kind, env.Actor, draft.AudienceJSON(d.Audience),
			env.At.Format(time.RFC3339Nano), payloads[i]); err != nil {
			return nil, s.wrap(err)
		}
		out[i] = env
	}
	if err := tx.Commit(); err != nil {
		return nil, s.wrap(err)
	}
	s.notify.Wake()
	return out, nil
}

// Head implements eventlog.Store.
func (s *store) Head(ctx context.Context) (int64, error) {
	var head int64
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM events`).Scan(&head)
	return head, s.wrap(err)
}

// Scan implements eventlog.Store. Payloads are not read.
func (s *store) Scan(ctx context.Context, from, upto int64, fn func(eventlog.Envelope) error) error {
	rows, err := s.db.QueryContext(ctx,
		`SELECT seq, kind, actor, audience, at FROM events WHERE seq >= ? AND seq <= ? ORDER BY seq`, from, upto)
	if err != nil {
		return s.wrap(err)
	}
	// Collect first: fn may call back into the store, and the store has a
	// single connection.
	var envs []eventlog.Envelope
	for rows.Next() {
		env, err := scanEnvelope(rows)
		if err != nil {
			rows.Close()
			return err
		}
		envs = append(envs, env)
	}
	if err := rows.Close(); err != nil {
		return s.wrap(err)
	}
	if err := rows.Err(); err != nil {
		return s.wrap(err)
	}
	for _, e := range envs {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

type scanner interface{ Scan(dest ...any) error }

func scanEnvelope(r scanner, extra ...any) (eventlog.Envelope, error) {
	var env eventlog.Envelope
	var aud, at string
	dest := append([]any{&env.Seq, &env.Kind, &env.Actor, &aud, &at}, extra...)
	if err := r.Scan(dest...); err != nil {
		return env, err
	}
	if err := json.Unmarshal([]byte(aud), &env.Audience); err != nil {
		return env, fmt.Errorf("eventlog: event %d: audience: %w", env.Seq, err)
	}
	if len(env.Audience) == 0 {
		env.Audience = nil
	}
	var err error
	if env.At, err = time.Parse(time.RFC3339Nano, at); err != nil {
		return env, fmt.Errorf("eventlog: event %d: time: %w", env.Seq, err)
	}
	return env, nil
}

// Get implements eventlog.Store.
func (s *store) Get(ctx context.Context, seq int64) (eventlog.Event, error) {
	var payload []byte
	row := s.db.QueryRowContext(ctx, `SELECT seq, kind, actor, audience, at, payload FROM events WHERE seq = ?`, seq)
	env, err := scanEnvelope(row, &payload)
	if errors.Is(err, sql.ErrNoRows) {
		return eventlog.Event{}, fmt.Errorf("%w: %d", eventlog.ErrNoEvent, seq)
	}
	if err != nil {
		return eventlog.Event{}, s.wrap(err)
	}
	return eventlog.Event{Envelope: env, Payload: payload}, nil
}

// LoadProjection implements eventlog.Store.
func (s *store) LoadProjection(ctx context.Context, name string) (eventlog.Projection, bool, error) {
	var p eventlog.Projection
	err := s.db.QueryRowContext(ctx, `SELECT upto, state FROM projections WHERE name = ?`, name).Scan(&p.Upto, &p.State)
	if errors.Is(err, sql.ErrNoRows) {
		return p, false, nil
	}
	if len(p.State) == 0 {
		p.State = nil
	}
	return p, err == nil, s.wrap(err)
}

// SaveProjection implements eventlog.Store: state and position in one
// statement. A nil state is saved as an empty one (the column is NOT NULL).
func (s *store) SaveProjection(ctx context.Context, name string, p eventlog.Projection) error {
	if p.State == nil {
		p.State = []byte{}
	}
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO projections (name, upto, state) VALUES (?, ?, ?)
		 ON CONFLICT(name) DO UPDATE SET upto = excluded.upto, state = excluded.state`, name, p.Upto, p.State)
	return s.wrap(err)
}

// DropProjection implements eventlog.Store.
func (s *store) DropProjection(ctx context.Context, name string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM projections WHERE name = ?`, name)
	return s.wrap(err)
}

// poll is how often Wait reads the head for appends by other processes;
// appends through the same store wake it at once.
const poll = 100 * time.Millisecond

// Wait implements eventlog.Store: an append through this store wakes it at
// once; one by another process is seen within a tenth of a second, when it
// next reads the head.
func (s *store) Wait(ctx context.Context, after int64) (int64, error) {
	return wake.Head(ctx, &s.notify, poll, s.Head, after)
}

// Close implements eventlog.Store.
func (s *store) Close() error {
	err := s.db.Close()
	s.notify.Wake()
	return err
}

func (s *store) wrap(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrConnDone) || err.Error() == "sql: database is closed" {
		return fmt.Errorf("%w: %v", eventlog.ErrClosed, err)
	}
	return fmt.Errorf("eventlog: %w", err)
}
