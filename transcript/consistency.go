package transcript

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/promptloom/promptloom/internal/chain"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/manifest"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// Consistency proofs (docs/transcript.md, "Consistency"). A signature
// proves who signed a checkpoint, not that the run was not cut back to it
// or forked after it: an auditor who kept an earlier checkpoint asks for
// the proof that the run now extends it. The proof is one line, the two
// checkpoints and tlog's consistency proof between their trees (RFC 6962's,
// as tlog.ProveTree makes it and tlog.CheckTree checks it).

// consistencySchema names the format of a consistency proof.
const consistencySchema = "promptloom.journal.consistency.v1"

func consistencyLine(from, to string, path tlog.TreeProof) string {
	return fmt.Sprintf(`{"consistency":%s,"from":%s,"to":%s,"path":[%s]}`+"\n", chain.Quote(consistencySchema), chain.Quote(from), chain.Quote(to), quoteHashes(path))
}

// ProveConsistency verifies a transcript, as Verify does with o, and
// returns the proof that the session whose checkpoint is from (a signed
// note, as a journal_checkpoint line holds it) has only grown since: from,
// the session's last checkpoint in the transcript, and the consistency
// proof between their trees of calls. CheckConsistency checks it with the
// signer's key alone.
//
// There is a proof only of a transcript that verifies, or would once
// finished (a run still being written is proved to its last checkpoint),
// holding the
// checkpoint's session under its origin, whose last checkpoint signs at
// least as many calls, the first of which have the root from signs;
// otherwise the proof is nil and the report's Problems say why (a run cut
// back, rewritten or forked after from). err is Verify's.
func ProveConsistency(transcript io.Reader, from []byte, o *Options) ([]byte, *Report, error) {
	if chain.IsNil(transcript) {
		return nil, &Report{}, errors.New("transcript: ProveConsistency: no reader")
	}
	old, err := readCheckpoint(string(from), o.verifier())
	if err != nil {
		return nil, &Report{}, fmt.Errorf("transcript: ProveConsistency: the checkpoint to prove from: %w", err)
	}
	v := newVerifier(o.verifier())
	v.ck.keepLeaves = true
	rep, err := v.read(transcript, o)
	if err != nil || !v.holdsSoFar() {
		return nil, rep, err
	}
	fail := func(rule manifest.Rule, format string, args ...any) ([]byte, *Report, error) {
		rep.broke(rule, 0, format, args...)
		return nil, rep, nil
	}
	s, ok := v.ck.sessions[old.Session]
	if !ok || s.good == 0 {
		return fail(RuleConsistency, "the transcript has no signed checkpoint of session %q (origin %q)", old.Session, old.Origin)
	}
	if s.origin != old.Origin {
		return fail(RuleConsistencyOrigin, "session %q of the transcript has origin %q, not the checkpoint's %q: another run", old.Session, s.origin, old.Origin)
	}
	if s.calls < old.Calls {
		return fail(RuleConsistencyCutBack, "the run was cut back: the last checkpoint of session %q (line %d) signs %d call(s), fewer than the %d of the checkpoint given", old.Session, s.good, s.calls, old.Calls)
	}
	stored, err := chain.StoredHashes(s.leaves[:s.calls])
	if err != nil {
		return fail(RuleConsistency, "the tree of session %q: %v", old.Session, err)
	}
	if root, err := tlog.TreeHash(old.Calls, stored); err != nil || root != old.Root {
		return fail(RuleConsistencyFork, "the run does not extend the checkpoint given: the first %d call(s) of session %q have root %s, the checkpoint signs %s", old.Calls, old.Session, root, old.Root)
	}
	var path tlog.TreeProof
	if old.Calls > 0 && old.Calls < s.calls {
		if path, err = tlog.ProveTree(s.calls, old.Calls, stored); err != nil {
			return fail(RuleConsistency, "the consistency proof of session %q: %v", old.Session, err)
		}
	}
	return []byte(consistencyLine(string(from), s.note, path)), rep, nil
}

// readCheckpoint opens a checkpoint note (verified by key when key is not
// nil) and reads its text.
func readCheckpoint(msg string, key note.Verifier) (chain.Checkpoint, error) {
	n, err := openNote(msg, key)
	if err != nil {
		return chain.Checkpoint{}, err
	}
	return chain.ParseCheckpoint(n.Text)
}

// CheckConsistency checks a proof as ProveConsistency writes it against
// the signer's verifier key, which it requires: both checkpoints signed by
// key, of one origin, the later one's tree at least as large, and the
// consistency proof between them (tlog.CheckTree). It returns the two
// trees. A failure is a *manifest.RuleError of one of the consistency
// rules (RuleConsistency and those after it), or of RuleCheckpointNote or
// RuleCheckpointSignature for a checkpoint that does not open.
func CheckConsistency(proof []byte, key note.Verifier) (from, to tlog.Tree, err error) {
	fail := func(rule manifest.Rule, format string, args ...any) (tlog.Tree, tlog.Tree, error) {
		return tlog.Tree{}, tlog.Tree{}, &manifest.RuleError{Rule: rule, Line: 1, Offset: -1, Detail: fmt.Sprintf(format, args...)}
	}
	if key == nil {
		return fail(RuleConsistency, "no verifier key: a consistency proof checked without the signer's key proves nothing")
	}
	line, rest, _ := bytes.Cut(proof, []byte("\n"))
	if len(rest) != 0 || pjson.Check(line, nil) != nil {
		return fail(RuleConsistency, "a consistency proof is one JSON line")
	}
	l := parse(string(line))
	fromNote, ok1 := stringField(l, "from")
	toNote, ok2 := stringField(l, "to")
	path, okP := readHashes(l.Get("path"))
	if l.Get("consistency").Str != consistencySchema || !ok1 || !ok2 || !okP || consistencyLine(fromNote, toNote, path) != string(proof) {
		return fail(RuleConsistency, "not a %s proof exactly as promptloom writes it (docs/transcript.md)", consistencySchema)
	}
	old, err := readCheckpoint(fromNote, key)
	if err != nil {
		return fail(noteRule(err), "the earlier checkpoint: %v", err)
	}
	cur, err := readCheckpoint(toNote, key)
	if err != nil {
		return fail(noteRule(err), "the later checkpoint: %v", err)
	}
	switch {
	case old.Origin != cur.Origin || old.Session != cur.Session:
		return fail(RuleConsistencyOrigin, "the checkpoints are of two logs: origin %q and %q", old.Origin, cur.Origin)
	case cur.Calls < old.Calls:
		return fail(RuleConsistencyCutBack, "the later checkpoint signs %d call(s), fewer than the earlier's %d: the run was cut back", cur.Calls, old.Calls)
	case old.Calls == cur.Calls && old.Root != cur.Root:
		return fail(RuleConsistencyFork, "the checkpoints sign %d call(s) with two roots: a fork", old.Calls)
	case (old.Calls == 0 || old.Calls == cur.Calls) && len(path) != 0:
		return fail(RuleConsistency, "a proof from an empty tree or between equal sizes is empty, got %d hashes", len(path))
	case old.Calls > 0 && old.Calls < cur.Calls:
		if err := tlog.CheckTree(path, cur.Calls, cur.Root, old.Calls, old.Root); err != nil {
			return fail(RuleConsistencyFork, "the later tree does not extend the earlier: %v", err)
		}
	}
	return tlog.Tree{N: old.Calls, Hash: old.Root}, tlog.Tree{N: cur.Calls, Hash: cur.Root}, nil
}
