package transcript

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/promptloom/promptloom/internal/chain"
	"github.com/promptloom/promptloom/manifest"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// Inclusion proofs (docs/transcript.md, "Proofs"). A proof shows one call
// to someone who has the signer's verifier key and nothing else of the
// transcript: its request and outcome lines as they are in the
// transcript, the hashes on the path from the call's leaf to the root of
// its session's tree of calls, and the session's last checkpoint, which
// signs that root. It is three lines: a header, then the two lines.

// proofSchema names the format of a proof's header.
const proofSchema = "promptloom.journal.proof.v1"

// formatProof is a proof, as CheckProof reports it (Report.Format).
const formatProof = "proof"

// Prove verifies a transcript, as Verify does with o, and returns the
// inclusion proof of the call named call (Request.Call): its request and
// outcome lines as they are in the transcript, the path from their leaf
// to the root of its session's tree of calls, and the session's last
// checkpoint, which signs that root (docs/transcript.md, "Proofs").
// CheckProof checks it without the rest of the transcript.
//
// The report is the transcript's, as Verify returns it, and err is
// Verify's (a line past o.MaxLineBytes, a read that failed). There is a
// proof only of a transcript that verifies as far as it is written
// (Report.Holds: a run still being written has proofs of the calls its
// checkpoints cover already) in which exactly
// one call has the name, answered and covered by a checkpoint of its
// session; otherwise the proof is nil and the report's Problems say why.
// To prove, Prove keeps a hash of every call.
func Prove(transcript io.Reader, call string, o *Options) ([]byte, *Report, error) {
	if chain.IsNil(transcript) {
		return nil, &Report{}, errors.New("transcript: Prove: no reader")
	}
	if call == "" {
		return nil, &Report{}, errors.New("transcript: Prove: no call named")
	}
	v := newVerifier(o.verifier())
	v.ck.keepLeaves, v.pf = true, &prover{call: call, leaf: -1}
	rep, err := v.read(transcript, o)
	if err != nil || !rep.Holds() {
		return nil, rep, err
	}
	return v.pf.proof, rep, nil
}

// CheckProof checks a proof as Prove writes it against the signer's
// verifier key (docs/transcript.md, "Proofs"): the header, exactly as
// written; the request and its outcome, which must name it and hash to
// its receipt; the note, which key must have signed; and the leaf's path
// to the root the note signs. The report has the one call (Format
// "proof", 3 lines); reading it, o's MaxLineBytes holds as in Verify, and
// o's Verifier is not read: key is the only key. A proof is checked only
// against a key: without one it proves nothing, and CheckProof fails.
func CheckProof(proof io.Reader, key note.Verifier, o *Options) (*Report, error) {
	if chain.IsNil(proof) {
		return &Report{}, errors.New("transcript: CheckProof: no reader")
	}
	if key == nil {
		return &Report{}, errors.New("transcript: CheckProof: no verifier key: a proof checked without the signer's key proves nothing")
	}
	v := newVerifier(key)
	v.rep.Format = formatProof
	return v.read(proof, o)
}

// prover is what Prove keeps to prove its call.
type prover struct {
	call             string
	lines            []int // the request lines naming the call
	session          string
	seq              int64
	request, outcome []byte
	leaf             int64
	proof            []byte // the proof, once built
}

// proveRequest notes a request line (v.raw) of the call to prove.
func (v *verifier) proveRequest(n int, call, sess string, seq int64) {
	if p := v.pf; p != nil && call == p.call {
		if p.lines = append(p.lines, n); len(p.lines) == 1 {
			p.session, p.seq, p.request = sess, seq, slices.Clone(v.raw)
		}
	}
}

// proveOutcome notes the outcome line (v.raw) of the call to prove; it is
// called before the call's leaf is added to its session's tree.
func (v *verifier) proveOutcome(sess string, requestSeq int64) {
	if p := v.pf; p != nil && p.request != nil && p.outcome == nil && requestSeq == p.seq && sess == p.session {
		p.outcome, p.leaf = slices.Clone(v.raw), v.ck.session(sess).tree.n
	}
}

// finishProve builds the proof Prove asked for, or says why there is
// none.
func (v *verifier) finishProve() {
	p := v.pf
	if p == nil {
		return
	}
	var s *sessionTree
	if p.request != nil {
		s = v.ck.session(p.session)
	}
	switch {
	case len(p.lines) == 0:
		v.rep.broke(RuleProveNoCall, 0, "no call %q in the transcript", p.call)
		return
	case len(p.lines) > 1:
		v.rep.broke(RuleProveAmbiguous, 0, "%d calls are named %q (lines %s): a proof names one call", len(p.lines), p.call, joinInts(p.lines))
		return
	case p.outcome == nil:
		v.rep.broke(RuleProveUncovered, p.lines[0], "call %q (line %d) has no outcome: only an answered call is a leaf", p.call, p.lines[0])
		return
	case s.good == 0 || s.calls <= p.leaf:
		v.rep.broke(RuleProveUncovered, p.lines[0], "no checkpoint of session %q covers call %q (line %d)", p.session, p.call, p.lines[0])
		return
	}
	read, err := chain.StoredHashes(s.leaves[:s.calls])
	if err != nil {
		v.rep.broke(RuleProve, 0, "the tree of session %q: %v", p.session, err)
		return
	}
	path, err := tlog.ProveRecord(s.calls, p.leaf, read)
	if err != nil {
		v.rep.broke(RuleProve, 0, "the path of call %q: %v", p.call, err)
		return
	}
	var b bytes.Buffer
	b.WriteString(proofHeader(p.leaf, path, s.note))
	b.WriteByte('\n')
	b.Write(p.request)
	b.WriteByte('\n')
	b.Write(p.outcome)
	b.WriteByte('\n')
	p.proof = b.Bytes()
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// proofHeader is a proof's first line, as it is written (and must read).
func proofHeader(leaf int64, path tlog.RecordProof, note string) string {
	return fmt.Sprintf(`{"proof":%s,"leaf":%d,"path":[%s],"checkpoint":%s}`, chain.Quote(proofSchema), leaf, quoteHashes(path), chain.Quote(note))
}

// quoteHashes is a proof's path as its JSON array holds it: each hash in
// standard base64, quoted, comma-separated.
func quoteHashes(path []tlog.Hash) string {
	hashes := make([]string, len(path))
	for i, h := range path {
		hashes[i] = chain.Quote(h.String())
	}
	return strings.Join(hashes, ",")
}

// readHashes reads a proof's path: an array of base64 hashes, or not ok.
func readHashes(a value) (path []tlog.Hash, ok bool) {
	if !a.IsArray() {
		return nil, false
	}
	for _, h := range a.Array() {
		hash, err := tlog.ParseHash(h.Str)
		if h.Type != jString || err != nil {
			return nil, false
		}
		path = append(path, hash)
	}
	return path, true
}

// proofCheck is what CheckProof reads of a proof, line by line.
type proofCheck struct {
	leaf             int64
	path             tlog.RecordProof
	note             string
	request, outcome value
	reqHash, outHash string
	badLines         int
}

// proofLine reads line n of a proof.
func (v *verifier) proofLine(n int, line []byte, l value) {
	if v.proof == nil {
		v.proof = &proofCheck{}
	}
	pc := v.proof
	switch n {
	case 1:
		var ok bool
		if pc.leaf, pc.path, pc.note, ok = readProofHeader(line, l); !ok {
			v.rep.broke(RuleProof, n, "line 1: not a proof header as promptloom writes one (docs/transcript.md)")
			pc.badLines++
		}
	case 2:
		pc.request, pc.reqHash = l, chain.LineHash(line)
	case 3:
		pc.outcome, pc.outHash = l, chain.LineHash(line)
	default:
		v.rep.broke(RuleProof, n, "line %d: a proof has three lines", n)
		pc.badLines++
	}
}

// readProofHeader reads a proof's first line, which must be exactly as
// proofHeader writes it.
func readProofHeader(line []byte, l value) (leaf int64, path tlog.RecordProof, note string, ok bool) {
	if l.Get("proof").Str != proofSchema {
		return 0, nil, "", false
	}
	leaf, ok = intField(l.Get("leaf"))
	note, okN := stringField(l, "checkpoint")
	path, okP := readHashes(l.Get("path"))
	if !ok || !okN || !okP || proofHeader(leaf, path, note) != string(line) {
		return 0, nil, "", false
	}
	return leaf, path, note, true
}

// finishProof checks a proof once it is read: the request and its
// outcome, the outcome's receipt, the leaf's path to the root, and the
// note that signs the root, with CheckProof's key.
func (v *verifier) finishProof() {
	pc := v.proof
	if pc == nil || pc.badLines > 0 {
		return
	}
	if !pc.outcome.Exists() {
		v.rep.broke(RuleProof, v.rep.Lines, "a proof has three lines: a header, a request and its outcome")
		return
	}
	req, out := pc.request, pc.outcome
	call, _ := stringField(req, "call")
	sess, _ := stringField(req, "session")
	seq, _ := intField(req.Get("seq"))
	c := CallReport{Line: 2, Seq: seq, Call: call, Status: verified, OutcomeLine: 3}
	fail := func(rule manifest.Rule, format string, args ...any) {
		if c.Status != failed {
			c.Status, c.Problem = failed, callFailed(rule, format, args...)
			c.Problem.Line = 2
		}
	}
	field, hashField := "response", "response_content_hash"
	if out.Get("kind").Str == chain.KindError {
		field, hashField = "error", "error_content_hash"
	}
	if field == "response" {
		c.Outcome = out.Get("response.text").String()
	} else {
		c.Outcome = "error: " + out.Get("error.message").String()
	}
	rs, _ := intField(out.Get("request_seq"))
	switch {
	case req.Get("kind").Str != chain.KindRequest || req.Get("call").Type != jString || req.Get("session").Type != jString:
		fail(RuleProof, "line 2 is not a provider_call_request with a call and a session")
	case out.Get("kind").Str != chain.KindResponse && out.Get("kind").Str != chain.KindError:
		fail(RuleProof, "line 3 is not a provider_call_response or provider_call_error")
	case rs != seq || out.Get("request_hash").Str != pc.reqHash || out.Get("call").Str != call || out.Get("session").Str != sess:
		fail(RuleOutcome, "the %s at line 3 does not name the request at line 2 (its seq, hash, call and session)", field)
	case out.Get(hashField).Type != jString || !rederives(orRawNull(out.Get(field).Raw), out.Get(hashField).Str):
		fail(RuleOutcomeContentHash, "the %s at line 3 does not hash to its %s", field, hashField)
	}
	nt, err := openNote(pc.note, v.ck.key)
	var cp chain.Checkpoint
	if err == nil {
		cp, err = chain.ParseCheckpoint(nt.Text)
	}
	switch {
	case err != nil:
		fail(noteRule(err), "the proof's checkpoint: %v", err)
	case cp.Session != sess:
		fail(RuleCheckpointOrigin, "the proof's checkpoint signs session %q, the call is in session %q", cp.Session, sess)
	case cp.Origin != "" && !strings.HasPrefix(cp.Origin, v.ck.key.Name()+"/"):
		fail(RuleCheckpointOrigin, "the proof's checkpoint has origin %q, not one of %s's", cp.Origin, v.ck.key.Name())
	case cp.Lines < seq:
		fail(RuleProofLeaf, "the proof's checkpoint signs %d lines, before the request's seq %d", cp.Lines, seq)
	default:
		if err := tlog.CheckRecord(pc.path, cp.Calls, cp.Root, pc.leaf, chain.LeafHash(pc.reqHash, pc.outHash)); err != nil {
			fail(RuleProofLeaf, "the call is not leaf %d of the %d signed by the checkpoint: %v", pc.leaf, cp.Calls, err)
		}
	}
	if c.Status == verified {
		v.rep.Checkpoints = 1
		v.rep.Head = cp.Head
	}
	v.rep.Calls = append(v.rep.Calls, c)
}
