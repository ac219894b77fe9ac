package journal

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom/internal/chain"
	"github.com/promptloom/promptloom/internal/witness"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/transcript"

	"github.com/tidwall/gjson"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// c2spCheckpoint is a tlog-checkpoint parsed as c2sp.org/tlog-checkpoint
// specifies it, written here from the specification and sharing nothing
// with the package's reader: the note text is an origin line, the tree size
// in ASCII decimal without leading zeroes, the root hash in standard
// base64, then zero or more non-empty extension lines, each line ended by
// a newline.
type c2spCheckpoint struct {
	origin     string
	size       uint64
	root       [32]byte
	extensions []string
}

func parseC2SP(text string) (c2spCheckpoint, error) {
	var c c2spCheckpoint
	if !strings.HasSuffix(text, "\n") {
		return c, errors.New("the text does not end in a newline")
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) < 3 {
		return c, errors.New("fewer than three lines")
	}
	c.origin = lines[0]
	if c.origin == "" || strings.ContainsAny(c.origin, " \t+") {
		return c, fmt.Errorf("origin %q is empty or has a space or a plus", c.origin)
	}
	if lines[1] == "" || (len(lines[1]) > 1 && lines[1][0] == '0') {
		return c, fmt.Errorf("size %q", lines[1])
	}
	size, err := strconv.ParseUint(lines[1], 10, 64)
	if err != nil {
		return c, err
	}
	c.size = size
	root, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(root) != 32 {
		return c, fmt.Errorf("root hash %q", lines[2])
	}
	copy(c.root[:], root)
	for _, l := range lines[3:] {
		if l == "" {
			return c, errors.New("an empty extension line")
		}
		c.extensions = append(c.extensions, l)
	}
	return c, nil
}

// notes is the checkpoint notes of a transcript, in order.
func notes(t *testing.T, tx string) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(strings.NewReader(tx))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if l := gjson.Parse(sc.Text()); l.Get("kind").Str == chain.KindCheckpoint {
			out = append(out, l.Get("note").Str)
		}
	}
	return out
}

// Each checkpoint a journal signs is a C2SP tlog-checkpoint: x/mod's note
// verifies it, the specification's parser reads it, its size and root are
// the tree of the calls' records computed from the transcript's lines,
// and its origin is the key name, the session and the open line's hash.
func TestCheckpointIsC2SP(t *testing.T) {
	s, v := keys(t, "example.com/promptloom")
	tx := signed(t, s, 2, 5)
	var lines [][]byte
	for l := range bytes.Lines([]byte(tx)) {
		lines = append(lines, bytes.TrimSuffix(l, []byte("\n")))
	}
	// The records, from the lines alone: each outcome names its request's
	// chain hash; the outcome's own hash is BLAKE3 of its bytes.
	var records [][]byte
	for _, l := range lines {
		if k := gjson.GetBytes(l, "kind").Str; k == chain.KindResponse || k == chain.KindError {
			records = append(records, []byte(gjson.GetBytes(l, "request_hash").Str+"\n"+chain.LineHash(l)+"\n"))
		}
	}
	cps := notes(t, tx)
	if len(cps) != 3 {
		t.Fatalf("%d checkpoints, want 3 (at 2 and 4 calls, and at close)", len(cps))
	}
	for i, msg := range cps {
		n, err := note.Open([]byte(msg), note.VerifierList(v))
		if err != nil {
			t.Fatalf("checkpoint %d: note.Open: %v", i, err)
		}
		c, err := parseC2SP(n.Text)
		if err != nil {
			t.Fatalf("checkpoint %d: %v\n%s", i, err, n.Text)
		}
		size := []uint64{2, 4, 5}[i]
		var stored []tlog.Hash
		for j, r := range records[:size] {
			hs, err := tlog.StoredHashes(int64(j), r, tlog.HashReaderFunc(func(ix []int64) ([]tlog.Hash, error) {
				out := make([]tlog.Hash, len(ix))
				for k, x := range ix {
					out[k] = stored[x]
				}
				return out, nil
			}))
			if err != nil {
				t.Fatal(err)
			}
			stored = append(stored, hs...)
		}
		root, _ := tlog.TreeHash(int64(size), tlog.HashReaderFunc(func(ix []int64) ([]tlog.Hash, error) {
			out := make([]tlog.Hash, len(ix))
			for k, x := range ix {
				out[k] = stored[x]
			}
			return out, nil
		}))
		if c.size != size || c.root != root {
			t.Errorf("checkpoint %d signs %d calls with root %x, want %d and %s", i, c.size, c.root, size, root)
		}
		open := strings.TrimPrefix(chain.LineHash(lines[0]), "blake3:")[:16]
		if want := "example.com/promptloom/s1/" + open; c.origin != want {
			t.Errorf("origin %q, want %q", c.origin, want)
		}
		if len(c.extensions) != 2 || !strings.HasPrefix(c.extensions[0], "lines ") || !strings.HasPrefix(c.extensions[1], "head blake3:") {
			t.Errorf("extension lines %q", c.extensions)
		}
	}
}

// A session id is percent-encoded in its origin, so that no id makes an
// origin with a space, a plus or another path segment, and each id has one.
func TestOriginEscapesTheSession(t *testing.T) {
	for _, id := range []string{"a b", "a+b", "a/b", "é", "%41", "~._-"} {
		o := chain.Origin("k", id, "blake3:0123456789abcdef0123")
		if strings.ContainsAny(o, " +") || strings.Count(o, "/") != 2 {
			t.Errorf("origin of %q is %q", id, o)
		}
		_, got, open, ok := chain.ParseOrigin(o)
		if !ok || got != id || open != "0123456789abcdef" {
			t.Errorf("chain.ParseOrigin(%q) = %q %q %v", o, got, open, ok)
		}
	}
}

// checkpointV1 is testdata/checkpoint-v1: a transcript signed before
// checkpoints were C2SP's, and the verifier of its key.
func checkpointV1(t *testing.T) ([]byte, note.Verifier) {
	t.Helper()
	data, err := os.ReadFile("testdata/checkpoint-v1/v1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	pub, err := os.ReadFile("testdata/checkpoint-v1/v1test.pub")
	if err != nil {
		t.Fatal(err)
	}
	v, err := note.NewVerifier(strings.TrimSpace(string(pub)))
	if err != nil {
		t.Fatal(err)
	}
	return data, v
}

// A transcript signed by promptloom before checkpoints were C2SP's (made
// by that version's demo negotiation --record --sign) still verifies under
// its key.
func TestOlderCheckpointsVerify(t *testing.T) {
	data, v := checkpointV1(t)
	rep, text := verifyWith(string(data), &transcript.Options{Verifier: v})
	if !rep.OK() || rep.SignedBy != "v1test" || !strings.Contains(notes(t, string(data))[0], chain.CheckpointHeader) {
		t.Fatalf("the older checkpoint does not verify:\n%s", text)
	}
}

// A line cut out of, or repeated inside, what a checkpoint signs: the
// checkpoint does not hold, however the lines after it count their seq (a
// checkpoint signs the count of lines, not the seq a line claims).
func TestACheckpointCountsLinesNotSeqs(t *testing.T) {
	data, v := checkpointV1(t)
	ls := strings.SplitAfter(string(data), "\n")
	first := -1 // the first checkpoint's line, 0-based
	for i, l := range ls {
		if strings.Contains(l, `"kind":"journal_checkpoint"`) {
			first = i
			break
		}
	}
	if first < 3 {
		t.Fatalf("no checkpoint after the first lines (at %d)", first)
	}
	cut := strings.Join(append(append([]string{}, ls[:first-2]...), ls[first-1:]...), "")
	twice := strings.Join(append(append([]string{}, ls[:first-1]...), ls[first-2:]...), "")
	for name, edited := range map[string]string{"cut": cut, "repeated": twice} {
		rep, text := verifyWith(edited, &transcript.Options{Verifier: v})
		if rep.OK() || rep.Checkpoints != 0 {
			t.Errorf("a line %s before the first checkpoint: %d checkpoint(s) hold:\n%s", name, rep.Checkpoints, text)
		}
	}
}

// fixedRun records calls into a journal whose clock stands still, so two
// runs with the same first calls have the same first lines, and so one
// origin: the second diverges after shared calls, a fork.
func fixedRun(t *testing.T, s note.Signer, witnesses []string, calls ...string) (string, error) {
	t.Helper()
	var buf bytes.Buffer
	at := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	j := New(&buf, &Options{Clock: func() time.Time { return at }, Session: "run", Signer: s, CheckpointEvery: 2, Witnesses: witnesses})
	for _, c := range calls {
		if _, err := j.Call(ctx, echo, request(t, c, `{"system": ["You are careful."]}`)); err != nil {
			t.Fatal(err)
		}
	}
	err := j.Close()
	return buf.String(), err
}

// cutAfter is the transcript up to and including its k-th checkpoint line.
func cutAfter(t *testing.T, tx string, k int) string {
	t.Helper()
	var b strings.Builder
	for l := range strings.Lines(tx) {
		b.WriteString(l)
		if strings.Contains(l, `"kind":"journal_checkpoint"`) {
			if k--; k == 0 {
				return b.String()
			}
		}
	}
	t.Fatal("not so many checkpoints")
	return ""
}

// A consistency proof shows an auditor holding an earlier checkpoint that
// the run only grew; a run cut back to before a later checkpoint the
// auditor kept, or forked after it, has none, and a proof changed in any
// way fails.
func TestConsistency(t *testing.T) {
	s, v := keys(t, "log")
	full, err := fixedRun(t, s, nil, "c0", "c1", "c2", "c3", "c4", "c5")
	if err != nil {
		t.Fatal(err)
	}
	cps := notes(t, full) // at 2, 4 and 6 calls, and the close at 6
	o := &transcript.Options{Verifier: v}
	proof, rep, err := transcript.ProveConsistency(strings.NewReader(full), []byte(cps[0]), o)
	if err != nil || proof == nil {
		t.Fatalf("no proof: %v\n%s", err, verdictText(rep, err))
	}
	from, to, err := transcript.CheckConsistency(proof, v)
	if err != nil || from.N != 2 || to.N != 6 {
		t.Fatalf("CheckConsistency: %v %v %v", from, to, err)
	}
	// Every byte matters.
	for i := range proof {
		bad := bytes.Clone(proof)
		bad[i] ^= 0x20
		if _, _, err := transcript.CheckConsistency(bad, v); err == nil {
			t.Fatalf("a proof with byte %d changed checks", i)
		}
	}
	_, other := keys(t, "log")
	if _, _, err := transcript.CheckConsistency(proof, other); err == nil {
		t.Fatal("a proof checks under another key of the same name")
	}

	// Cut back to the checkpoint at 4 calls: it verifies under the key, but
	// an auditor who kept the one at 6 catches it.
	cut := cutAfter(t, full, 2)
	proof, rep, _ = transcript.ProveConsistency(strings.NewReader(cut), []byte(cps[2]), o)
	if proof != nil || !hasRule(rep, transcript.RuleConsistencyCutBack) {
		t.Fatalf("a cut back run proves consistent:\n%s", verdictText(rep, nil))
	}

	// A fork: the same first four calls, then others. It shares the origin
	// and the checkpoints at 2 and 4, and extends neither the 6 of the run.
	fork, err := fixedRun(t, s, nil, "c0", "c1", "c2", "c3", "x4", "x5")
	if err != nil {
		t.Fatal(err)
	}
	if notes(t, fork)[1] != cps[1] {
		t.Fatal("the fork does not share the checkpoint at 4 calls")
	}
	proof, rep, _ = transcript.ProveConsistency(strings.NewReader(fork), []byte(cps[2]), o)
	if proof != nil || !hasRule(rep, transcript.RuleConsistencyFork) {
		t.Fatalf("a fork proves consistent:\n%s", verdictText(rep, nil))
	}
	if proof, _, _ := transcript.ProveConsistency(strings.NewReader(fork), []byte(cps[1]), o); proof == nil {
		t.Fatal("the fork extends the checkpoint it shares, and has no proof")
	}
}

// hasRule reports whether rep has a problem of rule, the transcript's or
// a call's.
func hasRule(rep *transcript.Report, rule manifest.Rule) bool {
	for _, p := range rep.Problems {
		if p.Rule == rule {
			return true
		}
	}
	for _, c := range rep.Calls {
		if c.Problem != nil && c.Problem.Rule == rule {
			return true
		}
	}
	return false
}

// witnessServer runs a witness of the logs under logKey, with its state in
// dir.
func witnessServer(t *testing.T, dir, skey, logKey string) *httptest.Server {
	t.Helper()
	w, err := witness.New(skey, []string{logKey}, dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(w)
	t.Cleanup(srv.Close)
	return srv
}

// A journal given witnesses has each checkpoint cosigned, and Verify holds
// the last checkpoint to a quorum. A fork of the run under its origin is
// refused by the witnesses, even restarted, and so fails the quorum.
func TestWitnessedRun(t *testing.T) {
	lskey, lvkey, _ := note.GenerateKey(rand.Reader, "log")
	s, _ := note.NewSigner(lskey)
	v, _ := note.NewVerifier(lvkey)
	var urls []string
	var cosigners []note.Verifier
	var skeys, dirs []string
	for i := range 2 {
		skey, vkey, err := witness.GenerateKey(rand.Reader, fmt.Sprintf("w%d", i))
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "state")
		srv := witnessServer(t, dir, skey, lvkey)
		cv, err := witness.NewVerifier(vkey)
		if err != nil {
			t.Fatal(err)
		}
		urls, cosigners, skeys, dirs = append(urls, srv.URL), append(cosigners, cv), append(skeys, skey), append(dirs, dir)
	}
	run, err := fixedRun(t, s, urls, "c0", "c1", "c2", "c3")
	if err != nil {
		t.Fatalf("the witnesses did not cosign: %v", err)
	}
	o := &transcript.Options{Verifier: v, Cosigners: cosigners}
	if rep, text := verifyWith(run, o); !rep.OK() || !strings.Contains(text, "cosigned by w0, w1: the last checkpoint of every session") {
		t.Fatalf("a witnessed run fails, or does not say who cosigned:\n%s", text)
	}
	for _, msg := range notes(t, run) {
		if n, err := note.Open([]byte(msg), note.VerifierList(append(cosigners, v)...)); err != nil || len(n.Sigs) != 3 {
			t.Fatalf("a checkpoint is not signed by the log and both witnesses: %v", err)
		}
	}
	// The first witness restarts on its state; the fork is refused by both.
	w0, err := witness.New(skeys[0], []string{lvkey}, dirs[0])
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	srv0 := httptest.NewServer(w0)
	defer srv0.Close()
	fork, err := fixedRun(t, s, []string{srv0.URL, urls[1]}, "c0", "c1", "x2", "x3")
	if err == nil || !errors.Is(err, ErrNotCosigned) {
		t.Fatalf("the witnesses cosigned a fork: %v", err)
	}
	// Its first checkpoint, of 2 calls, is the run cut back to its first
	// checkpoint: refused, the witness having cosigned 4; then its own 4
	// calls, a fork.
	for _, want := range []string{"the checkpoint of 2 call(s): witness: " + srv0.URL + ": the witness last cosigned size 4, not 0", "the checkpoint of 4 call(s): witness: " + srv0.URL + ": the witness cosigned another tree of size 4: a fork"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusals do not say %q:\n%v", want, err)
		}
	}
	rep, text := verifyWith(fork, &transcript.Options{Verifier: v, Cosigners: cosigners, Quorum: 1})
	if rep.OK() || !hasRule(rep, transcript.RuleQuorum) {
		t.Fatalf("a fork passes the quorum:\n%s", text)
	}
	// A transcript that fails is not said to be signed or cosigned: a
	// space added in one line breaks the chain, and the report names no
	// key that vouches for it.
	broken := strings.Replace(run, `"kind":"system_prompt",`, `"kind": "system_prompt",`, 1)
	if rep, text := verifyWith(broken, o); rep.OK() || rep.SignedBy != "" || rep.CosignedBy != nil || regexp.MustCompile(`(?m)^(co)?signed by`).MatchString(text) {
		t.Fatalf("a broken transcript is said to be signed:\n%s", text)
	}
	// Without the signer's key, witness keys are refused, not ignored.
	if rep, _ := verifyWith(run, &transcript.Options{Cosigners: cosigners}); rep.OK() {
		t.Fatal("witness keys without a verifier key pass")
	}
}
