package journal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/promptloom/promptloom/internal/chain"
	pjson "github.com/promptloom/promptloom/internal/json"
)

// ErrForeignTranscript is Open on a file whose last line is not a chained
// promptloom line (a Harn transcript, or one written before the chain).
var ErrForeignTranscript = errors.New("journal: not a chained promptloom transcript; append to a new file")

// tail is where the next line goes: the chain's last hash and seq, and the
// file's size once they were read, and where its last line starts.
type tail struct {
	prev  string
	seq   int64
	size  int64
	start int64
}

// readTail finds the last line of f (size bytes long, ending in a newline
// or empty) and returns the chain state after it.
func readTail(f *os.File, size int64, limit int) (tail, error) {
	if size == 0 {
		return tail{prev: chain.Genesis, size: 0}, nil
	}
	start, err := lastLineStart(f, size-1, limit)
	if err != nil {
		return tail{}, err
	}
	line := make([]byte, size-1-start)
	if _, err := f.ReadAt(line, start); err != nil {
		return tail{}, fmt.Errorf("journal: %w", err)
	}
	if _, ok := chained(line); !ok {
		return tail{}, ErrForeignTranscript
	}
	seq, _ := chained(line)
	return tail{prev: chain.LineHash(line), seq: seq, size: size, start: start}, nil
}

// lastLineStart returns the offset where the line ending before end
// begins: just after the previous newline, or 0. It reads backwards in
// chunks and gives up past limit.
func lastLineStart(f *os.File, end int64, limit int) (int64, error) {
	const chunk = 64 << 10
	buf := make([]byte, chunk)
	for pos := end; pos > 0; {
		n := int64(chunk)
		if pos < n {
			n = pos
		}
		if _, err := f.ReadAt(buf[:n], pos-n); err != nil && !errors.Is(err, io.EOF) {
			return 0, fmt.Errorf("journal: %w", err)
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return pos - n + int64(i) + 1, nil
		}
		pos -= n
		if end-pos > int64(limit) {
			return 0, &chain.LineTooLong{Limit: limit}
		}
	}
	return 0, nil
}

// repairTail looks at a file's last line when it lacks a final newline.
// Only a crash in the middle of a write leaves one, and only a line that is
// not complete JSON is torn: it is cut off (the bytes cut are returned). A
// complete record that merely lacks its newline is kept and ended. Either
// is done only in a promptloom transcript, checked before anything is
// changed: the complete line must be a chained line, and a torn one the
// start of the chain's next line. A file it refuses is left as it was.
func repairTail(f *os.File, limit int) (cut int, size int64, err error) {
	st, err := f.Stat()
	if err != nil {
		return 0, 0, fmt.Errorf("journal: %w", err)
	}
	size = st.Size()
	if size == 0 {
		return 0, 0, nil
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, size-1); err != nil {
		return 0, 0, fmt.Errorf("journal: %w", err)
	}
	if last[0] == '\n' {
		return 0, size, nil
	}
	start, err := lastLineStart(f, size, limit)
	if err != nil {
		return 0, 0, err
	}
	line := make([]byte, size-start)
	if _, err := f.ReadAt(line, start); err != nil {
		return 0, 0, fmt.Errorf("journal: %w", err)
	}
	if pjson.Check(line, nil) == nil {
		if _, ok := chained(line); !ok {
			return 0, 0, ErrForeignTranscript
		}
		if _, err := f.Write([]byte("\n")); err != nil { // O_APPEND: at the end
			return 0, 0, fmt.Errorf("journal: repair: %w", err)
		}
		return 0, size + 1, nil
	}
	// A torn line is cut only when it is provably the start of the line a
	// writer was appending: it begins as the next chained line must begin
	// ({"prev":"<the hash of the line before>","seq":<one more>,), or is a
	// prefix of that; the line before it, if any, must be a chained one.
	// A torn first line must hold at least {"prev":"blake3: (a file of "{"
	// alone could be anything). Anything else is some other writer's, and
	// the file is refused as it is.
	next := `{"prev":"` + chain.Genesis + `","seq":1,`
	if start > 0 {
		t, err := readTail(f, start, limit)
		if err != nil {
			return 0, 0, err
		}
		next = fmt.Sprintf(`{"prev":"%s","seq":%d,`, t.prev, t.seq+1)
	}
	ours := bytes.HasPrefix(line, []byte(next)) ||
		bytes.HasPrefix([]byte(next), line) && (start > 0 || len(line) >= len(`{"prev":"blake3:`))
	if !ours {
		return 0, 0, fmt.Errorf("%w (its last line, not ended by a newline, is not the start of the chain's next line)", ErrForeignTranscript)
	}
	if err := f.Truncate(start); err != nil {
		return 0, 0, fmt.Errorf("journal: repair: %w", err)
	}
	return int(size - start), start, nil
}

// chained reports whether line is a promptloom line: JSON with prev and
// seq, and its seq (as an integer: 0 when it is not one).
func chained(line []byte) (seq int64, ok bool) {
	var m pjson.Members
	if m.Check(line, nil) != nil {
		return 0, false
	}
	_, hasPrev := m.Lookup("prev")
	raw, hasSeq := m.Lookup("seq")
	if !hasPrev || !hasSeq {
		return 0, false
	}
	seq, _ = strconv.ParseInt(raw, 10, 64)
	return seq, true
}
