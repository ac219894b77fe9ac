package journal

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/promptloom/promptloom/internal/witness"
	"github.com/promptloom/promptloom/journal/tiles"
	"github.com/promptloom/promptloom/manifest"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// Signed checkpoints (docs/transcript.md, "Checkpoints"). The chain proves
// that no line of a transcript was changed, but its hashes are unkeyed:
// whoever can write the file can rewrite a whole run consistently. A
// journal given Options.Signer therefore writes, at Close and every
// Options.CheckpointEvery calls, a journal_checkpoint line holding a note
// (golang.org/x/mod/sumdb/note, Ed25519) over the chain at the line before
// it. The note's text is a C2SP tlog-checkpoint (c2sp.org/tlog-checkpoint),
// the form Go's checksum database, Certificate Transparency logs and their
// witnesses read: the session's origin, then the size and root of a Merkle
// tree (golang.org/x/mod/sumdb/tlog, RFC 6962) whose leaves are the
// session's calls in the order their outcomes were written, then two
// extension lines with the chain's line count and head hash. Checkpoints
// in the text promptloom wrote before (checkpointHeader) still verify.

// kindCheckpoint is a line holding a signed note over the chain up to the
// line before it.
const kindCheckpoint = "journal_checkpoint"

// checkpointHeader is the first line of a checkpoint note's text in the
// format before C2SP's, which Verify still reads.
const checkpointHeader = "promptloom transcript checkpoint v1"

// checkpoint is what a checkpoint note says.
type checkpoint struct {
	origin  string // "" in the older format, which names the session instead
	session string
	lines   int64  // the seq of the line before the checkpoint's
	head    string // that line's chain hash
	calls   int64  // the size of the session's tree of calls
	root    tlog.Hash
}

// text is the note text of c.
func (c checkpoint) text() string {
	if c.origin == "" {
		return fmt.Sprintf("%s\nsession %s\nlines %d\nhead %s\ncalls %d\nroot %s\n",
			checkpointHeader, quote(c.session), c.lines, c.head, c.calls, c.root)
	}
	return fmt.Sprintf("%s\n%d\n%s\nlines %d\nhead %s\n", c.origin, c.calls, c.root, c.lines, c.head)
}

// Origin is the origin line of a session's checkpoints: the signer's key
// name, the session id with every byte outside RFC 3986's unreserved set
// percent-encoded, and the first 16 hex digits of the BLAKE3 chain hash of
// the session's journal_open line, slash-separated. The open line's hash
// makes it one run's: another run with the same key and session id opens
// with another line (another time, another place in a chain), while a run
// cut back and continued, or forked, keeps its origin, which is what lets
// a witness or an auditor catch it.
func origin(keyName, session, openHash string) string {
	var b strings.Builder
	b.WriteString(keyName)
	b.WriteByte('/')
	for i := 0; i < len(session); i++ {
		c := session[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	b.WriteByte('/')
	hex, _ := strings.CutPrefix(openHash, "blake3:")
	b.WriteString(hex[:min(16, len(hex))])
	return b.String()
}

// parseOrigin splits an origin as origin writes it into the key name, the
// session and the open line's hash prefix.
func parseOrigin(o string) (keyName, session, open string, ok bool) {
	rest, open, ok1 := cutLast(o)
	keyName, esc, ok2 := cutLast(rest)
	if !ok1 || !ok2 || keyName == "" || len(open) != 16 || strings.Trim(open, "0123456789abcdef") != "" {
		return "", "", "", false
	}
	sess, err := url.PathUnescape(esc)
	if err != nil || origin(keyName, sess, open) != o {
		return "", "", "", false
	}
	return keyName, sess, open, true
}

func cutLast(s string) (before, after string, ok bool) {
	i := strings.LastIndexByte(s, '/')
	if i < 0 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

// parseCheckpoint reads a checkpoint note's text, which must be exactly as
// text writes it (no other spelling of a number, hash or string), in
// either format. The origin of a C2SP checkpoint is read as it stands;
// the verifier compares it with the one it expects.
func parseCheckpoint(text string) (checkpoint, error) {
	var c checkpoint
	bad := errors.New("not a promptloom checkpoint (docs/transcript.md)")
	ls := strings.Split(text, "\n")
	field := func(i int, name string) (string, error) {
		v, ok := strings.CutPrefix(ls[i], name+" ")
		if !ok {
			return "", bad
		}
		return v, nil
	}
	var err error
	var lines, calls, root string
	switch {
	case len(ls) == 7 && ls[0] == checkpointHeader && ls[6] == "":
		var s string
		if s, err = field(1, "session"); err == nil {
			err = json.Unmarshal([]byte(s), &c.session)
		}
		if err == nil {
			lines, err = field(2, "lines")
		}
		if err == nil {
			c.head, err = field(3, "head")
		}
		if err == nil {
			calls, err = field(4, "calls")
		}
		if err == nil {
			root, err = field(5, "root")
		}
	case len(ls) == 6 && ls[5] == "":
		c.origin, calls, root = ls[0], ls[1], ls[2]
		var ok bool
		if _, c.session, _, ok = parseOrigin(c.origin); !ok {
			return checkpoint{}, fmt.Errorf("origin %q is not KEY/SESSION/OPEN as promptloom writes it (docs/transcript.md)", c.origin)
		}
		if lines, err = field(3, "lines"); err == nil {
			c.head, err = field(4, "head")
		}
	default:
		return c, bad
	}
	if err == nil {
		c.lines, err = strconv.ParseInt(lines, 10, 64)
	}
	if err == nil {
		c.calls, err = strconv.ParseInt(calls, 10, 64)
	}
	if err == nil {
		c.root, err = tlog.ParseHash(root)
	}
	if err != nil || c.text() != text {
		return checkpoint{}, bad
	}
	return c, nil
}

// notSigned is a note that is not signed by the verifier key given.
type notSigned struct{ key string }

func (e notSigned) Error() string { return "not signed by " + e.key }

// noteRule is the rule a checkpoint's note that does not open breaks.
func noteRule(err error) manifest.Rule {
	var forged *note.InvalidSignatureError
	if errors.As(err, new(notSigned)) || errors.As(err, &forged) {
		return RuleCheckpointSignature
	}
	return RuleCheckpointNote
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
		return nil, notSigned{key.Name()}
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

// checkpointer is a journal's signer, its session's tree of calls, and the
// witnesses it asks to cosign each checkpoint.
type checkpointer struct {
	signer    note.Signer
	every     int64
	witnesses []*witnessState
	open      string    // the chain hash of the session's journal_open line
	hashes    hashes    // the stored hashes of the tree of calls: its root, proofs
	records   [][]byte  // each call's record (their count is the tree's size), for tiles
	last      tiles.Log // the latest checkpoint written
	errs      []error   // cosignatures that failed, reported by Close
}

// ErrNotCosigned is in the error Close returns when a witness did not
// cosign a checkpoint (Options.Witnesses): the calls and the checkpoint
// are recorded, without that witness's cosignature.
var ErrNotCosigned = errors.New("journal: a witness did not cosign")

// witnessState is a witness and the tree size it last cosigned for this
// session (tlog-witness's "old size").
type witnessState struct {
	url  string
	size int64
}

func newCheckpointer(o *Options) *checkpointer {
	if o == nil || o.Signer == nil {
		return nil
	}
	c := &checkpointer{signer: o.Signer, every: int64(max(o.CheckpointEvery, 0))}
	for _, u := range o.Witnesses {
		c.witnesses = append(c.witnesses, &witnessState{url: u})
	}
	return c
}

// opened notes the hash of the session's journal_open line, which its
// origin names.
func (c *checkpointer) opened(hash string) {
	if c != nil {
		c.open = hash
	}
}

// pending is a call added by outcome and not yet committed.
type pending struct {
	record []byte
	hashes int // len(c.hashes) before the call's were added
	cp     *tiles.Log
}

// outcome adds the call whose outcome line b just wrote to the tree, and
// writes a checkpoint after it when one is due. commit keeps the call, or
// forgets it when the lines were not written.
func (c *checkpointer) outcome(ctx context.Context, b *lineBuilder, session, requestHash string) (*pending, error) {
	if c == nil {
		return nil, nil
	}
	p := &pending{record: callRecord(requestHash, b.t.Prev), hashes: len(c.hashes)}
	n := int64(len(c.records)) + 1 // the tree's size with this call
	hs, err := tlog.StoredHashesForRecordHash(n-1, tlog.RecordHash(p.record), c.hashes)
	if err != nil {
		return nil, fmt.Errorf("journal: checkpoint: %w", err)
	}
	c.hashes = append(c.hashes, hs...)
	if c.every > 0 && n%c.every == 0 {
		if p.cp, err = c.write(ctx, b, session, n); err != nil {
			c.hashes = c.hashes[:p.hashes]
			return nil, err
		}
	}
	return p, nil
}

// commit keeps the call outcome added (written is whether its lines were
// written), or forgets it.
func (c *checkpointer) commit(p *pending, written bool) {
	if c == nil || p == nil {
		return
	}
	if !written {
		c.hashes = c.hashes[:p.hashes]
		return
	}
	c.records = append(c.records, p.record)
	if p.cp != nil {
		c.last = *p.cp
	}
}

// hashes are a tree's stored hashes, in tlog.StoredHashIndex order.
type hashes []tlog.Hash

// storedHashes are the stored hashes of the tree of leaves.
func storedHashes(leaves []tlog.Hash) (hashes, error) {
	h := make(hashes, 0, 2*len(leaves))
	for i, leaf := range leaves {
		more, err := tlog.StoredHashesForRecordHash(int64(i), leaf, h)
		if err != nil {
			return nil, err
		}
		h = append(h, more...)
	}
	return h, nil
}

// ReadHashes is tlog.HashReader's.
func (h hashes) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= int64(len(h)) {
			return nil, fmt.Errorf("stored hash %d of %d", x, len(h))
		}
		out[i] = h[x]
	}
	return out, nil
}

// close writes the checkpoint that ends a session, after its
// journal_close.
func (c *checkpointer) close(ctx context.Context, b *lineBuilder, session string) (*tiles.Log, error) {
	if c == nil {
		return nil, nil
	}
	return c.write(ctx, b, session, int64(len(c.records)))
}

// reset forgets the session's calls (its chain was cut back).
func (c *checkpointer) reset() {
	if c != nil {
		c.open, c.hashes, c.records, c.last = "", nil, nil, tiles.Log{}
	}
}

// write appends a checkpoint of the chain as it stands in b, signed and
// cosigned by the witnesses that agree. It returns the log as the
// checkpoint signs it.
func (c *checkpointer) write(ctx context.Context, b *lineBuilder, session string, n int64) (*tiles.Log, error) {
	root, err := tlog.TreeHash(n, c.hashes)
	if err != nil {
		return nil, fmt.Errorf("journal: checkpoint: %w", err)
	}
	cp := checkpoint{origin: origin(c.signer.Name(), session, c.open), session: session, lines: b.t.Seq, head: b.t.Prev, calls: n, root: root}
	msg, err := note.Sign(&note.Note{Text: cp.text()}, c.signer)
	if err != nil {
		return nil, fmt.Errorf("journal: checkpoint: %w", err)
	}
	msg = append(msg, c.cosign(ctx, n, msg)...)
	b.line(kindCheckpoint, "session", quote(session), "note", quote(string(msg)))
	return &tiles.Log{Checkpoint: msg, Size: n}, nil
}

// cosign asks every witness, at once, to cosign the checkpoint msg of a
// tree of n calls, and returns the signature lines of those that did. A
// witness that last cosigned another size than the one it is asked from
// says which (409), and is asked once more from there. A witness that
// refuses or cannot be reached leaves the checkpoint without its
// cosignature, and Close reports it.
func (c *checkpointer) cosign(ctx context.Context, n int64, msg []byte) []byte {
	if len(c.witnesses) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, witnessTimeout)
	defer cancel()
	lines := make([][]byte, len(c.witnesses))
	errs := make([]error, len(c.witnesses))
	var wg sync.WaitGroup
	for i, w := range c.witnesses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lines[i], errs[i] = c.ask(ctx, w, n, msg)
		}()
	}
	wg.Wait()
	var out []byte
	for i, w := range c.witnesses {
		if errs[i] != nil {
			c.errs = append(c.errs, fmt.Errorf("%w: the checkpoint of %d call(s): %w", ErrNotCosigned, n, errs[i]))
			continue
		}
		w.size = n
		out = append(out, lines[i]...)
	}
	return out
}

// witnessTimeout bounds the wait for the witnesses at a checkpoint: the
// journal holds its lock meanwhile.
const witnessTimeout = 10 * time.Second

func (c *checkpointer) ask(ctx context.Context, w *witnessState, n int64, msg []byte) ([]byte, error) {
	old := w.size
	for try := 0; ; try++ {
		proof, err := c.proveTree(n, old)
		if err != nil {
			return nil, err
		}
		lines, err := witness.Cosign(ctx, nil, w.url, old, proof, msg)
		var refused *witness.Error
		if try == 0 && errors.As(err, &refused) && refused.Status == http.StatusConflict && refused.Size != old && refused.Size <= n {
			old = refused.Size
			continue
		}
		return lines, err
	}
}

// proveTree is the consistency proof from the tree of its first old calls
// to the tree of n, which the stored hashes hold (n may be the call being
// added).
func (c *checkpointer) proveTree(n, old int64) (tlog.TreeProof, error) {
	if old == 0 || old == n {
		return nil, nil
	}
	return tlog.ProveTree(n, old, c.hashes)
}

// callRecord is a call's record in its session's tree: the chain hashes of its
// request line and outcome line, each followed by a newline. Its leaf
// (tlog.RecordHash: SHA-256 of a zero byte and the record) binds every
// byte of both lines.
func callRecord(requestHash, outcomeHash string) []byte {
	return []byte(requestHash + "\n" + outcomeHash + "\n")
}

// leafHash is the leaf of a call's record.
func leafHash(requestHash, outcomeHash string) tlog.Hash {
	return tlog.RecordHash(callRecord(requestHash, outcomeHash))
}

// checkpoints is what Verify keeps to check checkpoints: per session, its
// tree of calls, its last line and its last checkpoint that held.
type checkpoints struct {
	key        note.Verifier // Options.Verifier
	cosigners  []note.Verifier
	quorum     int
	keepLeaves bool // keep every leaf (to prove a call)
	lastGood   int  // the line of the last checkpoint that held, of any session
	sessions   map[string]*sessionTree
}

type sessionTree struct {
	tree    tree
	open    string      // the chain hash of its journal_open line
	leaves  []tlog.Hash // with keepLeaves
	records [][]byte    // with keepLeaves
	last    int         // the session's last line
	good    int         // its last checkpoint that held (signed by key, when there is one)
	note    string      // that checkpoint's note
	origin  string      // and its origin ("" in the older format)
	calls   int64       // and its tree size
}

func (c *checkpoints) session(id string) *sessionTree {
	if c.sessions == nil {
		c.sessions = map[string]*sessionTree{}
	}
	s, ok := c.sessions[id]
	if !ok {
		s = &sessionTree{}
		c.sessions[strings.Clone(id)] = s // not the line the id was read from
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
		s.records = append(s.records, callRecord(requestHash, outcomeHash))
	}
}

// checkpoint checks a journal_checkpoint line: its note must be signed by
// the key (when Verify has one) and say what the chain is at the line
// before it: its session, seq and hash, and the session's tree of calls.
func (v *verifier) checkpoint(n int, l getter, sess string, sessOK bool) {
	if _, open := v.sessions[sess]; !sessOK || !open {
		v.rep.broke(RuleCheckpointSession, n, "line %d: a checkpoint of session %s, which this transcript does not open", n, orRawNull(l.Get("session").Raw))
		return
	}
	msg, ok := stringField(l, "note")
	if !ok {
		v.rep.broke(RuleCheckpointNote, n, "line %d: the checkpoint of session %q has no note", n, sess)
		return
	}
	nt, err := openNote(msg, v.ck.key)
	if err != nil {
		v.rep.broke(noteRule(err), n, "line %d: the checkpoint of session %q: %v", n, sess, err)
		return
	}
	cp, err := parseCheckpoint(nt.Text)
	if err != nil {
		v.rep.broke(RuleCheckpointNote, n, "line %d: the checkpoint of session %q: %v", n, sess, err)
		return
	}
	s := v.ck.session(sess)
	root := s.tree.root()
	want := ""
	if cp.origin != "" {
		want = origin(signerName(nt, v.ck.key), sess, s.open)
	}
	switch {
	case cp.session != sess:
		v.rep.broke(RuleCheckpointOtherSession, n, "line %d: the checkpoint of session %q signs session %q", n, sess, cp.session)
	case cp.origin != want:
		v.rep.broke(RuleCheckpointOrigin, n, "line %d: the checkpoint of session %q has origin %q, but the session's is %q", n, sess, cp.origin, want)
	case cp.lines != v.count-1 || cp.head != v.prev:
		v.rep.broke(RuleCheckpointHead, n, "line %d: the checkpoint of session %q signs line %d with hash %s, but line %d hashes to %s", n, sess, cp.lines, cp.head, v.count-1, v.prev)
	case cp.calls != s.tree.n || cp.root != root:
		v.rep.broke(RuleCheckpointRoot, n, "line %d: the checkpoint of session %q signs %d call(s) with root %s, but the session's %d call(s) have root %s", n, sess, cp.calls, cp.root, s.tree.n, root)
	default:
		s.good, s.note, s.calls, s.origin = n, strings.Clone(msg), cp.calls, cp.origin
		v.ck.lastGood = n
		v.rep.Checkpoints++
	}
}

// signerName is the name of the key that signs a checkpoint: key's, or
// without one the note's first signature's.
func signerName(n *note.Note, key note.Verifier) string {
	switch {
	case key != nil:
		return key.Name()
	case len(n.Sigs) > 0:
		return n.Sigs[0].Name
	case len(n.UnverifiedSigs) > 0:
		return n.UnverifiedSigs[0].Name
	}
	return ""
}

// finishCheckpoints fails, when Verify has a key, every session that does
// not end in a checkpoint signed by it.
func (v *verifier) finishCheckpoints() {
	if v.ck.key == nil {
		if len(v.ck.cosigners) > 0 {
			v.rep.broke(RuleWitnessWithoutKey, 0, "witness keys without the signer's verifier key: a cosignature is checked only on a checkpoint the signer's key verifies")
		}
		return
	}
	if v.rep.Format == formatHarn {
		v.rep.broke(RuleUnsigned, 0, "a Harn transcript has no checkpoint signed by %s", v.ck.key.Name())
		return
	}
	failed := len(v.rep.Problems)
	// What a session still open lacks it may yet write (its next
	// checkpoint, or its first): pending, not failed. A closed session's
	// close is followed by its checkpoint.
	anyOpen := false
	for _, id := range v.sessionOrder() {
		s := v.ck.session(id)
		open := !v.sessions[id].closed
		anyOpen = anyOpen || open
		report := v.rep.broke
		if open {
			report = v.rep.pend
		}
		switch {
		case s.good == 0:
			report(RuleUnsigned, v.sessions[id].line, "session %q (line %d) has no checkpoint signed by %s", id, v.sessions[id].line, v.ck.key.Name())
			v.unfinished++
		case s.good != s.last:
			report(RuleUnsignedEnd, s.last, "session %q does not end in a checkpoint signed by %s: its last is at line %d, its last line is %d", id, v.ck.key.Name(), s.good, s.last)
			v.unfinished++
		}
	}
	// A checkpoint signs the chain up to the line before it, so every
	// line after the last one is unsigned, whether or not it names a
	// session (a system prompt and a manifest name none).
	if last := v.rep.Lines; v.ck.lastGood > 0 && v.ck.lastGood < last {
		report := v.rep.broke
		if anyOpen {
			report = v.rep.pend
		}
		report(RuleUnsignedLines, v.ck.lastGood+1, "lines %d to %d come after the last checkpoint signed by %s (line %d): no signature covers them", v.ck.lastGood+1, last, v.ck.key.Name(), v.ck.lastGood)
		v.unfinished++
	}
	v.checkQuorum()
	if len(v.rep.Problems)-v.rep.pendingSince(failed) == failed && v.ck.lastGood > 0 {
		v.rep.SignedBy, v.rep.SignedThrough = v.ck.key.Name(), v.ck.lastGood
	}
}

// checkQuorum fails every session whose last checkpoint is not cosigned
// by a quorum of Options.Cosigners.
func (v *verifier) checkQuorum() {
	keys, quorum := v.ck.cosigners, v.ck.quorum
	if len(keys) == 0 {
		return
	}
	if quorum <= 0 || quorum > len(keys) {
		quorum = len(keys)
	}
	var every []string // the witnesses on every session's last checkpoint
	failed := len(v.rep.Problems)
	for i, id := range v.sessionOrder() {
		s := v.ck.session(id)
		if s.good == 0 {
			failed = -1
			continue // failed already: no checkpoint
		}
		n, err := note.Open([]byte(s.note), note.VerifierList(keys...))
		var unverified *note.UnverifiedNoteError
		switch {
		case errors.As(err, &unverified):
			n = unverified.Note
		case err != nil:
			v.rep.broke(RuleWitness, s.good, "line %d: the last checkpoint of session %q: %v", s.good, id, err)
			continue
		}
		var names []string
		for _, sig := range n.Sigs {
			if !slices.Contains(names, sig.Name) {
				names = append(names, sig.Name)
			}
		}
		if len(names) < quorum {
			by := ""
			if len(names) > 0 {
				by = " (" + strings.Join(names, ", ") + ")"
			}
			v.rep.broke(RuleQuorum, s.good, "line %d: the last checkpoint of session %q is cosigned by %d of the witnesses given%s, fewer than the quorum of %d", s.good, id, len(names), by, quorum)
		}
		if i == 0 {
			every = names
		} else {
			every = slices.DeleteFunc(every, func(n string) bool { return !slices.Contains(names, n) })
		}
	}
	if failed == len(v.rep.Problems) {
		v.rep.CosignedBy = every
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

// Log is the journal's session as its latest checkpoint signs it, with
// the records of every call since (for tiles.Handler to serve). ok is
// false until a checkpoint is written, and for a journal without a Signer.
func (j *Journal) Log() (log tiles.Log, ok bool) {
	if j == nil {
		return tiles.Log{}, false
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.cp == nil || j.cp.last.Checkpoint == nil {
		return tiles.Log{}, false
	}
	log = j.cp.last
	log.Records = j.cp.records[:len(j.cp.records):len(j.cp.records)]
	return log, true
}

// Logs verifies a transcript, as Verify does with o, and returns each
// session's tree of calls as its last checkpoint that held signs it, by
// session id (for tiles.Handler to serve). A session without one is not
// there. A run still being written has logs too (its sessions unclosed,
// calls after its last checkpoints, a last line not whole yet); a
// transcript with any other problem
// has none, and the report says why. err is Verify's.
func Logs(transcript io.Reader, o *Options) (map[string]tiles.Log, *Report, error) {
	if isNil(transcript) {
		return nil, &Report{}, errors.New("journal: Logs: no reader")
	}
	v := newVerifier(o.verifier())
	v.ck.keepLeaves = true
	rep, err := v.read(transcript, o)
	if err != nil || !v.holdsSoFar() {
		return nil, rep, err
	}
	logs := map[string]tiles.Log{}
	for id, s := range v.ck.sessions {
		if s.good > 0 {
			logs[id] = tiles.Log{Checkpoint: []byte(s.note), Size: s.calls, Records: s.records}
		}
	}
	return logs, rep, nil
}
