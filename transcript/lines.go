package transcript

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"github.com/promptloom/promptloom/internal/chain"
)

// lineReader reads a transcript a line at a time, capping each line.
type lineReader struct {
	r     *bufio.Reader
	limit int  // the longest line read
	n     int  // lines read
	torn  bool // the last line read had no final newline
	// unread, when the source can tell, is how many bytes it has left
	// (past what r has buffered); -1 when it cannot.
	unread func() int64
}

func newLineReader(r io.Reader, limit int) *lineReader {
	lr := &lineReader{r: bufio.NewReaderSize(r, 64<<10), limit: limit}
	switch src := r.(type) {
	case interface{ Len() int }: // bytes.Reader, strings.Reader, bytes.Buffer
		lr.unread = func() int64 { return int64(src.Len()) }
	case *os.File:
		lr.unread = func() int64 {
			st, err := src.Stat()
			if err != nil || !st.Mode().IsRegular() {
				return -1
			}
			pos, err := src.Seek(0, io.SeekCurrent)
			if err != nil {
				return -1
			}
			return st.Size() - pos
		}
	}
	return lr
}

// left is how many bytes of the input are left to read, counting those r
// has buffered; -1 when the source cannot tell.
func (lr *lineReader) left() int64 {
	if lr.unread == nil {
		return -1
	}
	n := lr.unread()
	if n < 0 {
		return -1
	}
	return n + int64(lr.r.Buffered())
}

// next returns the next line without its newline; io.EOF after the last.
// The line is a string of its own: what the verifier keeps of it (a
// manifest, a system prompt) shares its bytes rather than copying them.
// A long line is copied in pieces, then into one string of its exact
// length, never into a buffer grown step by step; and once the source says
// that what is left of it is no more than what the pieces hold, the rest of
// the line is read straight into one buffer that size, which becomes the
// line.
func (lr *lineReader) next() (string, error) {
	var pieces [][]byte
	var whole []byte
	size := 0
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if size+len(chunk) > lr.limit+1 {
			lr.n++
			return "", &chain.LineTooLong{Line: lr.n, Limit: lr.limit}
		}
		switch {
		case err == nil:
			lr.n++
			lr.torn = false
			return joinLine(pieces, whole, size, chunk[:len(chunk)-1]), nil
		case errors.Is(err, bufio.ErrBufferFull):
			if whole != nil {
				whole = append(whole, chunk...)
			} else {
				pieces = append(pieces, bytes.Clone(chunk))
			}
			size += len(chunk)
			if whole == nil {
				if rest := lr.left(); rest >= 0 && rest <= int64(size) && int64(size)+rest <= int64(lr.limit)+1 {
					whole = make([]byte, 0, size+int(rest))
					for _, p := range pieces {
						whole = append(whole, p...)
					}
					pieces = nil
				}
			}
		case errors.Is(err, io.EOF):
			if size+len(chunk) == 0 {
				return "", io.EOF
			}
			lr.n++
			lr.torn = true
			return joinLine(pieces, whole, size, chunk), nil
		default:
			return "", fmt.Errorf("journal: read: %w", err)
		}
	}
}

// joinLine is the line read: whole (when the line went there) or pieces
// (size bytes in all), then last, as one string.
func joinLine(pieces [][]byte, whole []byte, size int, last []byte) string {
	if whole != nil {
		whole = append(whole, last...)
		return unsafe.String(unsafe.SliceData(whole), len(whole)) // never written again
	}
	if len(pieces) == 0 {
		return string(last)
	}
	var b strings.Builder
	b.Grow(size + len(last))
	for _, p := range pieces {
		b.Write(p)
	}
	b.Write(last)
	return b.String()
}

// blank reports whether a line is blank.
func blank(line []byte) bool { return len(bytes.TrimSpace(line)) == 0 }

// intField reads a field that must be a JSON integer written as writers
// write one: digits only, no sign, fraction or exponent ("4", never "4.0",
// "4e0" or "\"4\""), fitting in an int64. Readers disagree on what 4.9 or
// 1e30 mean as a count, so the verifier accepts one spelling.
func intField(r value) (int64, bool) {
	if r.Type != jNumber || r.Raw == "" || len(r.Raw) > 18 {
		return 0, false
	}
	if r.Raw[0] == '0' && len(r.Raw) > 1 {
		return 0, false
	}
	for i := 0; i < len(r.Raw); i++ {
		if r.Raw[i] < '0' || r.Raw[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(r.Raw, 10, 64)
	return n, err == nil
}
