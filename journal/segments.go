package journal

import (
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/promptloom/promptloom/digest"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/payload"
)

// A request body kept as segments (docs/transcript.md, "Request bodies
// kept as segments"). An agent sends its whole history with every call,
// so a transcript that kept each body whole would grow with the square of
// the run. Instead each session numbers the distinct pieces of the bodies
// it kept, from 0, in the order they first appear, and a request's
// body_segments says how its body is made of them:
//
//   - a string: a piece not stored before in the session, stored now
//     under the next number, and placed here;
//   - an integer: the piece stored under that number;
//   - a pair [a, b]: the pieces at positions a to b-1 of the session's
//     previous body_segments, expanded.
//
// The body is those pieces joined, and it must hash to body_content_hash.
// Where the writer cuts a body is its own choice (a reader only joins):
// at each tool definition, system block and message block payload finds,
// and around a block's cache mark, so that a block stored once serves
// whether or not it carries the mark (an agent moves its breakpoint every
// turn). Per session, not per transcript: a session is a chain of its own
// in PostgreSQL, transcript export writes one chain byte for byte, and a
// checkpoint and a proof are a session's; a session that named pieces of
// another could not be verified, exported or proved alone.

// bodyPieces cuts kept, a body as the transcript keeps it (canonical
// JSON), into the pieces the writer stores: at the edges of its parts as
// payload reads them (a body payload cannot read is one piece), and
// around each part's cache mark.
func bodyPieces(kept []byte, p payload.Provider) [][]byte {
	whole := [][]byte{kept}
	r, err := payload.Read(kept, p)
	if err != nil {
		return whole
	}
	parts, err := r.Parts()
	if err != nil {
		return whole
	}
	mark := payload.MarkKey(r.Provider)
	cuts := make([]int, 0, 2*len(parts)+2)
	for _, part := range parts {
		if len(part.Raw) == 0 {
			continue
		}
		// Raw is a slice of the body (capped at its end): where it starts
		// is how far its first byte is from the body's.
		off := int(uintptr(unsafe.Pointer(unsafe.SliceData(part.Raw))) - uintptr(unsafe.Pointer(unsafe.SliceData(kept))))
		if off < 0 || off+len(part.Raw) > len(kept) || &kept[off] != &part.Raw[0] {
			continue // not a slice of the body: nothing says where it is
		}
		cuts = append(cuts, off, off+len(part.Raw))
		if mark != "" && part.Raw[0] == '{' {
			cuts = markCuts(cuts, part.Raw, off, mark)
		}
	}
	slices.Sort(cuts)
	out := make([][]byte, 0, len(cuts)+1)
	last := 0
	for _, c := range cuts {
		if c > last && c < len(kept) {
			out = append(out, kept[last:c])
			last = c
		}
	}
	return append(out, kept[last:])
}

// markCuts adds to cuts where obj (canonical JSON, at off in the body)
// is cut so that the same object with and without its member mark share
// every piece but the mark's own: around the member when it is there,
// else where canonical order would put it (before the first key past it,
// or the closing brace).
func markCuts(cuts []int, obj []byte, off int, mark string) []int {
	s := unsafe.String(unsafe.SliceData(obj), len(obj))
	it := pjson.NewIter(s)
	first := true
	for {
		key, keyAt, val, valAt, ok := it.Next()
		if !ok {
			return append(cuts, off+len(s)-1)
		}
		k := pjson.Unquote(key)
		if k < mark {
			first = false
			continue
		}
		if k > mark {
			return append(cuts, off+keyAt)
		}
		end := valAt + len(val)
		if _, nextAt, _, _, more := it.Next(); more {
			// "mark":{…}, goes with its comma: the rest starts a member.
			return append(cuts, off+keyAt, off+nextAt)
		}
		if first {
			return append(cuts, off+keyAt, off+end)
		}
		// The last member: ,"mark":{…} goes with the comma before it.
		return append(cuts, off+keyAt-1, off+end)
	}
}

// segmentWriter is what a journal keeps of its session's pieces: the
// number of each, by digest (not the bytes: a long session holds 32
// bytes a piece), and the previous body's list of numbers.
type segmentWriter struct {
	index map[digest.Digest]int32
	prev  []int32
}

// segmented is a body cut into pieces, with their digests: the costly
// part, done before the journal's lock is taken.
type segmented struct {
	pieces  [][]byte
	digests []digest.Digest
}

func cutBody(kept []byte, p payload.Provider) *segmented {
	s := &segmented{pieces: bodyPieces(kept, p)}
	s.digests = make([]digest.Digest, len(s.pieces))
	for i, piece := range s.pieces {
		s.digests[i] = digest.Bytes(piece)
	}
	return s
}

// segmentsWritten is a body_segments built and not yet written: commit
// makes it the session's state once its line is.
type segmentsWritten struct {
	added []digest.Digest
	list  []int32
}

// encode appends s's body_segments to b, against w's state: the pieces
// the session stored are named by number, runs of the previous body by a
// pair, so that the line grows with what is new, not with the history.
func (w *segmentWriter) encode(b []byte, s *segmented) ([]byte, *segmentsWritten) {
	next := int32(len(w.index))
	st := &segmentsWritten{list: make([]int32, len(s.pieces))}
	fresh := make([]bool, len(s.pieces))
	var added map[digest.Digest]int32
	for i, d := range s.digests {
		n, ok := w.index[d]
		if !ok {
			if n, ok = added[d]; !ok {
				if added == nil {
					added = map[digest.Digest]int32{}
				}
				n = next + int32(len(st.added))
				added[d] = n
				st.added = append(st.added, d)
				fresh[i] = true
			}
		}
		st.list[i] = n
	}
	cur, prev := st.list, w.prev
	k := 0
	for k < len(cur) && k < len(prev) && cur[k] == prev[k] {
		k++
	}
	t := 0
	for t < len(cur)-k && t < len(prev)-k && cur[len(cur)-1-t] == prev[len(prev)-1-t] {
		t++
	}
	var at map[int32]int // where each number first is in prev, for runs in the middle
	b = append(b, '[')
	item := func() {
		if b[len(b)-1] != '[' {
			b = append(b, ',')
		}
	}
	pair := func(a, z int) {
		item()
		b = append(strconv.AppendInt(append(strconv.AppendInt(append(b, '['), int64(a), 10), ','), int64(z), 10), ']')
	}
	if k > 0 {
		pair(0, k)
	}
	for i := k; i < len(cur)-t; {
		if fresh[i] {
			item()
			b = pjson.AppendString(b, unsafe.String(unsafe.SliceData(s.pieces[i]), len(s.pieces[i])))
			i++
			continue
		}
		if at == nil {
			at = make(map[int32]int, len(prev))
			for j := len(prev) - 1; j >= 0; j-- {
				at[prev[j]] = j
			}
		}
		if j, ok := at[cur[i]]; ok {
			n := 1
			for i+n < len(cur)-t && j+n < len(prev) && cur[i+n] == prev[j+n] && !fresh[i+n] {
				n++
			}
			if n >= 3 {
				// A pair costs what three numbers do.
				pair(j, j+n)
				i += n
				continue
			}
		}
		item()
		b = strconv.AppendInt(b, int64(cur[i]), 10)
		i++
	}
	if t > 0 {
		pair(len(prev)-t, len(prev))
	}
	return append(b, ']'), st
}

// commit makes st the session's state: its line is written.
func (w *segmentWriter) commit(st *segmentsWritten) {
	if st == nil {
		return
	}
	if w.index == nil {
		w.index = map[digest.Digest]int32{}
	}
	for _, d := range st.added {
		w.index[d] = int32(len(w.index))
	}
	w.prev = st.list
}

// reset forgets the session's pieces: its session starts again.
func (w *segmentWriter) reset() { w.index, w.prev = nil, nil }

// bodies rebuilds the bodies kept as segments, session by session, for
// Verify and Requests alike: the one reader of body_segments.
type bodies struct {
	limit    int // the longest body rebuilt (Options.MaxLineBytes)
	sessions map[string]*storedPieces
	buf      []byte
}

// storedPieces are a session's pieces, by number and by content, and its
// previous body's list.
type storedPieces struct {
	pieces []string
	number map[string]int32
	prev   []int32
}

func newBodies(limit int) *bodies {
	return &bodies{limit: limit, sessions: map[string]*storedPieces{}}
}

// add reads the body_segments of a request of session sess (raw, JSON a
// line held valid) and returns the body it makes, valid until the next
// call, or the rule it breaks. The new pieces are stored even when a
// later item breaks a rule, so the numbers stay the writer's; the list
// becomes the session's previous only when it holds.
func (bs *bodies) add(sess, raw string) ([]byte, *manifest.RuleError) {
	st := bs.sessions[sess]
	if st == nil {
		st = &storedPieces{number: map[string]int32{}}
		bs.sessions[strings.Clone(sess)] = st
	}
	if len(raw) == 0 || raw[0] != '[' {
		return nil, callFailed(RuleSegments, "request.body_segments is not an array")
	}
	list := make([]int32, 0, len(st.prev)+8)
	size := 0
	var problem *manifest.RuleError
	fail := func(rule manifest.Rule, format string, args ...any) {
		if problem == nil {
			problem = callFailed(rule, format, args...)
		}
	}
	place := func(n int32) {
		if size += len(st.pieces[n]); size > bs.limit {
			fail(RuleBodyTooLarge, "request.body_segments make a body of more than %d bytes, the longest line a transcript holds (Options.MaxLineBytes)", bs.limit)
			return
		}
		list = append(list, n)
	}
	it := pjson.NewIter(raw)
	for item := 0; ; item++ {
		_, _, v, _, ok := it.Next()
		if !ok {
			break
		}
		switch {
		case v[0] == '"':
			s := pjson.Unquote(v)
			if len(s) == len(v)-2 {
				s = strings.Clone(s)
			}
			if s == "" {
				fail(RuleSegments, "request.body_segments[%d] is an empty segment", item)
				continue
			}
			if n, dup := st.number[s]; dup {
				fail(RuleSegmentRepeated, "request.body_segments[%d] stores again the segment its session stored as %d", item, n)
				continue
			}
			n := int32(len(st.pieces))
			st.pieces = append(st.pieces, s)
			st.number[s] = n
			if problem == nil {
				place(n)
			}
		case v[0] == '[':
			var ends [2]int
			in := pjson.NewIter(v)
			count := 0
			good := true
			for {
				_, _, e, _, ok := in.Next()
				if !ok {
					break
				}
				if count < 2 {
					ends[count], good = index(e)
					if !good {
						break
					}
				}
				count++
			}
			switch {
			case !good || count != 2:
				fail(RuleSegments, "request.body_segments[%d] is not a pair of positions [a, b]", item)
			case ends[0] >= ends[1] || ends[1] > len(st.prev):
				fail(RuleSegmentRange, "request.body_segments[%d] is [%d, %d], not a run of the %d segments of its session's previous body", item, ends[0], ends[1], len(st.prev))
			case problem == nil:
				for _, n := range st.prev[ends[0]:ends[1]] {
					if place(n); problem != nil {
						break
					}
				}
			}
		default:
			n, good := index(v)
			switch {
			case !good:
				fail(RuleSegments, "request.body_segments[%d] is %s: neither a segment, a number nor a pair", item, v)
			case n >= len(st.pieces):
				fail(RuleSegmentMissing, "request.body_segments[%d] names segment %d, but its session has stored %d", item, n, len(st.pieces))
			case problem == nil:
				place(int32(n))
			}
		}
	}
	if problem != nil {
		return nil, problem
	}
	if len(list) == 0 {
		return nil, callFailed(RuleSegments, "request.body_segments is empty")
	}
	st.prev = list
	b := bs.buf[:0]
	for _, n := range list {
		b = append(b, st.pieces[n]...)
	}
	bs.buf = b
	return b, nil
}

// index reads a number written as the writer writes one: digits, no
// leading zero, within an int32.
func index(raw string) (int, bool) {
	if raw == "" || len(raw) > 10 || raw[0] == '0' && len(raw) > 1 {
		return 0, false
	}
	n := 0
	for _, c := range []byte(raw) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n <= 1<<31-1
}
