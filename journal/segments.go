package journal

import (
	"slices"
	"strconv"
	"unsafe"

	"github.com/promptloom/promptloom/digest"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/internal/wire"
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
// around each tool definition, system block and message block
// (bodyPieces), and around a block's cache mark, so that a block stored
// once serves whether or not it carries the mark (an agent moves its
// breakpoint every turn). Per session, not per transcript: a session is a chain of its own
// in PostgreSQL, transcript export writes one chain byte for byte, and a
// checkpoint and a proof are a session's; a session that named pieces of
// another could not be verified, exported or proved alone.

// bodyPieces cuts kept, a body as the transcript keeps it (canonical
// JSON, so valid), into the pieces the writer stores: around each item of
// its top-level arrays (messages, tools, system blocks, input items,
// contents) and each item of an array one of their members holds (a
// message's content blocks, its tool calls, Gemini's parts): the
// segments of every provider's shape, found without knowing which it is.
// A block (an item holding no array it is cut into) is cut around its
// cache mark too, by each of marks. An item within the first head bytes,
// which before (an earlier body) starts with too, is cut where before was
// cut, without reading it again.
func bodyPieces(kept []byte, marks []string, before *segmented, head int) [][]byte {
	s := unsafe.String(unsafe.SliceData(kept), len(kept))
	cuts := make([]int, 0, 64)
	block := func(obj string, at int) {
		for _, mark := range marks {
			cuts = markCuts(cuts, kept[at:at+len(obj)], at, mark)
		}
	}
	top := pjson.NewIter(s)
	for {
		_, _, arr, base, ok := top.Next()
		if !ok {
			break
		}
		if arr[0] != '[' {
			continue
		}
		it := pjson.NewIter(arr)
		for {
			_, _, item, at, ok := it.Next()
			if !ok {
				break
			}
			at += base
			cuts = append(cuts, at, at+len(item))
			if before != nil && at+len(item) <= head {
				i, _ := slices.BinarySearch(before.starts, at+1)
				for ; i < len(before.starts) && before.starts[i] < at+len(item); i++ {
					cuts = append(cuts, before.starts[i])
				}
				continue
			}
			if item[0] != '{' {
				continue
			}
			nested := false
			in := pjson.NewIter(item)
			for {
				_, _, v, vAt, ok := in.Next()
				if !ok {
					break
				}
				if v[0] != '[' {
					continue
				}
				nested = true
				sub := pjson.NewIter(v)
				for {
					_, _, x, xAt, ok := sub.Next()
					if !ok {
						break
					}
					xAt += at + vAt
					cuts = append(cuts, xAt, xAt+len(x))
					if x[0] == '{' {
						block(x, xAt)
					}
				}
			}
			if !nested {
				block(item, at)
			}
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

// marksOf are the members by which a body of shape p marks a block's
// cache breakpoint: every provider's, when p is not known.
func marksOf(p payload.Provider) []string {
	if p != payload.Auto {
		if m := wire.MarkKey(string(p)); m != "" {
			return []string{m}
		}
		return nil
	}
	return []string{wire.MarkKey(string(payload.Anthropic)), wire.MarkKey(string(payload.OpenAIChat))}
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
	// last is the last body written as segments, cut and hashed: the
	// next body shares most of it (the history it resends), and a piece
	// of the same bytes at the same place needs no hashing again.
	last *segmented
	// unsure is a body_segments whose append failed when its lines may
	// be in the chain all the same (a database's COMMIT unanswered), and
	// unsureAt the chain's tail after them: the next append finds out
	// (settle), since the session's numbers depend on it.
	unsure   *segmentsWritten
	unsureAt Tail
}

// segmented is a body cut into pieces, with their digests: the costly
// part, done before the journal's lock is taken. It is not changed once
// made.
type segmented struct {
	body    []byte
	pieces  [][]byte
	starts  []int // where each piece starts in body
	digests []digest.Digest
}

// cutBody cuts and hashes kept, a body of shape p, taking the digest of each piece that
// before (an earlier body, or nil) holds with the same bytes at the same
// distance from the start (the history) or from the end (what follows
// the messages): only the rest is hashed.
func cutBody(kept []byte, p payload.Provider, before *segmented) *segmented {
	head, tail, shift := 0, 0, 0
	if before != nil {
		head = commonPrefix(kept, before.body)
		tail = commonSuffix(kept[head:], before.body[min(head, len(before.body)):])
		shift = len(before.body) - len(kept)
	}
	s := &segmented{body: kept, pieces: bodyPieces(kept, marksOf(p), before, head)}
	s.digests = make([]digest.Digest, len(s.pieces))
	s.starts = make([]int, len(s.pieces))
	at := 0
	for i, piece := range s.pieces {
		s.starts[i] = at
		end := at + len(piece)
		d, ok := digest.Digest{}, false
		switch {
		case end <= head:
			d, ok = before.digestAt(at, end)
		case at >= len(kept)-tail:
			d, ok = before.digestAt(at+shift, end+shift)
		}
		if !ok {
			d = digest.Bytes(piece)
		}
		s.digests[i] = d
		at = end
	}
	return s
}

// digestAt is the digest of s's piece from a to z, if it has one there.
func (s *segmented) digestAt(a, z int) (digest.Digest, bool) {
	i, found := slices.BinarySearch(s.starts, a)
	if !found || a+len(s.pieces[i]) != z {
		return digest.Digest{}, false
	}
	return s.digests[i], true
}

// commonPrefix is how many bytes a and b start with alike, compared a
// block at a time.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+4096 <= n && string(a[i:i+4096]) == string(b[i:i+4096]) {
		i += 4096
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix is how many bytes a and b end with alike.
func commonSuffix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+4096 <= n && string(a[len(a)-i-4096:len(a)-i]) == string(b[len(b)-i-4096:len(b)-i]) {
		i += 4096
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// segmentsWritten is a body_segments built and not yet written: commit
// makes it the session's state once its line is.
type segmentsWritten struct {
	added []digest.Digest
	list  []int32
	body  *segmented
	// received is the line's body as it came (encodeReceived): its
	// pieces are stored after these, and the session's previous list
	// stays this one.
	received *segmentsWritten
}

// encode appends s's body_segments to b, against w's state: the pieces
// the session stored are named by number, runs of the previous body by a
// pair, so that the line grows with what is new, not with the history.
func (w *segmentWriter) encode(b []byte, s *segmented) ([]byte, *segmentsWritten) {
	return encodeList(b, s, w.index, nil, w.prev)
}

// encodeReceived appends the body_segments of a line's body as it came
// (request.received.body_segments), after those of its body sent, sent
// (encoded, not yet committed): its new pieces are numbered after sent's,
// and its pairs are runs of sent's list, which is the previous list from
// there on. Committing sent commits it.
func (w *segmentWriter) encodeReceived(b []byte, s *segmented, sent *segmentsWritten) ([]byte, *segmentsWritten) {
	extra := make(map[digest.Digest]int32, len(sent.added))
	for i, d := range sent.added {
		extra[d] = int32(len(w.index) + i)
	}
	b, st := encodeList(b, s, w.index, extra, sent.list)
	sent.received = st
	return b, st
}

// encodeList appends the body_segments of s to b: the pieces index (or
// extra, numbered after it) holds by number, runs of prev by a pair, the
// rest stored.
func encodeList(b []byte, s *segmented, index, extra map[digest.Digest]int32, prev []int32) ([]byte, *segmentsWritten) {
	next := int32(len(index) + len(extra))
	st := &segmentsWritten{list: make([]int32, len(s.pieces)), body: s}
	fresh := make([]bool, len(s.pieces))
	var added map[digest.Digest]int32
	for i, d := range s.digests {
		n, ok := index[d]
		if !ok && extra != nil {
			n, ok = extra[d]
		}
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
	cur := st.list
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
	w.prev, w.last = st.list, st.body
	if r := st.received; r != nil {
		for _, d := range r.added {
			w.index[d] = int32(len(w.index))
		}
	}
}

// settle takes an unsure body_segments as written when the chain's tail
// t is the tail after its lines (the sink wrote them after all), and
// forgets it otherwise: called with the tail of the append after it.
func (w *segmentWriter) settle(t Tail) {
	if w.unsure == nil {
		return
	}
	if t.Prev == w.unsureAt.Prev && t.Seq == w.unsureAt.Seq {
		w.commit(w.unsure)
	}
	w.unsure = nil
}

// reset forgets the session's pieces: its session starts again.
func (w *segmentWriter) reset() { w.index, w.prev, w.last, w.unsure = nil, nil, nil, nil }
