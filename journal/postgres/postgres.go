// Package postgres keeps transcripts in a PostgreSQL database, so that a
// fleet of harness workers, on machines that come and go, records into one
// place: each Sink appends to a chain of its own (name it after its
// journal's session; a second sink on one chain is refused with
// ErrOtherWriter), many workers append to many chains at once, and an
// auditor reads every chain from the database instead of collecting files.
// Importing it is what links pgx; package journal links no database.
//
// A chain is what a transcript file is: lines, each whole, in order, with
// no gap. An Append is one transaction that locks the chain's row, hands
// the journal the chain's tail, and inserts the lines it builds, so a
// worker killed mid-call leaves whole appends only, and the next line of a
// chain is always the one after its last. A Store is also an fs.FS of its
// chains: fs.ReadDir(store, ".") lists them, and store.Open(name) reads
// one's lines as the bytes of the transcript file they would be. A file
// transcript is imported as one chain by one Append that writes its lines
// as they are (see the example), and reads back byte for byte.
//
// The tables are created by Open with Options.Migrate, the one step that
// needs CREATE on the schema; every other Open needs only the privileges
// to read and append (docs/postgres.md, "Transcripts").
package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/internal/dsn"
	"github.com/promptloom/promptloom/internal/pgschema"
	"github.com/promptloom/promptloom/journal"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Options configure a Store. The zero value (or nil) is the default.
type Options struct {
	// Migrate creates the transcript tables when the schema has none, or
	// checks the version of those it has. It needs CREATE on the schema;
	// without it, Open needs only what reading and appending need, and a
	// schema without the tables is an error matching fs.ErrNotExist.
	Migrate bool
}

// Store is a PostgreSQL database of transcript chains. It is safe for
// concurrent use; its Sinks share its connections (a pgx pool: set
// pool_max_conns in the URL).
type Store struct {
	pool *pgxpool.Pool
}

// schemaVersion is the version of the transcript tables this build writes
// and reads.
const schemaVersion = 1

// genesis is the prev of a chain's first line (journal's).
var genesis = digest.Digest{}.String()

// pgSchema creates the version-1 tables.
const pgSchema = `
CREATE TABLE transcript_chains (
	chain text        PRIMARY KEY CHECK (chain <> ''),
	seq   bigint      NOT NULL CHECK (seq >= 0),
	head  text        NOT NULL,
	bytes bigint      NOT NULL CHECK (bytes >= 0),
	at    timestamptz NOT NULL
);
CREATE TABLE transcript_lines (
	chain text   NOT NULL REFERENCES transcript_chains (chain),
	seq   bigint NOT NULL CHECK (seq > 0),
	line  bytea  NOT NULL,
	PRIMARY KEY (chain, seq)
);
INSERT INTO transcript_schema (version) VALUES (1);`

// Open connects to the database at url (postgres:// or postgresql://, as
// pgx reads it; search_path picks the schema) and checks its transcript
// tables: their version must be this build's (else an error matching
// errors.ErrUnsupported, and nothing is changed).
func Open(ctx context.Context, url string, o *Options) (*Store, error) {
	pcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, openError(url, err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, openError(url, err)
	}
	s := &Store{pool: pool}
	if err := s.checkTables(ctx, o != nil && o.Migrate); err != nil {
		pool.Close()
		return nil, openError(url, err)
	}
	return s, nil
}

// openError is an error of Open: the URL and the error, neither showing a
// secret of the URL (internal/dsn).
func openError(url string, err error) error {
	return fmt.Errorf("journal/postgres: open %s: %w", dsn.Redacted(url), dsn.Error(url, err))
}

// transcriptTables is the store's versioned schema (internal/pgschema).
var transcriptTables = pgschema.Schema{Table: "transcript_schema", Lock: "promptloom transcript schema", Create: pgSchema}

// checkTables checks the schema's version, creating the tables first with
// migrate when it has none.
func (s *Store) checkTables(ctx context.Context, migrate bool) error {
	// A search_path naming no usable schema is said as such, not as a
	// schema without the tables, nor as the server's 3F000 when creating
	// them.
	if _, err := pgschema.Current(ctx, s.pool); err != nil {
		return err
	}
	var version int
	var err error
	if migrate {
		version, err = transcriptTables.Migrate(ctx, s.pool)
	} else {
		version, err = transcriptTables.Version(ctx, s.pool)
	}
	switch {
	case err != nil:
		return err
	case version == 0:
		return fmt.Errorf("no transcript tables in this schema (create them with Options.Migrate): %w", fs.ErrNotExist)
	case version != schemaVersion:
		return fmt.Errorf("the transcript tables have schema version %d, this build reads version %d: %w", version, schemaVersion, errors.ErrUnsupported)
	}
	return nil
}

// Close closes the store's connections. Its Sinks' Close closes nothing.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// validChain reports whether name can name a chain: a file name as io/fs
// takes one (not empty, ".", "..", nor holding a slash), UTF-8 with no NUL
// byte or other control character.
func validChain(name string) bool {
	if !fs.ValidPath(name) || name == "." || strings.Contains(name, "/") || !utf8.ValidString(name) {
		return false
	}
	return strings.IndexFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) < 0
}

// Sink returns the sink of the chain named name, created by its first
// append. Name it after its journal's session (journal.Options.Session):
// a journal's lines are then its session's chain, as Verify reads them.
// A name that cannot name a chain (see fs.ValidPath; no slash) makes every
// Append fail with an error matching fs.ErrInvalid.
func (s *Store) Sink(name string) journal.Sink {
	return &sink{s: s, chain: name}
}

// sink appends to one chain.
type sink struct {
	s     *Store
	chain string
	mu    sync.Mutex // one append at a time through this sink
	// head is the hash of the last line this sink wrote, "" before its
	// first: the chain's tail must still be it at the next append, or
	// another writer has appended in between.
	head string
	// unsettled is an append whose COMMIT went unanswered and whose lines
	// could not be looked for then: the next append looks for them first.
	unsettled *written
}

// written is an append's lines as sent: the chain's seq before them, the
// lines without their newlines, and the hash of the last.
type written struct {
	seq   int64
	lines [][]byte
	head  string
}

// ErrOtherWriter is an append refused because the chain is, or was, being
// written by another sink: a chain is one sink's, as a file is one
// journal's, and two writers on it would chain lines of two sessions of one
// name that no longer verify.
var ErrOtherWriter = errors.New("the chain has another writer")

// ErrUnconfirmed is an append whose COMMIT was sent but not answered (a
// connection cut, a context ended), and whose lines could not be looked
// for in the chain within ten seconds (the server out of reach): they may
// be in it or not. The sink's next append looks for them before anything
// else and goes on from what the chain holds.
var ErrUnconfirmed = errors.New("the append's commit was not confirmed")

// Append implements journal.Sink: one transaction locks the chain's row,
// hands build its tail, and inserts the lines build returns. It is two
// round trips to the server: BEGIN and the locking read are sent
// together, and so are the insert and COMMIT. When the COMMIT's answer
// does not come (a connection cut after the server ran it), Append looks
// in the chain for the lines it sent: there, byte for byte, the append
// succeeded; not there, it failed, and the next one follows the last
// whole line as ever; not known within ten seconds, the error is
// ErrUnconfirmed.
func (k *sink) Append(ctx context.Context, build func(journal.Tail) ([]byte, error)) error {
	if !validChain(k.chain) {
		return &fs.PathError{Op: "append", Path: k.chain, Err: fs.ErrInvalid}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if w := k.unsettled; w != nil {
		found, err := k.settle(ctx, w)
		if err != nil {
			return k.unconfirmed(w, "an earlier append's COMMIT went unanswered", err)
		}
		k.unsettled = nil
		if found {
			k.head = w.head
		}
	}
	conn, err := k.s.pool.Acquire(ctx)
	if err != nil {
		return k.wrap(err)
	}
	// A connection still in a transaction (an error below) is closed by
	// Release, which rolls it back.
	defer conn.Release()
	t := journal.Tail{Prev: genesis}
	var size int64
	var begin pgx.Batch
	begin.Queue(`BEGIN`)
	begin.Queue(pgLock, k.chain).QueryRow(func(r pgx.Row) error { return r.Scan(&t.Seq, &t.Prev, &size) })
	err = conn.SendBatch(ctx, &begin).Close()
	if errors.Is(err, pgx.ErrNoRows) {
		// The chain's first append: its row, locked until the lines are in.
		_, err = conn.Exec(ctx, `INSERT INTO transcript_chains (chain, seq, head, bytes, at) VALUES ($1, 0, $2, 0, now())
			ON CONFLICT (chain) DO NOTHING`, k.chain, genesis)
		if err == nil {
			err = conn.QueryRow(ctx, pgLock, k.chain).Scan(&t.Seq, &t.Prev, &size)
		}
	}
	if err != nil {
		return k.wrap(err)
	}
	out, err := build(t)
	if err == nil && len(out) > 0 && out[len(out)-1] != '\n' {
		err = fmt.Errorf("journal/postgres: chain %s: lines must each end in a newline", k.chain)
	}
	if err == nil && len(out) > 0 {
		err = k.sole(t)
	}
	if err != nil || len(out) == 0 {
		if _, rerr := conn.Exec(ctx, `ROLLBACK`); rerr != nil && err == nil {
			err = k.wrap(rerr)
		}
		return err
	}
	ls := strings.Split(string(out[:len(out)-1]), "\n")
	rows := make([][]byte, len(ls))
	for i, l := range ls {
		rows[i] = []byte(l)
	}
	head := digest.Bytes(rows[len(rows)-1]).String()
	var commit pgx.Batch
	commit.Queue(pgInsert, k.chain, t.Seq, head, len(out), rows)
	commit.Queue(`COMMIT`)
	if err := conn.SendBatch(ctx, &commit).Close(); err != nil {
		// The COMMIT may have run with its answer lost: only the server
		// knows, and the lines are looked for there. The connection is
		// closed first, so that a transaction still open on it ends (a
		// COMMIT the server has run stays run).
		c := conn.Hijack()
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		c.Close(cctx)
		cancel()
		w := &written{seq: t.Seq, lines: rows, head: head}
		found, serr := k.settle(ctx, w)
		switch {
		case serr != nil:
			k.unsettled = w
			return k.unconfirmed(w, "no answer to the COMMIT: "+err.Error(), serr)
		case !found:
			return fmt.Errorf("journal/postgres: chain %s: lines %d to %d were not written (looked for after no answer to their COMMIT): %w",
				k.chain, t.Seq+1, t.Seq+int64(len(rows)), err)
		}
	}
	k.head = head
	return nil
}

// settleFor bounds how long an append whose COMMIT went unanswered looks
// for its lines; the error is then ErrUnconfirmed.
var settleFor = 10 * time.Second

// settle reports whether the chain holds w's lines, byte for byte, at
// the seqs they were sent for. It waits for the row locks of the chain, so
// the transaction that sent them has ended, committed or not, before it
// reads; it tries again until settleFor has passed (its caller's context
// may be what ended the append, so it is not the bound).
func (k *sink) settle(ctx context.Context, w *written) (bool, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleFor)
	defer cancel()
	backoff := 20 * time.Millisecond
	for {
		found, err := k.lookFor(ctx, w)
		if err == nil {
			return found, nil
		}
		select {
		case <-ctx.Done():
			return false, err
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// lookFor is one try of settle, in a transaction it rolls back. The insert
// waits for a transaction that created the chain's row (a first append)
// to end, and the locking read for one that holds the row; lock_timeout
// is the time settle has left, so the server gives up when it does.
func (k *sink) lookFor(ctx context.Context, w *written) (bool, error) {
	tx, err := k.s.pool.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	wait := "0"
	if d, ok := ctx.Deadline(); ok {
		wait = fmt.Sprint(max(time.Until(d).Milliseconds(), 1))
	}
	var seq int64
	b := &pgx.Batch{}
	b.Queue(`SELECT set_config('lock_timeout', $1, true)`, wait)
	b.Queue(`INSERT INTO transcript_chains (chain, seq, head, bytes, at) VALUES ($1, 0, $2, 0, now())
		ON CONFLICT (chain) DO NOTHING`, k.chain, genesis)
	b.Queue(`SELECT seq FROM transcript_chains WHERE chain = $1 FOR SHARE`, k.chain).QueryRow(func(r pgx.Row) error { return r.Scan(&seq) })
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return false, err
	}
	last := w.seq + int64(len(w.lines))
	if seq < last {
		return false, nil
	}
	rows, err := tx.Query(ctx, `SELECT line FROM transcript_lines WHERE chain = $1 AND seq > $2 AND seq <= $3 ORDER BY seq`, k.chain, w.seq, last)
	if err != nil {
		return false, err
	}
	i := 0
	found := true
	for rows.Next() {
		var line []byte
		if err := rows.Scan(&line); err != nil {
			rows.Close()
			return false, err
		}
		if i >= len(w.lines) || !bytes.Equal(line, w.lines[i]) {
			found = false
		}
		i++
	}
	if err := rows.Err(); err != nil {
		return false, err
	}
	return found && i == len(w.lines), nil
}

// unconfirmed is ErrUnconfirmed for w: why its COMMIT went unanswered,
// and why its lines could not be looked for.
func (k *sink) unconfirmed(w *written, why string, err error) error {
	return fmt.Errorf("journal/postgres: chain %s: lines %d to %d: %w (%s); looking for them in the chain: %v",
		k.chain, w.seq+1, w.seq+int64(len(w.lines)), ErrUnconfirmed, why, err)
}

// sole refuses lines for a chain this sink is not the only writer of: at
// its first append the chain must be empty, and at every later one its
// tail must be the last line the sink wrote. Either way the chain is left
// as it was, and the writer that came second is the one refused.
func (k *sink) sole(t journal.Tail) error {
	switch {
	case k.head == "" && t.Seq > 0:
		return fmt.Errorf("journal/postgres: chain %s: %w: it already holds %d line(s); a chain is one sink's, so record under a new session name", k.chain, ErrOtherWriter, t.Seq)
	case k.head != "" && t.Prev != k.head:
		return fmt.Errorf("journal/postgres: chain %s: %w: line %d was appended since this sink's last", k.chain, ErrOtherWriter, t.Seq)
	}
	return nil
}

// pgLock reads a chain's tail and locks its row until the transaction
// ends: appends to one chain take turns, and a line's seq is always one
// more than the last.
const pgLock = `SELECT seq, head, bytes FROM transcript_chains WHERE chain = $1 FOR UPDATE`

// pgInsert moves the chain's tail past the lines and inserts them.
const pgInsert = `WITH u AS (
	UPDATE transcript_chains SET seq = $2 + cardinality($5::bytea[]), head = $3, bytes = bytes + $4, at = now() WHERE chain = $1
) INSERT INTO transcript_lines (chain, seq, line)
SELECT $1, $2 + d.n, d.l FROM unnest($5::bytea[]) WITH ORDINALITY AS d(l, n)`

func (k *sink) wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("journal/postgres: chain %s: %w", k.chain, err)
}

// Close implements journal.Sink; it closes nothing (Store.Close does).
func (k *sink) Close() error { return nil }

// readPage is how many lines a chain's reader fetches a query.
const readPage = 500

// Open implements fs.FS: "." is the directory of chains (fs.ReadDir lists
// them by name), and a chain's name opens its lines, read as the bytes of
// the transcript file they would be, as the chain stood when it was
// opened.
func (s *Store) Open(name string) (fs.File, error) {
	ctx := context.Background()
	if name == "." {
		return &dir{s: s}, nil
	}
	if !validChain(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	f := &chainFile{s: s, info: info{name: name}}
	err := s.pool.QueryRow(ctx, `SELECT seq, bytes, at FROM transcript_chains WHERE chain = $1`, name).Scan(&f.upto, &f.info.size, &f.info.mod)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return f, nil
}

// info is a chain's, or the directory's, fs.FileInfo.
type info struct {
	name string
	size int64
	mod  time.Time
	dir  bool
}

func (i info) Name() string       { return i.name }
func (i info) Size() int64        { return i.size }
func (i info) ModTime() time.Time { return i.mod }
func (i info) IsDir() bool        { return i.dir }
func (i info) Sys() any           { return nil }
func (i info) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}
func (i info) Type() fs.FileMode          { return i.Mode().Type() }
func (i info) Info() (fs.FileInfo, error) { return i, nil }

// chainFile reads a chain's lines, a page at a time.
type chainFile struct {
	s      *Store
	info   info
	upto   int64 // the chain's last seq when opened
	next   int64 // the last seq read
	buf    []byte
	closed bool
}

func (f *chainFile) Stat() (fs.FileInfo, error) { return f.info, nil }

func (f *chainFile) Read(p []byte) (int, error) {
	if f.closed {
		return 0, &fs.PathError{Op: "read", Path: f.info.name, Err: fs.ErrClosed}
	}
	for len(f.buf) == 0 {
		if f.next >= f.upto {
			return 0, io.EOF
		}
		rows, err := f.s.pool.Query(context.Background(), `SELECT seq, line FROM transcript_lines
			WHERE chain = $1 AND seq > $2 AND seq <= $3 ORDER BY seq LIMIT $4`, f.info.name, f.next, f.upto, readPage)
		if err != nil {
			return 0, &fs.PathError{Op: "read", Path: f.info.name, Err: err}
		}
		for rows.Next() {
			var seq int64
			var line []byte
			if err := rows.Scan(&seq, &line); err != nil {
				rows.Close()
				return 0, &fs.PathError{Op: "read", Path: f.info.name, Err: err}
			}
			if seq != f.next+1 {
				rows.Close()
				return 0, &fs.PathError{Op: "read", Path: f.info.name, Err: fmt.Errorf("line %d follows line %d", seq, f.next)}
			}
			f.next = seq
			f.buf = append(append(f.buf, line...), '\n')
		}
		if err := rows.Err(); err != nil {
			return 0, &fs.PathError{Op: "read", Path: f.info.name, Err: err}
		}
		if len(f.buf) == 0 {
			return 0, &fs.PathError{Op: "read", Path: f.info.name, Err: fmt.Errorf("lines %d to %d are missing", f.next+1, f.upto)}
		}
	}
	n := copy(p, f.buf)
	f.buf = f.buf[n:]
	if len(f.buf) == 0 {
		f.buf = f.buf[:0:0]
	}
	return n, nil
}

func (f *chainFile) Close() error {
	if f.closed {
		return &fs.PathError{Op: "close", Path: f.info.name, Err: fs.ErrClosed}
	}
	f.closed = true
	return nil
}

// dir is the directory of chains.
type dir struct {
	s       *Store
	entries []fs.DirEntry
	read    bool
	closed  bool
}

func (d *dir) Stat() (fs.FileInfo, error) { return info{name: ".", dir: true}, nil }

func (d *dir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: ".", Err: errors.New("is a directory")}
}

func (d *dir) Close() error {
	if d.closed {
		return &fs.PathError{Op: "close", Path: ".", Err: fs.ErrClosed}
	}
	d.closed = true
	return nil
}

// ReadDir implements fs.ReadDirFile: the chains, by name.
func (d *dir) ReadDir(n int) ([]fs.DirEntry, error) {
	if !d.read {
		rows, err := d.s.pool.Query(context.Background(), `SELECT chain, bytes, at FROM transcript_chains ORDER BY chain`)
		if err != nil {
			return nil, &fs.PathError{Op: "readdir", Path: ".", Err: err}
		}
		for rows.Next() {
			var i info
			if err := rows.Scan(&i.name, &i.size, &i.mod); err != nil {
				rows.Close()
				return nil, &fs.PathError{Op: "readdir", Path: ".", Err: err}
			}
			if validChain(i.name) {
				d.entries = append(d.entries, i)
			}
		}
		if err := rows.Err(); err != nil {
			return nil, &fs.PathError{Op: "readdir", Path: ".", Err: err}
		}
		d.read = true
	}
	if n <= 0 {
		out := d.entries
		d.entries = nil
		return out, nil
	}
	if len(d.entries) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(d.entries))
	out := d.entries[:n]
	d.entries = d.entries[n:]
	return out, nil
}
