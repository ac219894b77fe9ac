package journal

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/promptloom/promptloom/digest"
)

// Open opens (creating it if need be) a transcript file for appending.
// Every append is one O_APPEND write of whole lines under an exclusive
// flock, so any number of Journals, in this process or others, may append
// to one file: each reads the chain's end under the lock before it writes.
// A torn last line (not complete JSON: only a crash during a write leaves
// one) is cut off, and Repaired says how many bytes; a complete last record
// that merely lacks its newline is kept and given one. Open reads the tail
// of the file, never all of it.
func Open(path string, opts *Options) (*Journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	j := New(nil, opts)
	j.f = f
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal: lock: %w", err)
	}
	defer unlockFile(f)
	cut, size, err := repairTail(f, j.maxLine)
	if err == nil {
		j.Repaired = cut
		j.tail, err = readTail(f, size, j.maxLine)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

// New returns a journal writing to w (no lock, no fsync: tests and
// in-memory runs; one Journal per writer).
func New(w io.Writer, opts *Options) *Journal {
	j := &Journal{w: w, clock: func() time.Time { return time.Now().UTC() }, last: map[string]string{},
		tail: tail{prev: genesis}, maxLine: opts.maxLine()}
	if opts != nil {
		if opts.Clock != nil {
			j.clock = opts.Clock
		}
		j.session = opts.Session
	}
	if j.session == "" {
		var b [8]byte
		rand.Read(b[:])
		j.session = hex.EncodeToString(b[:])
	}
	return j
}

// Close ends the journal's session with a journal_close line counting its
// calls (when it wrote any), then closes the file. A call begun before
// Close is let finish first, so its outcome is recorded; a call begun
// after is ErrClosed. A verifier reports a session with no close line as
// incomplete: the run was cut short.
func (j *Journal) Close() error {
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		return nil
	}
	j.closed = true
	j.mu.Unlock()
	j.running.Wait()
	j.mu.Lock()
	defer j.mu.Unlock()
	var err error
	if j.opened {
		err = j.append(func(b *lineBuilder) {
			b.line(kindClose, "session", quote(j.session), "calls", strconv.Itoa(j.calls))
		})
	}
	if j.f != nil {
		if cerr := j.f.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// lineBuilder builds a group of lines, chaining each to the one before.
type lineBuilder struct {
	strings.Builder
	t  tail
	at string
}

// line appends one line: prev, seq, kind, at, then fields (name, raw JSON
// pairs), and moves the chain on.
func (b *lineBuilder) line(kind string, fields ...string) {
	start := b.Len()
	b.t.seq++
	fmt.Fprintf(b, `{"prev":%s,"seq":%d,"kind":%s,"at":%s`, quote(b.t.prev), b.t.seq, quote(kind), quote(b.at))
	for i := 0; i < len(fields); i += 2 {
		fmt.Fprintf(b, ",%s:%s", quote(fields[i]), fields[i+1])
	}
	b.WriteByte('}')
	b.t.prev = digest.String(b.String()[start:]).String()
	b.WriteByte('\n')
}

// append builds lines after the chain's end and writes them in one write.
// For a file it holds the flock throughout, re-reads the chain's end when
// another writer appended since, and fsyncs: a process killed meanwhile
// leaves the whole group or a torn line the next Open cuts off. j.mu is
// held by the caller.
func (j *Journal) append(build func(*lineBuilder)) error {
	if j.f != nil {
		if err := lockFile(j.f); err != nil {
			return fmt.Errorf("journal: lock: %w", err)
		}
		defer unlockFile(j.f)
		st, err := j.f.Stat()
		if err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		if st.Size() != j.tail.size {
			_, size, err := repairTail(j.f, j.maxLine)
			if err == nil {
				j.tail, err = readTail(j.f, size, j.maxLine)
			}
			if err != nil {
				return err
			}
		}
	}
	b := &lineBuilder{t: j.tail, at: j.clock().Format(time.RFC3339Nano)}
	build(b)
	s := b.String()
	w := j.w
	if j.f != nil {
		w = j.f
	}
	if _, err := io.WriteString(w, s); err != nil {
		return fmt.Errorf("journal: write: %w", err)
	}
	if j.f != nil {
		if err := j.f.Sync(); err != nil {
			return fmt.Errorf("journal: sync: %w", err)
		}
	}
	b.t.size = j.tail.size + int64(len(s))
	j.tail = b.t
	return nil
}
