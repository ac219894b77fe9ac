package journal

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// Signed checkpoints (docs/transcript.md, "Checkpoints"). The chain proves
// that no line of a transcript was changed, but its hashes are unkeyed:
// whoever can write the file can rewrite a whole run consistently. A
// journal given Options.Signer therefore writes, at Close and every
// Options.CheckpointEvery calls, a journal_checkpoint line holding a note
// (golang.org/x/mod/sumdb/note, Ed25519, the format Go's checksum database
// signs its tree heads in) over the chain at the line before it: the
// session, the line count, the head hash, and the size and root of a
// Merkle tree (golang.org/x/mod/sumdb/tlog, RFC 6962) whose leaves are the
// session's calls, in the order their outcomes were written.

// kindCheckpoint is a line holding a signed note over the chain up to the
// line before it.
const kindCheckpoint = "journal_checkpoint"

// checkpointHeader is the first line of a checkpoint note's text.
const checkpointHeader = "promptloom transcript checkpoint v1"

// checkpoint is what a checkpoint note says.
type checkpoint struct {
	session string
	lines   int64  // the seq of the line before the checkpoint's
	head    string // that line's chain hash
	calls   int64  // the size of the session's tree of calls
	root    tlog.Hash
}

// text is the note text of c: one line a field, each "name value".
func (c checkpoint) text() string {
	return fmt.Sprintf("%s\nsession %s\nlines %d\nhead %s\ncalls %d\nroot %s\n",
		checkpointHeader, quote(c.session), c.lines, c.head, c.calls, c.root)
}

// parseCheckpoint reads a checkpoint note's text, which must be exactly as
// text writes it (no other spelling of a number, hash or string).
func parseCheckpoint(text string) (checkpoint, error) {
	var c checkpoint
	bad := errors.New("not a promptloom checkpoint (docs/transcript.md)")
	ls := strings.Split(text, "\n")
	if len(ls) != 7 || ls[0] != checkpointHeader || ls[6] != "" {
		return c, bad
	}
	field := func(i int, name string) (string, error) {
		v, ok := strings.CutPrefix(ls[i], name+" ")
		if !ok {
			return "", bad
		}
		return v, nil
	}
	var err error
	var s, lines, calls, root string
	if s, err = field(1, "session"); err == nil {
		err = json.Unmarshal([]byte(s), &c.session)
	}
	if err == nil {
		lines, err = field(2, "lines")
	}
	if err == nil {
		c.lines, err = strconv.ParseInt(lines, 10, 64)
	}
	if err == nil {
		c.head, err = field(3, "head")
	}
	if err == nil {
		calls, err = field(4, "calls")
	}
	if err == nil {
		c.calls, err = strconv.ParseInt(calls, 10, 64)
	}
	if err == nil {
		root, err = field(5, "root")
	}
	if err == nil {
		c.root, err = tlog.ParseHash(root)
	}
	if err != nil || c.text() != text {
		return checkpoint{}, bad
	}
	return c, nil
}

// openNote reads a signed note: verified by key when key is not nil (an
// error then says it is not signed by that key), else only read. Each
// signature's base64 must be canonical, so that no two spellings of one
// signature exist.
func openNote(msg string, key note.Verifier) (*note.Note, error) {
	var known note.Verifiers
	if key != nil {
		known = note.VerifierList(key)
	}
	n, err := note.Open([]byte(msg), known)
	var unverified *note.UnverifiedNoteError
	switch {
	case key == nil && errors.As(err, &unverified):
		n = unverified.Note
	case key != nil && errors.As(err, &unverified):
		return nil, fmt.Errorf("not signed by %s", key.Name())
	case err != nil:
		return nil, err
	}
	for _, s := range append(slices.Clone(n.Sigs), n.UnverifiedSigs...) {
		if b, err := base64.StdEncoding.Strict().DecodeString(s.Base64); err != nil || base64.StdEncoding.EncodeToString(b) != s.Base64 {
			return nil, errors.New("a signature's base64 is not canonical")
		}
	}
	return n, nil
}

// leafHash is a call's leaf in its session's tree: tlog's record hash
// (SHA-256 of a zero byte and the record) of the chain hashes of the
// call's request line and outcome line, each followed by a newline. It
// binds every byte of both lines.
func leafHash(requestHash, outcomeHash string) tlog.Hash {
	return tlog.RecordHash([]byte(requestHash + "\n" + outcomeHash + "\n"))
}

// tree is a Merkle tree of calls as it grows: its size and the roots of
// its perfect subtrees, largest first, enough to compute the root (RFC
// 6962's, as tlog.TreeHash computes it) without keeping the leaves.
type tree struct {
	n     int64
	peaks []tlog.Hash
}

// add appends a leaf.
func (t *tree) add(leaf tlog.Hash) {
	t.peaks = append(t.peaks, leaf)
	for i := t.n; i&1 == 1; i >>= 1 {
		k := len(t.peaks)
		t.peaks = append(t.peaks[:k-2], tlog.NodeHash(t.peaks[k-2], t.peaks[k-1]))
	}
	t.n++
}

// root is the tree's root hash.
func (t *tree) root() tlog.Hash {
	if t.n == 0 {
		h, _ := tlog.TreeHash(0, nil)
		return h
	}
	h := t.peaks[len(t.peaks)-1]
	for i := len(t.peaks) - 2; i >= 0; i-- {
		h = tlog.NodeHash(t.peaks[i], h)
	}
	return h
}

func (t *tree) clone() tree { return tree{n: t.n, peaks: slices.Clone(t.peaks)} }

// checkpointer is a journal's signer and its session's tree of calls.
type checkpointer struct {
	signer note.Signer
	every  int64
	tree   tree
}

func newCheckpointer(o *Options) *checkpointer {
	if o == nil || o.Signer == nil {
		return nil
	}
	return &checkpointer{signer: o.Signer, every: int64(max(o.CheckpointEvery, 0))}
}

// outcome adds the call whose outcome line b just wrote to a copy of the
// tree, and writes a checkpoint after it when one is due. The copy becomes
// the tree once the lines are written (commit).
func (c *checkpointer) outcome(b *lineBuilder, session, requestHash string) (*tree, error) {
	if c == nil {
		return nil, nil
	}
	t := c.tree.clone()
	t.add(leafHash(requestHash, b.t.Prev))
	if c.every > 0 && t.n%c.every == 0 {
		if err := c.write(b, session, &t); err != nil {
			return nil, err
		}
	}
	return &t, nil
}

// commit makes t (from outcome) the tree.
func (c *checkpointer) commit(t *tree) {
	if c != nil && t != nil {
		c.tree = *t
	}
}

// close writes the checkpoint that ends a session, after its
// journal_close.
func (c *checkpointer) close(b *lineBuilder, session string) error {
	if c == nil {
		return nil
	}
	return c.write(b, session, &c.tree)
}

// reset forgets the session's calls (its chain was cut back).
func (c *checkpointer) reset() {
	if c != nil {
		c.tree = tree{}
	}
}

// write appends a checkpoint of the chain as it stands in b.
func (c *checkpointer) write(b *lineBuilder, session string, t *tree) error {
	cp := checkpoint{session: session, lines: b.t.Seq, head: b.t.Prev, calls: t.n, root: t.root()}
	msg, err := note.Sign(&note.Note{Text: cp.text()}, c.signer)
	if err != nil {
		return fmt.Errorf("journal: checkpoint: %w", err)
	}
	b.line(kindCheckpoint, "session", quote(session), "note", quote(string(msg)))
	return nil
}

// checkpoints is what Verify keeps to check checkpoints: per session, its
// tree of calls, its last line and its last checkpoint that held.
type checkpoints struct {
	key        note.Verifier // Options.Verifier
	keepLeaves bool          // keep every leaf (to prove a call)
	lastGood   int           // the line of the last checkpoint that held, of any session
	sessions   map[string]*sessionTree
}

type sessionTree struct {
	tree   tree
	leaves []tlog.Hash // with keepLeaves
	last   int         // the session's last line
	good   int         // its last checkpoint that held (signed by key, when there is one)
	note   string      // that checkpoint's note
	calls  int64       // and its tree size
}

func (c *checkpoints) session(id string) *sessionTree {
	if c.sessions == nil {
		c.sessions = map[string]*sessionTree{}
	}
	s, ok := c.sessions[id]
	if !ok {
		s = &sessionTree{}
		c.sessions[id] = s
	}
	return s
}

// touch notes a line of session id.
func (c *checkpoints) touch(id string, n int) { c.session(id).last = n }

// leaf adds a call, answered at this line, to its session's tree.
func (c *checkpoints) leaf(id, requestHash, outcomeHash string) {
	s := c.session(id)
	h := leafHash(requestHash, outcomeHash)
	s.tree.add(h)
	if c.keepLeaves {
		s.leaves = append(s.leaves, h)
	}
}

// checkpoint checks a journal_checkpoint line: its note must be signed by
// the key (when Verify has one) and say what the chain is at the line
// before it: its session, seq and hash, and the session's tree of calls.
func (v *verifier) checkpoint(n int, l gjson.Result, sess string, sessOK bool) {
	if _, open := v.sessions[sess]; !sessOK || !open {
		v.rep.broke("checkpoint", n, "line %d: a checkpoint of session %s, which this transcript does not open", n, orRawNull(l.Get("session").Raw))
		return
	}
	msg, ok := stringField(l, "note")
	if !ok {
		v.rep.broke("checkpoint", n, "line %d: the checkpoint of session %q has no note", n, sess)
		return
	}
	nt, err := openNote(msg, v.ck.key)
	if err != nil {
		v.rep.broke("checkpoint", n, "line %d: the checkpoint of session %q: %v", n, sess, err)
		return
	}
	cp, err := parseCheckpoint(nt.Text)
	if err != nil {
		v.rep.broke("checkpoint", n, "line %d: the checkpoint of session %q: %v", n, sess, err)
		return
	}
	s := v.ck.session(sess)
	root := s.tree.root()
	switch {
	case cp.session != sess:
		v.rep.broke("checkpoint", n, "line %d: the checkpoint of session %q signs session %q", n, sess, cp.session)
	case cp.lines != v.seq-1 || cp.head != v.prev:
		v.rep.broke("checkpoint", n, "line %d: the checkpoint of session %q signs line %d with hash %s, but line %d hashes to %s", n, sess, cp.lines, cp.head, v.seq-1, v.prev)
	case cp.calls != s.tree.n || cp.root != root:
		v.rep.broke("checkpoint", n, "line %d: the checkpoint of session %q signs %d call(s) with root %s, but the session's %d call(s) have root %s", n, sess, cp.calls, cp.root, s.tree.n, root)
	default:
		s.good, s.note, s.calls = n, msg, cp.calls
		v.ck.lastGood = n
		v.rep.Checkpoints++
	}
}

// finishCheckpoints fails, when Verify has a key, every session that does
// not end in a checkpoint signed by it.
func (v *verifier) finishCheckpoints() {
	if v.ck.key == nil {
		return
	}
	if v.rep.Format == formatHarn {
		v.rep.broke("checkpoint", 0, "a Harn transcript has no checkpoint signed by %s", v.ck.key.Name())
		return
	}
	failed := len(v.rep.Problems)
	for _, id := range v.sessionOrder() {
		s := v.ck.session(id)
		switch {
		case s.good == 0:
			v.rep.broke("checkpoint", v.sessions[id].line, "session %q (line %d) has no checkpoint signed by %s", id, v.sessions[id].line, v.ck.key.Name())
		case s.good != s.last:
			v.rep.broke("checkpoint", s.last, "session %q does not end in a checkpoint signed by %s: its last is at line %d, its last line is %d", id, v.ck.key.Name(), s.good, s.last)
		}
	}
	// A checkpoint signs the chain up to the line before it, so every
	// line after the last one is unsigned, whether or not it names a
	// session (a system prompt and a manifest name none).
	if last := v.rep.Lines; v.ck.lastGood > 0 && v.ck.lastGood < last {
		v.rep.broke("checkpoint", v.ck.lastGood+1, "lines %d to %d come after the last checkpoint signed by %s (line %d): no signature covers them", v.ck.lastGood+1, last, v.ck.key.Name(), v.ck.lastGood)
	}
	if len(v.rep.Problems) == failed && v.ck.lastGood > 0 {
		v.rep.SignedBy, v.rep.SignedThrough = v.ck.key.Name(), v.ck.lastGood
	}
}

// sessionOrder is the sessions' ids in the order they opened.
func (v *verifier) sessionOrder() []string {
	ids := make([]string, 0, len(v.sessions))
	for id := range v.sessions {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool { return v.sessions[ids[a]].line < v.sessions[ids[b]].line })
	return ids
}

func (o *Options) verifier() note.Verifier {
	if o == nil {
		return nil
	}
	return o.Verifier
}
