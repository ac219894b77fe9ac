package journal

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/promptloom/promptloom"
	"github.com/tidwall/gjson"
)

// lineTooLong is a transcript line longer than Options.MaxLineBytes; it
// matches promptloom.ErrTooLarge. Line is 0 when the line was read from
// the end of a file, backwards.
type lineTooLong struct{ line, limit int }

func (e *lineTooLong) Error() string {
	if e.line == 0 {
		return fmt.Sprintf("journal: the last line is longer than %d bytes", e.limit)
	}
	return fmt.Sprintf("journal: line %d is longer than %d bytes", e.line, e.limit)
}

func (e *lineTooLong) Is(t error) bool { return t == promptloom.ErrTooLarge }

// lineReader reads a transcript a line at a time, capping each line.
type lineReader struct {
	r     *bufio.Reader
	limit int // the longest line read
	n     int // lines read
	buf   []byte
	torn  bool // the last line read had no final newline
}

func newLineReader(r io.Reader, limit int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), limit: limit}
}

// next returns the next line without its newline; io.EOF after the last.
// The slice is valid until the next call.
func (lr *lineReader) next() ([]byte, error) {
	lr.buf = lr.buf[:0]
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if len(lr.buf)+len(chunk) > lr.limit+1 {
			lr.n++
			return nil, &lineTooLong{line: lr.n, limit: lr.limit}
		}
		lr.buf = append(lr.buf, chunk...)
		switch {
		case err == nil:
			lr.n++
			lr.torn = false
			return lr.buf[:len(lr.buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(lr.buf) == 0 {
				return nil, io.EOF
			}
			lr.n++
			lr.torn = true
			return lr.buf, nil
		default:
			return nil, fmt.Errorf("journal: read: %w", err)
		}
	}
}

// blank reports whether a line is blank.
func blank(line []byte) bool { return len(bytes.TrimSpace(line)) == 0 }

// intField reads a field that must be a JSON integer written as writers
// write one: digits only, no sign, fraction or exponent ("4", never "4.0",
// "4e0" or "\"4\""), fitting in an int64. Readers disagree on what 4.9 or
// 1e30 mean as a count, so the verifier accepts one spelling.
func intField(r gjson.Result) (int64, bool) {
	if r.Type != gjson.Number || r.Raw == "" || len(r.Raw) > 18 {
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
