package transcript

import (
	"strings"

	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/manifest"
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
				fail(RuleSegments, "request.body_segments[%d] is [%d, %d], not a run of the %d segments of its session's previous body", item, ends[0], ends[1], len(st.prev))
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
				fail(RuleSegments, "request.body_segments[%d] names segment %d, but its session has stored %d", item, n, len(st.pieces))
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

// addReceived reads the body_segments of a line's body as it came
// (request.received), read after its body sent's: as add, but the
// session's previous list stays the body sent's.
func (bs *bodies) addReceived(sess, raw string) ([]byte, *manifest.RuleError) {
	var prev []int32
	if st := bs.sessions[sess]; st != nil {
		prev = st.prev
	}
	b, p := bs.add(sess, raw)
	bs.sessions[sess].prev = prev
	return b, p
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
