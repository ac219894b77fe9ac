package cli

import (
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"syscall"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/manifest"
)

// Limits on what the CLI reads, besides --max-bytes for options files
// (variables so tests can lower them).
var (
	// maxPromptBytes bounds a served prompt given to verify: the largest
	// options file makes no larger prompt.
	maxPromptBytes int64 = promptloom.DefaultMaxBytes
	// maxManifestBytes bounds a manifest file, as manifest.Read does.
	maxManifestBytes int64 = promptloom.DefaultMaxBytes
	// maxTranscriptBytes bounds a transcript read whole (demo --replay).
	maxTranscriptBytes int64 = 1 << 30
	// maxPayloadBytes bounds a provider request body given to verify
	// --payload: the system channel plus the messages, tools and any
	// inline media the request carries.
	maxPayloadBytes int64 = 256 << 20
	// maxLineBytes bounds a transcript line verify and report read (0:
	// the library's default).
	maxLineBytes = 0
)

// readManifest reads and parses a manifest file, at most manifest.Read's
// own limit (reading stops where Read would refuse); an error names the
// file.
func (e *env) readManifest(path string) (*manifest.Manifest, error) {
	raw, err := e.readLimited(path, maxManifestBytes)
	if err != nil {
		return nil, err
	}
	m, err := manifest.Read(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// InputTooLargeError is returned for a file (or stdin, "-") that holds more
// bytes than the CLI reads of it. It is raised as soon as the limit is
// passed: nothing beyond the limit is read, so an endless input costs no
// more than the limit.
type InputTooLargeError struct {
	Name  string
	Limit int64
}

func (e *InputTooLargeError) Error() string {
	name := e.Name
	if name == "-" {
		name = "stdin"
	}
	return fmt.Sprintf("%s: over the limit of %d bytes", name, e.Limit)
}

// limitedReader reads r and fails with *InputTooLargeError once more than
// limit bytes have come: unlike io.LimitReader it never passes a truncated
// input off as whole.
type limitedReader struct {
	r    io.Reader
	left int64 // bytes still allowed, plus one to see the overflow
	err  *InputTooLargeError
}

func newLimitedReader(r io.Reader, name string, limit int64) *limitedReader {
	limit = min(limit, math.MaxInt64-1) // room for the byte past it
	return &limitedReader{r: io.LimitReader(r, limit+1), left: limit + 1,
		err: &InputTooLargeError{Name: name, Limit: limit}}
}

func (l *limitedReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left <= 0 {
		return n, l.err
	}
	return n, err
}

// openFile opens a file to read, refusing a directory as it opens (a read
// of one fails later, and looked like a broken transcript).
func openFile(name string) (*os.File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EISDIR}
	}
	return f, nil
}

// readLimited returns the contents of a file, or of stdin for "-", reading
// at most limit bytes: one byte more is *InputTooLargeError naming the file
// and the limit.
func (e *env) readLimited(name string, limit int64) ([]byte, error) {
	var r io.Reader = e.stdin
	if name != "-" {
		f, err := openFile(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	if name == "-" {
		if e.stdin == nil {
			r = eofReader{}
		} else {
			e.noticeTerminal()
		}
	}
	return readAll(newLimitedReader(r, name, limit), sizeHint(r, limit))
}

// sizeHint is a regular file's size when it is within limit, so a large
// file is read into one buffer of its size; 0 for anything else.
func sizeHint(r io.Reader, limit int64) int64 {
	f, ok := r.(*os.File)
	if !ok {
		return 0
	}
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || info.Size() > limit {
		return 0
	}
	return info.Size()
}

// readAll is io.ReadAll starting from a buffer of hint bytes (plus one, to
// see the end without growing).
func readAll(r io.Reader, hint int64) ([]byte, error) {
	b := make([]byte, 0, max(hint+1, 512))
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
