package transcript

import (
	"encoding/base64"
	"errors"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/promptloom/promptloom/internal/chain"
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
// in the text promptloom wrote before (chain.CheckpointHeader) still verify.

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
	h := chain.LeafHash(requestHash, outcomeHash)
	s.tree.add(h)
	if c.keepLeaves {
		s.leaves = append(s.leaves, h)
		s.records = append(s.records, chain.CallRecord(requestHash, outcomeHash))
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
	cp, err := chain.ParseCheckpoint(nt.Text)
	if err != nil {
		v.rep.broke(RuleCheckpointNote, n, "line %d: the checkpoint of session %q: %v", n, sess, err)
		return
	}
	s := v.ck.session(sess)
	root := s.tree.root()
	want := ""
	if cp.Origin != "" {
		want = chain.Origin(signerName(nt, v.ck.key), sess, s.open)
	}
	switch {
	case cp.Session != sess:
		v.rep.broke(RuleCheckpointOrigin, n, "line %d: the checkpoint of session %q signs session %q", n, sess, cp.Session)
	case cp.Origin != want:
		v.rep.broke(RuleCheckpointOrigin, n, "line %d: the checkpoint of session %q has origin %q, but the session's is %q", n, sess, cp.Origin, want)
	case cp.Lines != v.count-1 || cp.Head != v.prev:
		v.rep.broke(RuleCheckpointHead, n, "line %d: the checkpoint of session %q signs line %d with hash %s, but line %d hashes to %s", n, sess, cp.Lines, cp.Head, v.count-1, v.prev)
	case cp.Calls != s.tree.n || cp.Root != root:
		v.rep.broke(RuleCheckpointHead, n, "line %d: the checkpoint of session %q signs %d call(s) with root %s, but the session's %d call(s) have root %s", n, sess, cp.Calls, cp.Root, s.tree.n, root)
	default:
		s.good, s.note, s.calls, s.origin = n, strings.Clone(msg), cp.Calls, cp.Origin
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
			v.rep.broke(RuleWitness, 0, "witness keys without the signer's verifier key: a cosignature is checked only on a checkpoint the signer's key verifies")
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

// Logs verifies a transcript, as Verify does with o, and returns each
// session's tree of calls as its last checkpoint that held signs it, by
// session id (for tiles.Handler to serve). A session without one is not
// there. A run still being written has logs too (its sessions unclosed,
// calls after its last checkpoints, a last line not whole yet); a
// transcript with any other problem
// has none, and the report says why. err is Verify's.
func Logs(transcript io.Reader, o *Options) (map[string]tiles.Log, *Report, error) {
	if chain.IsNil(transcript) {
		return nil, &Report{}, errors.New("transcript: Logs: no reader")
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
