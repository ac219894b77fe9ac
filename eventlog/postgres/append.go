package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/eventlog/internal/draft"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrBadText is a kind, actor or audience role that PostgreSQL's text type
// cannot hold (invalid UTF-8 or a NUL byte): the batch is refused whole,
// before anything is sent. Memory and SQLite keep such strings.
var ErrBadText = errors.New("text is not valid UTF-8 without NUL bytes")

// ErrUnconfirmed is a batch that committed (its positions are named) but
// whose WAL flush could not be confirmed afterwards: readers may see it,
// and it is on disk unless the server crashed before flushing it. Append it
// again only after checking the log.
var ErrUnconfirmed = errors.New("the batch committed, but its flush to disk was not confirmed")

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
// reach the head. A lone appender writes its batch itself; concurrent
// appenders through one store share a commit (and its WAL flush) instead
// of taking turns on the head. Events are stamped when their group is taken,
// so across groups in flight at once a later position can carry an earlier
// time.
// Append returns once its batch is committed, or with ctx's error, in which
// case the batch may or may not be in the log (as with any network error);
// a ctx that is done before the batch is taken keeps it out.
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
		// Write one group here, with no hand-over to another goroutine;
		// anything still queued goes to a flusher goroutine.
		p.flush(1)
	}
	select {
	case r := <-req.done:
		return r.envs, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// checkText refuses text that PostgreSQL's text type cannot hold, before
// anything is sent.
func checkText(drafts []eventlog.Draft) error {
	bad := func(s string) bool { return !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 }
	for i, d := range drafts {
		switch {
		case bad(d.Kind):
			return fmt.Errorf("draft %d: kind %q: %w", i, d.Kind, ErrBadText)
		case bad(d.Actor):
			return fmt.Errorf("draft %d (%s): actor %q: %w", i, d.Kind, d.Actor, ErrBadText)
		}
		for _, r := range d.Audience {
			if bad(r) {
				return fmt.Errorf("draft %d (%s): audience role %q: %w", i, d.Kind, r, ErrBadText)
			}
		}
	}
	return nil
}

// flush writes what is queued, group by group, until the queue is empty or,
// when rounds > 0, after that many groups, handing what is left (and its
// flusher slot) to a goroutine. The clock is read under gmu, so a clock need
// not be safe for concurrent use.
func (p *store) flush(rounds int) {
	for ; ; rounds-- {
		p.gmu.Lock()
		if rounds == 0 {
			if len(p.pending) > 0 {
				go p.flush(-1)
			} else {
				p.flushers--
			}
			p.gmu.Unlock()
			return
		}
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
		var refused *pgconn.PgError
		if err := p.write(group, events); errors.As(err, &refused) && len(group) > 1 {
			// The server refused the append statement, so none of it is
			// written: let each batch succeed or fail on its own. (Any other
			// error may have come after the commit: never write twice.)
			for _, r := range group {
				if err := p.write([]*appendReq{r}, len(r.drafts)); err != nil {
					r.done <- appendResult{err: err}
				}
			}
		} else if err != nil {
			for _, r := range group {
				r.done <- appendResult{err: err}
			}
		}
	}
}

// pgFlushRecord writes a WAL record (a logical decoding message with the
// prefix "promptloom", which decoders ignore unless asked for it) in the
// calling transaction. A transaction that has written WAL commits with a
// flush when synchronous_commit is on; one that only took an xid
// (txid_current()) does not, which TestPostgresServerCrash caught.
const pgFlushRecord = `pg_logical_emit_message(true, 'promptloom', 'flush')`

// flushWAL returns once every transaction committed before it was called is
// on disk: its own transaction writes a WAL record and commits
// synchronously, which flushes the WAL up to its commit record, past every
// earlier commit. Concurrent calls share their flushes (PostgreSQL's group
// commit).
func (p *store) flushWAL() error {
	var lsn string
	return p.pool.QueryRow(p.stop, `SELECT `+pgFlushRecord+`::text`).Scan(&lsn)
}

// write appends the group's batches in one statement and answers each
// request; on error it answers none. Only an error refusing the append
// statement itself is a *pgconn.PgError: one from the flush after it (the
// batches are in, but not known to be on disk) is returned as
// ErrUnconfirmed, so the group is never written again.
func (p *store) write(group []*appendReq, n int) error {
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
	var head int64
	var ignored string
	stmt := pgAppend
	if p.serialFlush {
		stmt = pgAppendSerial
	}
	err := p.pool.QueryRow(p.stop, stmt, kinds, actors, auds, ats, jsons, raws, p.channel).Scan(&head, &ignored)
	if err != nil && len(group) == 1 && jsonbRefusal(err) {
		// One batch refused for its data: a payload jsonb cannot hold
		// (past numeric's range, too deep) keeps a NULL jsonb, as the
		// payloads jsonbCan catches do; then the batch goes again.
		if changed, perr := p.jsonbRefused(p.stop, jsons); perr != nil {
			return p.wrap(perr)
		} else if changed {
			err = p.pool.QueryRow(p.stop, stmt, kinds, actors, auds, ats, jsons, raws, p.channel).Scan(&head, &ignored)
		}
	}
	if err != nil {
		return p.wrap(err)
	}
	if !p.serialFlush {
		// The batch committed without waiting for its WAL flush: wait for
		// it now, outside the head, beside every other appender's wait.
		if err := p.flushWAL(); err != nil {
			return fmt.Errorf("positions %d to %d: %w: %w", head-int64(n)+1, head, ErrUnconfirmed, p.wrap(err))
		}
	}
	seq := head - int64(n)
	for g, r := range group {
		for i := range envs[g] {
			seq++
			envs[g][i].Seq = seq
		}
		r.done <- appendResult{envs: envs[g]}
	}
	return nil
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
