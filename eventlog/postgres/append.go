package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/eventlog/internal/draft"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrUnconfirmed is a batch that committed (its positions are named) but
// whose flush to disk could not be confirmed afterwards: the wait for it
// failed, and so did every try, for as long as the appenders waited (at
// most unconfirmedWait), to read the batch back at its positions and see
// the WAL flushed past it. Readers may see it, and it is on disk unless the
// server crashed before flushing it. Append it again only after checking
// the log. The error says why the wait failed, but does not wrap the
// driver's error: the append statement itself was not refused.
var ErrUnconfirmed = errors.New("the batch committed, but its flush to disk was not confirmed")

// unconfirmedWait bounds how long Append tries to find out whether a batch
// whose flush wait failed is in the log and on disk.
const unconfirmedWait = 10 * time.Second

// groupLimit bounds the events one group-commit statement carries.
const groupLimit = 5000

// maxFlushers is how many group statements one store has in flight: one
// holds the head while the others are sent, parsed and waiting, so the
// server is never idle between groups.
const maxFlushers = 4

// appendReq is one Append waiting for the flusher.
type appendReq struct {
	ctx      context.Context
	drafts   []eventlog.Draft
	payloads [][]byte
	ats      []time.Time       // set when the batch is taken
	done     chan appendResult // buffered: the flusher never blocks on it
}

type appendResult struct {
	envs []eventlog.Envelope
	err  error
}

// Append implements eventlog.Store. The batch is queued; a flusher takes everything
// queued and writes it as one statement, so one transaction, each batch at
// consecutive positions, in the order they were queued. Up to maxFlushers
// groups are in flight at once, and take their positions in the order they
// reach the head. Concurrent appenders through one store share a commit
// (and its WAL flush) instead of taking turns on the head. Events are stamped when their group is taken,
// so across groups in flight at once a later position can carry an earlier
// time.
// Append returns once its batch is committed, or with ctx's error, in which
// case the batch may or may not be in the log (as with any network error);
// a ctx that is done before the batch is taken keeps it out, and once the
// contexts of every batch of a group are done its statement is cancelled
// (waiting for the head row, say). The group is written by a goroutine, so
// Append returns at ctx's end whatever the statement is waiting for.
func (p *store) Append(ctx context.Context, drafts ...eventlog.Draft) ([]eventlog.Envelope, error) {
	payloads, err := draft.Marshal(drafts)
	if err != nil {
		return nil, err
	}
	if err := checkText(drafts); err != nil {
		return nil, err
	}
	if err := p.open(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(drafts) == 0 {
		return []eventlog.Envelope{}, nil
	}
	req := &appendReq{ctx: ctx, drafts: drafts, payloads: payloads, done: make(chan appendResult, 1)}
	p.gmu.Lock()
	p.pending = append(p.pending, req)
	lead := p.flushers < maxFlushers
	if lead {
		p.flushers++
	}
	p.gmu.Unlock()
	if lead {
		go p.flush()
	}
	select {
	case r := <-req.done:
		return r.envs, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// checkText refuses text that PostgreSQL's text type cannot hold (invalid
// UTF-8 or a NUL byte), before anything is sent: the batch is refused
// whole, as eventlog.ErrInvalidDraft. Memory and SQLite keep such strings.
func checkText(drafts []eventlog.Draft) error {
	const badText = "not valid UTF-8 without NUL bytes, as PostgreSQL's text must be"
	bad := func(s string) bool { return !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 }
	for i, d := range drafts {
		switch {
		case bad(d.Kind):
			return fmt.Errorf("draft %d: %w: kind %q: %s", i, eventlog.ErrInvalidDraft, d.Kind, badText)
		case bad(d.Actor):
			return fmt.Errorf("draft %d (%s): %w: actor %q: %s", i, d.Kind, eventlog.ErrInvalidDraft, d.Actor, badText)
		}
		for _, r := range d.Audience {
			if bad(r) {
				return fmt.Errorf("draft %d (%s): %w: audience role %q: %s", i, d.Kind, eventlog.ErrInvalidDraft, r, badText)
			}
		}
	}
	return nil
}

// flush writes what is queued, group by group, until the queue is empty.
// The clock is read under gmu, so a clock need not be safe for concurrent
// use.
func (p *store) flush() {
	for {
		p.gmu.Lock()
		var group []*appendReq
		events := 0
		for len(p.pending) > 0 && (len(group) == 0 || events+len(p.pending[0].drafts) <= groupLimit) {
			r := p.pending[0]
			p.pending = p.pending[1:]
			if err := r.ctx.Err(); err != nil {
				r.done <- appendResult{err: err}
				continue
			}
			group = append(group, r)
			events += len(r.drafts)
		}
		if len(group) == 0 {
			p.flushers--
			p.gmu.Unlock()
			return
		}
		for _, r := range group {
			r.ats = make([]time.Time, len(r.drafts))
			for i := range r.ats {
				// timestamptz keeps microseconds: return what Get will read.
				r.ats[i] = p.clock().Truncate(time.Microsecond)
			}
		}
		p.gmu.Unlock()
		p.writeGroup(group, events)
	}
}

// writeGroup writes a group and answers each of its requests. A batch may
// be written a second time only when it is known not to be in the log: the
// server refused the statement (nothing of it was written), or the batch
// was found missing from the positions it had been given.
func (p *store) writeGroup(group []*appendReq, events int) {
	again, err := p.write(group, events)
	if again && len(group) > 1 {
		// Let each batch succeed or fail on its own.
		for _, r := range group {
			if _, err := p.write([]*appendReq{r}, len(r.drafts)); err != nil {
				r.done <- appendResult{err: err}
			}
		}
		return
	}
	if again && err == errLost {
		again, err = p.write(group, events)
		if again && err == errLost {
			err = errors.New("eventlog: the batch was lost twice (server crashes before its flush): not appended")
		}
	}
	if err != nil {
		for _, r := range group {
			r.done <- appendResult{err: err}
		}
	}
}

// groupContext is done once every request of the group is done (or the
// store is closed): a statement no appender waits for is cancelled.
func (p *store) groupContext(group []*appendReq) (context.Context, func()) {
	ctx, cancel := context.WithCancel(p.stop)
	live := len(group)
	var mu sync.Mutex
	stops := make([]func() bool, len(group))
	for i, r := range group {
		stops[i] = context.AfterFunc(r.ctx, func() {
			mu.Lock()
			defer mu.Unlock()
			if live--; live == 0 {
				cancel()
			}
		})
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}

// pgFlushRecord writes a WAL record (a logical decoding message with the
// prefix "promptloom", which decoders ignore unless asked for it) in the
// calling transaction. A transaction that has written WAL commits with a
// flush when synchronous_commit is on; one that only took an xid
// (txid_current()) does not, which TestPostgresServerCrash caught.
const pgFlushRecord = `pg_logical_emit_message(true, 'promptloom', 'flush')`

// flushWAL returns once every transaction committed before it was called
// is on disk: its own transaction writes a WAL record and commits
// synchronously, which flushes the WAL up to its commit record, past every
// earlier commit. Concurrent calls share their flushes (PostgreSQL's group
// commit).
func (p *store) flushWAL() error {
	if p.flushHook != nil {
		return p.flushHook()
	}
	var lsn string
	return p.pool.QueryRow(p.stop, `SELECT `+pgFlushRecord+`::text`).Scan(&lsn)
}

// errLost is a batch that committed but was then found missing from its
// positions (the server crashed before flushing it): it is not in the log.
var errLost = errors.New("eventlog: the batch was lost with the server before its flush, and is not in the log")

// write appends the group's batches in one statement and answers each
// request on success. again reports that none of the group is in the log,
// so it may be written again: the server refused the statement
// (err is its *pgconn.PgError), or the batch was found lost (errLost).
// Any other error may have come after the commit.
func (p *store) write(group []*appendReq, n int) (again bool, err error) {
	kinds, actors, auds := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	ats, jsons, raws := make([]time.Time, 0, n), make([]*string, 0, n), make([][]byte, 0, n)
	envs := make([][]eventlog.Envelope, len(group))
	for g, r := range group {
		envs[g] = make([]eventlog.Envelope, len(r.drafts))
		for i, d := range r.drafts {
			at := r.ats[i]
			kinds, actors = append(kinds, d.Kind), append(actors, d.Actor)
			auds, ats = append(auds, draft.AudienceJSON(d.Audience)), append(ats, at)
			var js *string
			if jsonbCan(r.payloads[i]) {
				s := string(r.payloads[i])
				js = &s
			}
			jsons, raws = append(jsons, js), append(raws, r.payloads[i])
			envs[g][i] = eventlog.Envelope{Kind: d.Kind, Actor: d.Actor, Audience: draft.Audience(d.Audience), At: at}
		}
	}
	ctx, done := p.groupContext(group)
	defer done()
	var head int64
	var ignored string
	stmt := pgAppend
	if p.serialFlush {
		stmt = pgAppendSerial
	}
	err = p.pool.QueryRow(ctx, stmt, kinds, actors, auds, ats, jsons, raws, p.channel).Scan(&head, &ignored)
	if err != nil && len(group) == 1 && jsonbRefusal(err) {
		// One batch refused for its data: a payload jsonb cannot hold
		// (past numeric's range, too deep) keeps a NULL jsonb, as the
		// payloads jsonbCan catches do; then the batch goes again.
		if changed, perr := p.jsonbRefused(ctx, jsons); perr != nil {
			return false, p.wrap(perr)
		} else if changed {
			err = p.pool.QueryRow(ctx, stmt, kinds, actors, auds, ats, jsons, raws, p.channel).Scan(&head, &ignored)
		}
	}
	if err != nil {
		var refused *pgconn.PgError
		return errors.As(err, &refused) && ctx.Err() == nil, p.wrap(err)
	}
	first := head - int64(n) + 1
	if !p.serialFlush {
		// The batch committed without waiting for its WAL flush: wait for
		// it now, outside the head, beside every other appender's wait.
		if ferr := p.flushWAL(); ferr != nil {
			switch err := p.confirm(ctx, first, kinds, actors, ats, raws); {
			case err == errLost:
				return true, errLost
			case err != nil:
				cause := fmt.Sprintf("%v (and then: %v)", ferr, err)
				if p.open() != nil {
					return false, fmt.Errorf("positions %d to %d: %w: %w: %s", first, head, ErrUnconfirmed, eventlog.ErrClosed, cause)
				}
				return false, fmt.Errorf("positions %d to %d: %w: %s", first, head, ErrUnconfirmed, cause)
			}
		}
	}
	seq := first - 1
	for g, r := range group {
		for i := range envs[g] {
			seq++
			envs[g][i].Seq = seq
		}
		r.done <- appendResult{envs: envs[g]}
	}
	return false, nil
}

// confirm finds out, after the wait for a batch's flush failed, whether the
// batch is in the log at the positions from first and on disk: nil if it
// is (its rows are read back, and the WAL is seen flushed past the point
// it was at once they were), errLost if those positions do not hold it
// (the server crashed before flushing it, and they were given back), or
// the last error of its tries, for as long as an appender waits (at most
// unconfirmedWait).
func (p *store) confirm(ctx context.Context, first int64, kinds, actors []string, ats []time.Time, raws [][]byte) error {
	ctx, cancel := context.WithTimeout(ctx, unconfirmedWait)
	defer cancel()
	last := first + int64(len(kinds)) - 1
	backoff := 20 * time.Millisecond
	var lsn string // the WAL's insert position once the batch was read back
	for {
		err := func() error {
			if lsn == "" {
				found, err := p.holds(ctx, first, last, kinds, actors, ats, raws)
				if err != nil {
					return err
				}
				if !found {
					return errLost
				}
				if err := p.pool.QueryRow(ctx, `SELECT pg_current_wal_insert_lsn()::text`).Scan(&lsn); err != nil {
					return err
				}
			}
			return p.waitFlushed(ctx, lsn)
		}()
		if err == nil || err == errLost {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// holds reports whether the positions first to last hold the batch: each
// row's kind, actor, time and payload bytes are the batch's own.
func (p *store) holds(ctx context.Context, first, last int64, kinds, actors []string, ats []time.Time, raws [][]byte) (bool, error) {
	rows, err := p.pool.Query(ctx, `SELECT seq, kind, actor, at, raw FROM events WHERE seq >= $1 AND seq <= $2 ORDER BY seq`, first, last)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var seq int64
		var kind, actor string
		var at time.Time
		var raw []byte
		if err := rows.Scan(&seq, &kind, &actor, &at, &raw); err != nil {
			return false, err
		}
		i := int(seq - first)
		if i != n || kind != kinds[i] || actor != actors[i] || !at.Equal(ats[i]) || !bytes.Equal(raw, raws[i]) {
			return false, rows.Err()
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return false, err
	}
	return n == len(kinds), nil
}

// jsonbRefusal reports whether err is the server refusing a statement for
// its data (SQLSTATE class 22, data exception, or 54, a limit exceeded), as
// it refuses a payload its jsonb cannot hold.
func jsonbRefusal(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (strings.HasPrefix(pe.Code, "22") || strings.HasPrefix(pe.Code, "54"))
}

// jsonbRefused asks the server, payload by payload, which of jsons its
// jsonb refuses, and sets those to nil (a NULL jsonb; the bytes stay in
// raw); changed reports whether any was. It runs only for a batch the
// server refused, outside the hold on the head.
func (p *store) jsonbRefused(ctx context.Context, jsons []*string) (changed bool, err error) {
	for i, js := range jsons {
		if js == nil {
			continue
		}
		var ok bool
		err := p.pool.QueryRow(ctx, `SELECT $1::text::jsonb IS NOT NULL`, *js).Scan(&ok)
		switch {
		case jsonbRefusal(err):
			jsons[i], changed = nil, true
		case err != nil:
			return false, err
		}
	}
	return changed, nil
}

// waitFlushed returns once the server's WAL is flushed past lsn (the
// WAL writer flushes what commits asynchronously within three times
// wal_writer_delay), or with ctx's error.
func (p *store) waitFlushed(ctx context.Context, lsn string) error {
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		var flushed bool
		if err := p.pool.QueryRow(ctx, `SELECT pg_current_wal_flush_lsn() >= $1::text::pg_lsn`, lsn).Scan(&flushed); err != nil {
			return err
		}
		if flushed {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the WAL is not flushed past %s: %w", lsn, ctx.Err())
		case <-time.After(wait):
		}
	}
}
