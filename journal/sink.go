package journal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/promptloom/promptloom/internal/chain"
)

// A Sink is where a journal's lines go: an append-only chain of lines that
// it keeps whole. Append hands build the chain's tail under the sink's own
// lock (the hash of the last line and its seq; chain.Genesis and 0 for an empty
// chain) and writes the lines build returns as one atomic, durable unit, or
// none of them. Open's file sink lets many journals, in many processes,
// share one chain; a database sink (package journal/postgres) keeps one
// chain per session. Implementations are safe for concurrent use.
type Sink interface {
	Append(ctx context.Context, build func(t Tail) ([]byte, error)) error
	Close() error
}

// Tail is where a sink's next line goes: after the line whose hash is Prev,
// numbered Seq+1. Fresh says the sink's chain was cut back under an open
// journal (a file truncated by a log rotation): the journal then starts its
// session again from Fresh's tail, as a new file needs.
type Tail struct {
	Prev  string
	Seq   int64
	Fresh bool
	// sessions, when the sink can tell (a file's), says which session
	// ids the chain has opened.
	sessions sessionsHeld
}

// writerSink keeps the chain's tail for an io.Writer it alone writes.
type writerSink struct {
	mu sync.Mutex
	w  io.Writer
	t  Tail
	// broken is set once a write failed or panicked: part of a line may
	// be out, and a writer cannot be read back to mend it, so nothing more
	// is written after it (a chain cannot go on from a torn line).
	broken error
}

func (s *writerSink) Append(ctx context.Context, build func(Tail) ([]byte, error)) error {
	return s.appendBuilt(ctx, built(build))
}

func (s *writerSink) appendBuilt(_ context.Context, build func(Tail) ([]byte, *Tail, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken != nil {
		return s.broken
	}
	lines, after, err := build(s.t)
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			s.broken = errors.New("journal: an earlier write to the transcript failed part way, so its chain cannot go on")
		}
	}()
	if _, err := s.w.Write(lines); err != nil {
		return fmt.Errorf("journal: write: %w", err)
	}
	done = true
	s.t = tailOf(after, s.t, lines)
	return nil
}

// builderSink is a sink of this package: its appendBuilt is Append with
// build also giving the chain's tail after the lines when it knows it (a
// lineBuilder does: it hashed each line as it built it), so the last line
// is not hashed again.
type builderSink interface {
	appendBuilt(ctx context.Context, build func(Tail) ([]byte, *Tail, error)) error
}

// laterSink is a sink whose appends can return before their lines are on
// stable storage (a file's: its fsync is most of an append's time), so
// that a request can be on its way while its line is synced.
type laterSink interface {
	// lazy leaves the fsync to the file's next append, or to
	// lazySyncWindow at the latest, rather than starting it now.
	appendLater(ctx context.Context, build func(Tail) ([]byte, *Tail, error), lazy bool) (synced func() error, err error)
}

// built is a Sink's build as appendBuilt's, the tail after it unknown.
func built(build func(Tail) ([]byte, error)) func(Tail) ([]byte, *Tail, error) {
	return func(t Tail) ([]byte, *Tail, error) {
		lines, err := build(t)
		return lines, nil, err
	}
}

// tailOf is the tail after lines written at t: after, when the builder
// gave it, else found from the lines.
func tailOf(after *Tail, t Tail, lines []byte) Tail {
	if after == nil || len(lines) == 0 {
		return tailAfter(t, lines)
	}
	return Tail{Prev: after.Prev, Seq: after.Seq}
}

func (s *writerSink) Close() error { return nil }

// tailAfter is t moved past lines (whole lines, each ended by "\n").
func tailAfter(t Tail, lines []byte) Tail {
	if len(lines) == 0 {
		return t
	}
	body := bytes.TrimSuffix(lines, []byte("\n"))
	last := body[bytes.LastIndexByte(body, '\n')+1:]
	return Tail{Prev: chain.LineHash(last), Seq: t.Seq + int64(bytes.Count(body, []byte("\n"))+1)}
}

// fileSink is a transcript file shared by any number of writers: every
// append is one O_APPEND write of whole lines under an exclusive flock, and
// each writer reads the chain's end under the lock before it writes.
type fileSink struct {
	mu    sync.Mutex
	f     *os.File
	limit int
	t     Tail
	size  int64     // the file's size when t was read
	start int64     // where the line t.Prev hashes starts (when size > 0)
	mtime time.Time // the file's modification time after this sink's last write, if then its size was size
	// syncs are the file's, shared by every sink of it in this process
	// (fileSessions): one fsync of the file makes every write before it
	// durable, whichever sink wrote it.
	syncs *syncs
	// sessions are the ids the file opens, as far as this process read it.
	sessions *fileSessions
	// lineage is the run of this process's appends to the file that this
	// sink's last append was in (sharedTail); 0: none yet.
	lineage uint64
}

// tailReads counts the appends that read the file's tail back (a test's
// measure of sharedTail).
var tailReads atomic.Int64

// sharedTail is where the last append of any sink of a file in this
// process left the file: its size and modification time then, and the
// chain's tail. The file's sessions each have a sink of their own (a
// proxy's sessions share one file), and each would otherwise read back
// the tail that another just wrote.
//
// A lineage is a run of appends each of which found the file as the one
// before it left it (the same size and modification time). A sink whose
// last append is in the latest lineage, and which finds the file as that
// lineage's last append left it, knows that only the lineage's appends
// came after its own: the file was not cut back under it, and the tail
// here is the file's. Any other sink checks the file itself, as a sink
// alone does, and its append starts a new lineage unless it too found the
// file as the last append left it.
type sharedTail struct {
	mu      sync.Mutex
	ok      bool
	size    int64
	start   int64
	mtime   time.Time
	t       Tail
	lineage uint64
	runs    uint64 // lineages begun

	// syncs is the file's group commit (fileSink.syncs).
	syncs syncs
}

// syncs is group commit for a file's appends, those of every sink of the
// file in the process: each write is numbered (under the file's lock, so
// in the order of the writes), and one fsync makes every write numbered
// before it durable, so appends that wait together share one, whichever
// session made them. The first failed fsync is the file's last word:
// what the kernel kept of its writes is unknown, so nothing more is
// appended and every wait returns it.
type syncs struct {
	mu              sync.Mutex
	done            sync.Cond
	written, synced uint64
	running         bool
	err             error
}

// syncFile is f.Sync, or a test's stand-in for it.
var syncFile = (*os.File).Sync

// wrote numbers a write just made.
func (y *syncs) wrote() uint64 {
	y.mu.Lock()
	defer y.mu.Unlock()
	y.written++
	return y.written
}

// through returns once write n is on stable storage, syncing f (or
// waiting for the fsync under way) as often as that needs.
func (y *syncs) through(f *os.File, n uint64) error {
	y.mu.Lock()
	defer y.mu.Unlock()
	if y.done.L == nil {
		y.done.L = &y.mu
	}
	for y.synced < n && y.err == nil {
		if y.running {
			y.done.Wait()
			continue
		}
		y.running = true
		upto := y.written
		y.mu.Unlock()
		err := syncFile(f)
		y.mu.Lock()
		y.running = false
		if err != nil {
			y.err = fmt.Errorf("journal: sync: %w", err)
		} else {
			y.synced = max(y.synced, upto)
		}
		y.done.Broadcast()
	}
	if y.synced >= n {
		return nil
	}
	return y.err
}

// last is the number of the latest write.
func (y *syncs) last() uint64 {
	y.mu.Lock()
	defer y.mu.Unlock()
	return y.written
}

// failed is the fsync failure that ended the file, if one did.
func (y *syncs) failed() error {
	y.mu.Lock()
	defer y.mu.Unlock()
	return y.err
}

// openFile opens (creating it if need be) a transcript file, repairing a
// torn last line of a promptloom transcript; it changes nothing in a file it
// refuses.
func openFile(path string, limit int) (*fileSink, int, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, 0, fmt.Errorf("journal: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("journal: lock: %w", err)
	}
	defer unlockFile(f)
	cut, size, err := repairTail(f, limit)
	var t tail
	if err == nil {
		t, err = readTail(f, size, limit)
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	k := sessionsOf(path)
	return &fileSink{f: f, limit: limit, t: Tail{Prev: t.prev, Seq: t.seq}, size: t.size, start: t.start, sessions: k, syncs: &k.tail.syncs}, cut, nil
}

// opened reports whether the file opens session id, for the build of a
// write (s.mu and the file's lock are held, and s's tail is the file's).
func (s *fileSink) opened(id string) (bool, error) {
	return s.sessions.has(s.f, s.size, s.start, s.t.Prev, s.limit, id)
}

func (s *fileSink) Append(ctx context.Context, build func(Tail) ([]byte, error)) error {
	return s.appendBuilt(ctx, built(build))
}

func (s *fileSink) appendBuilt(_ context.Context, build func(Tail) ([]byte, *Tail, error)) error {
	n, err := s.write(build)
	if err != nil {
		return err
	}
	return s.syncs.through(s.f, n)
}

// appendLater is appendBuilt returning once the lines are written (a
// process that dies now keeps them: they are the kernel's), their fsync
// under way, or with lazy left to the next append's fsync (any session's:
// the file's syncs are shared) or lazySyncWindow from now, whichever
// comes first; synced returns once they are on stable storage.
func (s *fileSink) appendLater(_ context.Context, build func(Tail) ([]byte, *Tail, error), lazy bool) (synced func() error, err error) {
	n, err := s.write(build)
	if err != nil {
		return nil, err
	}
	switch {
	case n > 0 && lazy:
		time.AfterFunc(lazySyncWindow, func() { s.syncs.through(s.f, n) })
	case n > 0:
		go s.syncs.through(s.f, n)
	}
	return func() error { return s.syncs.through(s.f, n) }, nil
}

// lazySyncWindow is the longest a lazy append's lines wait for an fsync
// (Options.DeferOutcomeSync): the next call's request, synced before its
// answer, usually carries them sooner. (A variable for a test.)
var lazySyncWindow = 10 * time.Millisecond

// write appends build's lines under the file's lock and numbers the write
// (0 when there were no lines).
func (s *fileSink) write(build func(Tail) ([]byte, *Tail, error)) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.syncs.failed(); err != nil {
		return 0, err
	}
	if err := lockFile(s.f); err != nil {
		return 0, fmt.Errorf("journal: lock: %w", err)
	}
	defer unlockFile(s.f)
	st, err := s.f.Stat()
	if err != nil {
		return 0, fmt.Errorf("journal: %w", err)
	}
	// Cut back under us (logrotate's copytruncate): what this journal
	// knew of the chain is gone, so its session starts again. The file may
	// have grown again since (other writers, in the new file), to any size:
	// it is ours still only if the last line this sink knows is where it
	// was, byte for byte.
	// The same size and modification time as after this sink's last
	// write: nothing has written the file since, and the line is where it
	// was without reading it back.
	untouched := st.Size() == s.size && !s.mtime.IsZero() && st.ModTime().Equal(s.mtime)
	var shared *sharedTail
	if s.sessions != nil {
		shared = &s.sessions.tail
	}
	continuing := false // the file is as this process's last append left it
	if shared != nil {
		shared.mu.Lock()
		continuing = shared.ok && st.Size() == shared.size && st.ModTime().Equal(shared.mtime)
		if continuing && !untouched && s.lineage == shared.lineage {
			// Appended to since this sink's last append by its lineage
			// only: its tail is the file's.
			s.t, s.size, s.start, s.mtime = shared.t, shared.size, shared.start, shared.mtime
			untouched = true
		}
		shared.mu.Unlock()
	}
	fresh := s.size > 0 && !untouched && (st.Size() < s.size || !s.holdsLast())
	if fresh || st.Size() != s.size {
		tailReads.Add(1)
		_, size, err := repairTail(s.f, s.limit)
		var t tail
		if err == nil {
			t, err = readTail(s.f, size, s.limit)
		}
		if err != nil {
			return 0, err
		}
		s.t, s.size, s.start = Tail{Prev: t.prev, Seq: t.seq}, t.size, t.start
	}
	at := s.t
	at.Fresh, at.sessions = fresh, s
	lines, after, err := build(at)
	if err != nil || len(lines) == 0 {
		return 0, err
	}
	if _, err := s.f.Write(lines); err != nil {
		return 0, fmt.Errorf("journal: write: %w", err)
	}
	n := s.syncs.wrote()
	s.t = tailOf(after, s.t, lines)
	s.start = s.size + int64(bytes.LastIndexByte(lines[:len(lines)-1], '\n')+1)
	s.size += int64(len(lines))
	s.mtime = time.Time{}
	if st, err := s.f.Stat(); err == nil && st.Size() == s.size {
		s.mtime = st.ModTime()
	}
	if shared != nil {
		shared.mu.Lock()
		if !continuing || !shared.ok {
			shared.runs++
			shared.lineage = shared.runs
		}
		s.lineage = shared.lineage
		shared.ok = !s.mtime.IsZero()
		shared.size, shared.start, shared.mtime, shared.t = s.size, s.start, s.mtime, Tail{Prev: s.t.Prev, Seq: s.t.Seq}
		shared.mu.Unlock()
	}
	return n, nil
}

// holdsLast reports whether the file still holds, where this sink wrote or
// read it, the line whose hash is t.Prev, ended by its newline. It reads
// that one line. s.mu and the file lock are held; s.size > 0.
func (s *fileSink) holdsLast() bool {
	if s.size-s.start > int64(s.limit)+1 {
		return false
	}
	line := make([]byte, s.size-s.start)
	if _, err := s.f.ReadAt(line, s.start); err != nil {
		return false
	}
	return line[len(line)-1] == '\n' && chain.LineHash(line[:len(line)-1]) == s.t.Prev
}

func (s *fileSink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	serr := s.syncs.through(s.f, s.syncs.last())
	if s.sessions != nil {
		s.sessions.release()
		s.sessions = nil
	}
	if err := s.f.Close(); err != nil {
		return err
	}
	return serr
}
