package cli

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"hash"
	"io"
	"os"
	"sync"

	"github.com/promptloom/promptloom/cmd/promptloom/internal/demo"
	"github.com/promptloom/promptloom/internal/dsn"
	"github.com/promptloom/promptloom/transcript"

	"golang.org/x/mod/sumdb/note"
)

// pageCalls is how many calls the page's verifier lists (KeepCalls): the
// page shows its counts and its verdict, so what it holds is bounded by
// that, not by the transcript's length.
const pageCalls = 64

// pageFile is what the page's verifier reads a transcript file through.
type pageFile interface {
	io.ReaderAt
	Stat() (os.FileInfo, error)
	Close() error
}

// pageVerifier is the page's verdict on a transcript file (verify's own,
// liveState), kept from load to load: each load gives its
// transcript.Verifier only the bytes appended since the last, so no load
// reads the whole file again, and the page and verify agree by
// construction. A file replaced (another file at the path), cut shorter,
// changed without growing, or whose last line read is no longer the same
// bytes is read again from its start, and the page says so (docs/page.md,
// "What the page's verdict covers").
type pageVerifier struct {
	path   string
	signer note.Signer
	open   func(string) (pageFile, error)

	mu   sync.Mutex
	v    *transcript.Verifier
	read int64       // the bytes given to v
	info os.FileInfo // the file as last read
	// The last whole line given to v: where it starts, and its digest;
	// cur hashes the line being given (from start).
	lastStart, start int64
	lastSum          []byte
	cur              hash.Hash
	// again says why the last load read the file from its start ("":
	// it did not, or it was the first).
	again string
	buf   []byte
}

func newPageVerifier(path string, s note.Signer) *pageVerifier {
	return &pageVerifier{path: path, signer: s, open: func(name string) (pageFile, error) { return os.Open(name) }}
}

// state is the page's verdict on the transcript as it is now, having read
// only what was appended to it since the last load.
func (p *pageVerifier) state() string {
	if demo.IsURL(p.path) {
		// The page is served to any loopback client: the URL's password
		// is not shown.
		return "in PostgreSQL: promptloom verify --transcript " + dsn.Redacted(p.path)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	f, err := p.open(p.path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			p.v = nil
			return "no call recorded yet"
		}
		return "unreadable: " + err.Error()
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "unreadable: " + err.Error()
	}
	p.again = ""
	if why := p.changed(f, st); why != "" {
		p.again = why
		p.restart()
	}
	if err := p.give(f, st.Size()); err != nil {
		p.v = nil // read again from the start next time
		return "unreadable: " + err.Error()
	}
	p.info = st
	rep, err := p.v.Report()
	state := liveState(rep, err)
	if p.again != "" {
		state = "read again from its start (" + p.again + "): " + state
	}
	if err != nil || !rep.Holds() {
		return state
	}
	if p.signer != nil {
		state += "; signed by " + p.signer.Name() + " (verify --key NAME.pub checks it; open sessions are checkpointed when idle for --idle or when the proxy stops)"
	}
	return state
}

// changed says why what was read of the file no longer stands ("" when
// it does, or nothing was read): the path names another file, the file is
// shorter, it changed without growing, or the last whole line read is not
// the same bytes (read again to see: the one line a load reads twice).
func (p *pageVerifier) changed(f pageFile, st os.FileInfo) string {
	switch {
	case p.v == nil:
		return ""
	case !os.SameFile(st, p.info):
		return "the file was replaced"
	case st.Size() < p.read:
		return "the file was cut shorter"
	case st.Size() == p.read && !st.ModTime().Equal(p.info.ModTime()):
		return "the file was changed without growing"
	case p.lastSum == nil:
		return ""
	}
	line := make([]byte, p.start-p.lastStart)
	if _, err := f.ReadAt(line, p.lastStart); err != nil {
		return "its last line read could not be read again"
	}
	if sum := sha256.Sum256(line); !bytes.Equal(sum[:], p.lastSum) {
		return "its last line read was rewritten"
	}
	return ""
}

// restart forgets what was read.
func (p *pageVerifier) restart() {
	p.v = nil
}

// give gives the verifier the bytes from p.read to size.
func (p *pageVerifier) give(f pageFile, size int64) error {
	if p.v == nil {
		p.v = transcript.NewVerifier(&transcript.Options{MaxLineBytes: maxLineBytes, KeepCalls: pageCalls})
		p.read, p.start, p.lastStart, p.lastSum = 0, 0, 0, nil
		p.cur = sha256.New()
	}
	if p.buf == nil {
		p.buf = make([]byte, 64<<10)
	}
	for p.read < size {
		n, err := f.ReadAt(p.buf[:min(int64(len(p.buf)), size-p.read)], p.read)
		if n == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				return nil // cut while read: the next load sees it
			}
			return err
		}
		chunk := p.buf[:n]
		p.note(chunk)
		// A line too long stops the verifier (its report says so); the
		// rest is still counted as read.
		_, _ = p.v.Write(chunk)
		p.read += int64(n)
	}
	return nil
}

// note follows the lines of chunk, the bytes from p.read: where the last
// whole one starts, and its digest.
func (p *pageVerifier) note(chunk []byte) {
	at := p.read
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			p.cur.Write(chunk)
			return
		}
		p.cur.Write(chunk[:i+1])
		p.lastSum = p.cur.Sum(nil)
		p.cur.Reset()
		p.lastStart, p.start = p.start, at+int64(i)+1
		at += int64(i) + 1
		chunk = chunk[i+1:]
	}
}
