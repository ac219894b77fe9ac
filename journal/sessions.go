package journal

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/promptloom/promptloom/internal/chain"
	pjson "github.com/promptloom/promptloom/internal/json"
)

// sessionsHeld says whether a chain holds a journal_open of a session id,
// as of the tail a build was handed; a file sink is one, read under the
// file's lock. A journal opens its session under an id the chain does
// not hold yet (claimSession), so that no id is opened twice in a chain.
type sessionsHeld interface {
	opened(id string) (bool, error)
}

// claimSession moves the journal's session to an id t's chain has not
// opened: its own, or the id it was given with "~N" after it, N the least
// that is free. A run started again on a file (a proxy restarted with the
// same Promptloom-Session), or two journals of one id on one file, would
// otherwise open an id twice and the file would no longer verify; a new
// id keeps every call and names the session it follows. j.mu is held.
func (j *Journal) claimSession(t Tail) error {
	if t.sessions == nil {
		return nil // the sink cannot tell (a writer's, a database chain's own)
	}
	id := j.session
	for n := 1; ; n++ {
		held, err := t.sessions.opened(id)
		if err != nil {
			return err
		}
		if !held {
			j.session = id
			return nil
		}
		id = j.named + "~" + strconv.Itoa(n)
	}
}

// fileSessions is what this process knows of the sessions one transcript
// file opens: the ids of the journal_open lines in its first upTo bytes.
// Every file sink of the file in the process shares it (a proxy opens one
// a session), so the file is read once, and then only what was added.
type fileSessions struct {
	key  string // in transcripts
	refs int    // transcripts.mu

	// tail is where this process's appends left the file (sink.go).
	tail sharedTail

	mu   sync.Mutex
	upTo int64 // whole lines read
	last int64 // where the last of them starts
	head string
	ids  map[string]bool
}

// transcripts are the files open in this process, by absolute path.
var transcripts struct {
	sync.Mutex
	m map[string]*fileSessions
}

// sessionsOf is the file at path's sessions, shared; release lets go.
func sessionsOf(path string) *fileSessions {
	key, err := filepath.Abs(path)
	if err != nil {
		key = path
	}
	transcripts.Lock()
	defer transcripts.Unlock()
	if transcripts.m == nil {
		transcripts.m = map[string]*fileSessions{}
	}
	k := transcripts.m[key]
	if k == nil {
		k = &fileSessions{key: key}
		transcripts.m[key] = k
	}
	k.refs++
	return k
}

func (k *fileSessions) release() {
	transcripts.Lock()
	defer transcripts.Unlock()
	if k.refs--; k.refs == 0 {
		delete(transcripts.m, k.key)
	}
}

// has reports whether f, size bytes whose last line starts at start and
// hashes to head, opens session id. It reads what was added since it last
// read f, or all of f when f was cut back since (the line it read last is
// gone). The file's lock is held.
func (k *fileSessions) has(f *os.File, size, start int64, head string, limit int, id string) (bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.upTo != size || k.last != start || k.head != head {
		if k.upTo > size || (k.upTo > 0 && !holdsLine(f, k.last, k.upTo, k.head)) {
			k.upTo, k.ids = 0, nil
		}
		if err := k.read(f, size, limit); err != nil {
			return false, fmt.Errorf("journal: reading the sessions the transcript opens: %w", err)
		}
		k.upTo, k.last, k.head = size, start, head
	}
	return k.ids[id], nil
}

// holdsLine reports whether f holds, from start to end, a line ended by
// its newline that hashes to head.
func holdsLine(f *os.File, start, end int64, head string) bool {
	line := make([]byte, end-start)
	if _, err := f.ReadAt(line, start); err != nil {
		return false
	}
	return len(line) > 0 && line[len(line)-1] == '\n' && chain.LineHash(line[:len(line)-1]) == head
}

// read notes the sessions opened in f from upTo to size (whole lines).
func (k *fileSessions) read(f *os.File, size int64, limit int) error {
	r := bufio.NewReaderSize(io.NewSectionReader(f, k.upTo, size-k.upTo), 64<<10)
	for {
		chunk, err := r.ReadSlice('\n')
		if errors.Is(err, io.EOF) && len(chunk) == 0 {
			return nil
		}
		var line []byte
		switch {
		case err == nil:
			line = chunk[:len(chunk)-1]
		case errors.Is(err, bufio.ErrBufferFull):
			// A long line: a promptloom writer's says its kind in its
			// first bytes, and a journal_open line is short, so only a
			// line that does not say is read whole.
			if kind, ok := lineKind(chunk); ok && kind != chain.KindOpen {
				if err := skipLine(r); err != nil {
					return err
				}
				continue
			}
			if line, err = wholeLine(r, chunk, limit); err != nil {
				return err
			}
		case errors.Is(err, io.EOF):
			line = chunk
		default:
			return err
		}
		if id, ok := openedSession(line); ok {
			if k.ids == nil {
				k.ids = map[string]bool{}
			}
			k.ids[id] = true
		}
	}
}

// skipLine reads past the rest of a line.
func skipLine(r *bufio.Reader) error {
	for {
		_, err := r.ReadSlice('\n')
		switch {
		case err == nil, errors.Is(err, io.EOF):
			return nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return err
		}
	}
}

// wholeLine is a line that starts with first, read to its end; nil when
// it is longer than limit (Verify stops at such a line: it opens nothing).
func wholeLine(r *bufio.Reader, first []byte, limit int) ([]byte, error) {
	line := bytes.Clone(first)
	for {
		chunk, err := r.ReadSlice('\n')
		if line != nil && len(line)+len(chunk) <= limit+1 {
			line = append(line, chunk...)
		} else {
			line = nil
		}
		switch {
		case err == nil:
			if line != nil {
				line = line[:len(line)-1]
			}
			return line, nil
		case errors.Is(err, io.EOF):
			return line, nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return nil, err
		}
	}
}

// lineKind reads the kind of a line that starts as a promptloom writer
// starts each line, {"prev":"blake3:<64 hex>","seq":N,"kind":"<kind>",
// with ok false for any other start. A line whose kind is another member
// later on repeats a key, which Verify ignores the line for: so the kind
// read here is the only one the line can have.
func lineKind(b []byte) (kind string, ok bool) {
	const prev, seq, k = `{"prev":"blake3:`, `","seq":`, `,"kind":"`
	if !bytes.HasPrefix(b, []byte(prev)) || len(b) < len(prev)+64 {
		return "", false
	}
	for _, c := range b[len(prev) : len(prev)+64] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", false
		}
	}
	b = b[len(prev)+64:]
	if !bytes.HasPrefix(b, []byte(seq)) {
		return "", false
	}
	b = b[len(seq):]
	digits := 0
	for digits < len(b) && b[digits] >= '0' && b[digits] <= '9' {
		digits++
	}
	if digits == 0 || !bytes.HasPrefix(b[digits:], []byte(k)) {
		return "", false
	}
	b = b[digits+len(k):]
	end := 0
	for end < len(b) && (b[end] >= 'a' && b[end] <= 'z' || b[end] == '_') {
		end++
	}
	if end == len(b) || b[end] != '"' {
		return "", false
	}
	return string(b[:end]), true
}

// openedSession is the session a journal_open line opens, as transcript.Verify reads
// it: ok false for any other line, and for one transcript.Verify would not read.
func openedSession(line []byte) (string, bool) {
	if kind, ok := lineKind(line); ok && kind != chain.KindOpen {
		return "", false
	}
	var m pjson.Members
	if bytes.HasPrefix(line, []byte("\xef\xbb\xbf")) || m.Check(line, nil) != nil {
		return "", false // a line Verify does not read (transcript's unreadable)
	}
	kind, _ := m.Lookup("kind")
	id, ok := m.Lookup("session")
	if !strings.HasPrefix(kind, `"`) || pjson.Unquote(kind) != chain.KindOpen || !ok || !strings.HasPrefix(id, `"`) {
		return "", false
	}
	return strings.Clone(pjson.Unquote(id)), true
}
