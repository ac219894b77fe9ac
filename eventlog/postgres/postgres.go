// Package postgres is the event log in a PostgreSQL database, shared by any
// number of processes on any number of machines, through a
// github.com/jackc/pgx/v5 pool: the durable eventlog.Store for a fleet.
// Importing it is what links pgx into a program; eventlog itself links no
// database. docs/postgres.md is for whoever runs the database: the schema,
// the privileges, durability.
//
// Order: a one-row table, eventlog_head, holds the last position. A batch is
// written by one statement (so one transaction) that adds the batch's length
// to the head and inserts the events at the positions it covered. Batches
// appended at once through one store share that statement (group commit),
// each batch still contiguous. The update locks the head row until the
// transaction ends, so batches take their positions one after another,
// commit in the order of their positions, and an aborted batch gives its
// positions back with its update.
//
// Durability: the statement commits without waiting for its WAL flush, so
// the head is not held through an fsync; Append then waits for a flush it
// shares with other appenders, and Head flushes what it reports, so an
// acknowledged batch and every position Head returns are on disk.
// Options.SerialFlush flushes inside the hold instead. See
// docs/postgres.md.
//
// Every Append notifies the log's channel at commit; Wait listens on it, on a
// connection of its own, instead of polling.
//
// The tables are created by Open with Options.Migrate, the one step that
// needs CREATE on the schema; every other Open needs only the privileges
// to read and append (docs/postgres.md).
package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/eventlog/internal/draft"
	"github.com/promptloom/promptloom/eventlog/internal/wake"
	"github.com/promptloom/promptloom/internal/dsn"
	"github.com/promptloom/promptloom/internal/pgschema"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Options configures a PostgreSQL store. The zero value is the default.
type Options struct {
	// Clock stamps each event's At, as eventlog.Options.Clock does.
	Clock func() time.Time
	// SerialFlush makes each batch flush its WAL while it holds the head,
	// as SQLite does: no event is visible before it is on disk, at the
	// price of one fsync at a time for the whole log (see
	// docs/postgres.md).
	SerialFlush bool
	// Migrate creates the log's tables when the schema has none, or checks
	// the version of those it has, as journal/postgres's Options.Migrate
	// does. It needs CREATE on the schema when the tables are not there (of
	// a log that is there it asks nothing more). Without it, Open needs only
	// what reading and appending need (docs/postgres.md), and a schema
	// without the tables is an error matching fs.ErrNotExist.
	Migrate bool
}

// store is the eventlog.Store Open returns.
type store struct {
	pool        *pgxpool.Pool
	clock       func() time.Time
	serialFlush bool
	channel     string

	mu       sync.Mutex // guards closed and listener
	closed   bool
	listener *listener
	lmu      sync.Mutex // held while a listener starts
	notify   wake.Notifier
	// notified, when a test sets it before the first Wait, is called for
	// every notification the listener receives: what a test asserts when it
	// claims a wake came through NOTIFY.
	notified func()
	// relistened, when a test sets it before the first Wait, is called
	// each time the listener has connected again and its LISTEN has run:
	// from then on an append notifies it. The server's view of the
	// listeners cannot say so: a terminated backend stays in
	// pg_stat_activity, still showing its LISTEN, until it has exited.
	relistened func()

	// Group commit (append.go): appends queue here, and a flusher writes
	// everything queued as one statement.
	gmu      sync.Mutex
	pending  []*appendReq
	flushers int
	stop     context.Context // cancelled by Close: ends a flush in flight
	cancel   context.CancelFunc

	// flushHook, set by tests, replaces the wait for the WAL flush.
	flushHook func() error
}

// schemaVersion is the version of the PostgreSQL schema this build writes
// and reads (docs/postgres.md).
const schemaVersion = 1

// ErrSchemaVersion is a database whose log has a schema version this build
// does not read (a newer promptloom wrote it): Open refuses it and changes
// nothing.
var ErrSchemaVersion = errors.New("event log schema version is not this build's")

// pgSchema creates the version-1 tables. It runs once, under an advisory
// lock, when eventlog_schema is empty.
const pgSchema = `
CREATE TABLE events (
	seq      bigint      PRIMARY KEY CHECK (seq > 0),
	kind     text        NOT NULL CHECK (kind <> ''),
	actor    text        NOT NULL,
	audience text[]      NOT NULL,
	at       timestamptz NOT NULL,
	payload  jsonb,
	raw      bytea       NOT NULL
);
CREATE TABLE eventlog_head (
	one bool   PRIMARY KEY DEFAULT true CHECK (one),
	seq bigint NOT NULL CHECK (seq >= 0)
);
INSERT INTO eventlog_head (seq) VALUES (0);
CREATE TABLE projections (
	name  text   PRIMARY KEY,
	upto  bigint NOT NULL CHECK (upto >= 0),
	state bytea  NOT NULL
);
INSERT INTO eventlog_schema (version) VALUES (1);`

// Open connects to the database at url (a postgres:// or postgresql:// URL,
// or keyword=value pairs, as pgx reads them: a search_path parameter picks
// the schema) and checks the log's tables: their version must be this
// build's (else ErrSchemaVersion, and nothing is changed). With
// Options.Migrate it creates them first if the schema has none.
func Open(ctx context.Context, url string, opts *Options) (eventlog.Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	pcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, openError(url, err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, openError(url, err)
	}
	p := &store{pool: pool, clock: draft.Clock(opts.Clock), serialFlush: opts.SerialFlush}
	p.stop, p.cancel = context.WithCancel(context.Background())
	if err := p.checkTables(ctx, opts.Migrate); err != nil {
		pool.Close()
		return nil, openError(url, err)
	}
	return p, nil
}

// openError is an error of Open: the URL and the error, neither showing a
// secret of the URL (internal/dsn).
func openError(url string, err error) error {
	return fmt.Errorf("eventlog: open %s: %w", dsn.Redacted(url), dsn.Error(url, err))
}

// errNoTables is a schema without the log's tables, opened without
// Options.Migrate.
var errNoTables = fmt.Errorf("no event log tables in this schema (create them with Options.Migrate): %w", fs.ErrNotExist)

// logTables is the log's versioned schema (internal/pgschema).
var logTables = pgschema.Schema{Table: "eventlog_schema", Lock: "promptloom eventlog schema", Create: pgSchema}

// checkTables checks the log's version, creating the tables first with migrate
// when the schema has none; reading it needs only SELECT on
// eventlog_schema (and USAGE on the schema). The schema is the first of
// the search_path that exists and the role may use; none is a
// *pgschema.NoSchemaError, saying how to make one.
func (p *store) checkTables(ctx context.Context, migrate bool) error {
	schema, err := pgschema.Current(ctx, p.pool)
	if err != nil {
		return err
	}
	var version int
	if migrate {
		version, err = logTables.Migrate(ctx, p.pool)
	} else {
		version, err = logTables.Version(ctx, p.pool)
	}
	switch {
	case err != nil:
		return err
	case version == 0:
		return errNoTables
	case version != schemaVersion:
		return fmt.Errorf("%w: the database has version %d, this build reads version %d", ErrSchemaVersion, version, schemaVersion)
	}
	p.channel = channelName(schema)
	return nil
}

// channelName is the NOTIFY channel of the log in schema: one per schema, so
// that logs in different schemas of one database do not wake each other. It
// is cut to 63 bytes (NAMEDATALEN - 1) at a character boundary, as
// PostgreSQL cuts the identifier LISTEN is given: pg_notify refuses a name
// that is not UTF-8.
func channelName(schema string) string {
	name := "promptloom_eventlog_" + schema
	for len(name) > 63 {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	return name
}

// The append statement: move the head by the batch's length and insert the
// events at the positions it covered, all in one statement, so one
// transaction, and notify the channel (delivered at commit, and only if it
// commits). The transaction commits without waiting for its WAL flush, so
// the head is held for the statement only, not for an fsync; Append waits for
// the flush afterwards (flushWAL). See docs/postgres.md ("Why the order holds") for why the
// order still holds.
const pgAppend = `
WITH c AS (
	SELECT set_config('synchronous_commit', 'off', true) AS v
), h AS (
	UPDATE eventlog_head SET seq = seq + cardinality($1::text[]) RETURNING seq
), ins AS (
	INSERT INTO events (seq, kind, actor, audience, at, payload, raw)
	SELECT h.seq - cardinality($1::text[]) + d.n, d.kind, d.actor,
	       ARRAY(SELECT jsonb_array_elements_text(d.aud::jsonb)), d.at, d.payload::jsonb, d.raw
	FROM h, unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::text[], $6::bytea[])
	        WITH ORDINALITY AS d(kind, actor, aud, at, payload, raw, n)
)
SELECT h.seq, pg_notify($7, h.seq::text) FROM h, c`

// pgAppendSerial is pgAppend committing synchronously, holding the head
// through its fsync (Options.SerialFlush).
var pgAppendSerial = strings.Replace(pgAppend, "'off'", "current_setting('synchronous_commit')", 1)

// jsonbCan reports whether PostgreSQL's jsonb accepts raw, as far as can
// be told without asking it: it refuses invalid UTF-8, the \u0000 escape,
// and a surrogate escape that is not a high one followed by a low one (a
// lone surrogate, as JavaScript's JSON.stringify writes for a string cut
// mid-emoji). Such a payload keeps a NULL jsonb; its bytes are in raw as
// always. What only the server knows (a number past its numeric's range)
// is asked when it refuses a batch (jsonbRefused).
func jsonbCan(raw []byte) bool {
	return utf8.Valid(raw) && !bytes.Contains(raw, []byte(`\u0000`)) && pairedSurrogates(raw)
}

// pairedSurrogates reports whether every \uD800-\uDFFF escape of raw (valid
// JSON) is a high surrogate directly followed by a low one.
func pairedSurrogates(raw []byte) bool {
	surrogate := func(i int) (rune, bool) { // the escape at raw[i:] ("\\uXXXX")
		if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
			return 0, false
		}
		var r rune
		for _, c := range raw[i+2 : i+6] {
			switch {
			case c >= '0' && c <= '9':
				r = r<<4 | rune(c-'0')
			case c >= 'a' && c <= 'f':
				r = r<<4 | rune(c-'a'+10)
			case c >= 'A' && c <= 'F':
				r = r<<4 | rune(c-'A'+10)
			default:
				return 0, false
			}
		}
		return r, true
	}
	for i := bytes.IndexByte(raw, '\\'); i >= 0 && i < len(raw); {
		r, ok := surrogate(i)
		switch {
		case !ok:
			i += 2 // another escape: skip the escaped byte
		case r >= 0xD800 && r <= 0xDBFF:
			if lo, ok := surrogate(i + 6); !ok || lo < 0xDC00 || lo > 0xDFFF {
				return false
			}
			i += 12
		case r >= 0xDC00 && r <= 0xDFFF:
			return false
		default:
			i += 6
		}
		j := bytes.IndexByte(raw[min(i, len(raw)):], '\\')
		if j < 0 {
			break
		}
		i += j
	}
	return true
}

// Head implements eventlog.Store. Every position up to the one returned is on disk.
func (p *store) Head(ctx context.Context) (int64, error) {
	if err := p.open(); err != nil {
		return 0, err
	}
	var head int64
	var xid string
	if p.serialFlush {
		err := p.pool.QueryRow(ctx, `SELECT seq FROM eventlog_head`).Scan(&head)
		return head, p.wrap(err)
	}
	// The read writes a WAL record in its own transaction, so it commits
	// synchronously (flushWAL): the flush covers every commit it saw, and
	// every position Head reports is on disk.
	err := p.pool.QueryRow(ctx, `SELECT seq, `+pgFlushRecord+`::text FROM eventlog_head`).Scan(&head, &xid)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42501" { // insufficient_privilege
		// A role that may not write the record: read the head and the
		// WAL's insert position, and wait for the flush to pass it.
		var lsn string
		err = p.pool.QueryRow(ctx, `SELECT seq, pg_current_wal_insert_lsn()::text FROM eventlog_head`).Scan(&head, &lsn)
		if err == nil {
			err = p.waitFlushed(ctx, lsn)
		}
	}
	return head, p.wrap(err)
}

// scanPage is how many envelopes Scan reads per query.
const scanPage = 1000

// Scan implements eventlog.Store. Payloads are not read. The envelopes are read a
// page at a time, and fn is called between queries, so fn may use the store.
func (p *store) Scan(ctx context.Context, from, upto int64, fn func(eventlog.Envelope) error) error {
	if err := p.open(); err != nil {
		return err
	}
	from = max(from, 1)
	for from <= upto {
		last := min(upto, from+scanPage-1)
		rows, err := p.pool.Query(ctx,
			`SELECT seq, kind, actor, audience, at FROM events WHERE seq >= $1 AND seq <= $2 ORDER BY seq`, from, last)
		if err != nil {
			return p.wrap(err)
		}
		var envs []eventlog.Envelope
		for rows.Next() {
			var env eventlog.Envelope
			if err := rows.Scan(&env.Seq, &env.Kind, &env.Actor, &env.Audience, &env.At); err != nil {
				rows.Close()
				return p.wrap(err)
			}
			envs = append(envs, fixEnvelope(env))
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return p.wrap(err)
		}
		for _, e := range envs {
			if err := fn(e); err != nil {
				return err
			}
		}
		if len(envs) == 0 || last == upto {
			return nil
		}
		from = last + 1
	}
	return nil
}

func fixEnvelope(env eventlog.Envelope) eventlog.Envelope {
	if len(env.Audience) == 0 {
		env.Audience = nil
	}
	env.At = env.At.UTC()
	return env
}

// Get implements eventlog.Store. The payload is the bytes that were appended.
func (p *store) Get(ctx context.Context, seq int64) (eventlog.Event, error) {
	if err := p.open(); err != nil {
		return eventlog.Event{}, err
	}
	var e eventlog.Event
	var raw []byte
	err := p.pool.QueryRow(ctx, `SELECT seq, kind, actor, audience, at, raw FROM events WHERE seq = $1`, seq).
		Scan(&e.Seq, &e.Kind, &e.Actor, &e.Audience, &e.At, &raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return eventlog.Event{}, fmt.Errorf("%w: %d", eventlog.ErrNoEvent, seq)
	}
	if err != nil {
		return eventlog.Event{}, p.wrap(err)
	}
	e.Envelope = fixEnvelope(e.Envelope)
	e.Payload = raw
	return e, nil
}

// LoadProjection implements eventlog.Store.
func (p *store) LoadProjection(ctx context.Context, name string) (eventlog.Projection, bool, error) {
	if err := p.open(); err != nil {
		return eventlog.Projection{}, false, err
	}
	var pr eventlog.Projection
	err := p.pool.QueryRow(ctx, `SELECT upto, state FROM projections WHERE name = $1`, name).Scan(&pr.Upto, &pr.State)
	if errors.Is(err, pgx.ErrNoRows) {
		return eventlog.Projection{}, false, nil
	}
	if len(pr.State) == 0 {
		pr.State = nil
	}
	return pr, err == nil, p.wrap(err)
}

// SaveProjection implements eventlog.Store: state and position in one statement, so
// one transaction.
func (p *store) SaveProjection(ctx context.Context, name string, pr eventlog.Projection) error {
	if err := p.open(); err != nil {
		return err
	}
	state := pr.State
	if state == nil {
		state = []byte{}
	}
	_, err := p.pool.Exec(ctx,
		`INSERT INTO projections (name, upto, state) VALUES ($1, $2, $3)
		 ON CONFLICT (name) DO UPDATE SET upto = excluded.upto, state = excluded.state`, name, pr.Upto, state)
	return p.wrap(err)
}

// DropProjection implements eventlog.Store.
func (p *store) DropProjection(ctx context.Context, name string) error {
	if err := p.open(); err != nil {
		return err
	}
	_, err := p.pool.Exec(ctx, `DELETE FROM projections WHERE name = $1`, name)
	return p.wrap(err)
}

// Close implements eventlog.Store: it stops the listener and closes the pool. A
// second Close does nothing.
func (p *store) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	l := p.listener
	p.mu.Unlock()
	if l != nil {
		l.stop()
	}
	p.notify.Wake()
	p.cancel()
	p.pool.Close()
	return nil
}

func (p *store) open() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return eventlog.ErrClosed
	}
	return nil
}

func (p *store) wrap(err error) error {
	if err == nil {
		return nil
	}
	if p.open() != nil {
		return fmt.Errorf("%w: %v", eventlog.ErrClosed, err)
	}
	return fmt.Errorf("eventlog: %w", err)
}
