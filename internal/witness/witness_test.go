package witness_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/promptloom/promptloom/internal/witness"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

const origin = "example.com/log"

// memTree is a tlog tree kept in memory, built with tlog.StoredHashes.
type memTree struct {
	n      int64
	hashes []tlog.Hash
}

func (t *memTree) ReadHashes(idx []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(idx))
	for i, x := range idx {
		out[i] = t.hashes[x]
	}
	return out, nil
}

func (t *memTree) add(t0 *testing.T, leaf string) {
	hs, err := tlog.StoredHashes(t.n, []byte(leaf), t)
	if err != nil {
		t0.Fatal(err)
	}
	t.hashes = append(t.hashes, hs...)
	t.n++
}

func (t *memTree) clone() *memTree {
	return &memTree{n: t.n, hashes: append([]tlog.Hash(nil), t.hashes...)}
}

type logKeys struct {
	signer note.Signer
	vkey   string
}

func newLog(t *testing.T, name string) logKeys {
	skey, vkey, err := note.GenerateKey(rand.Reader, name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	return logKeys{s, vkey}
}

// checkpoint is the log's signed tlog-checkpoint of t, with an extension line.
func (l logKeys) checkpoint(t *testing.T, tr *memTree) []byte {
	h, err := tlog.TreeHash(tr.n, tr)
	if err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprintf("%s\n%d\n%s\nlines %d\n", l.signer.Name(), tr.n, h, tr.n)
	msg, err := note.Sign(&note.Note{Text: text}, l.signer)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

func proof(t *testing.T, tr *memTree, old int64) tlog.TreeProof {
	if old == 0 || old == tr.n {
		return nil
	}
	p, err := tlog.ProveTree(tr.n, old, tr)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type fixture struct {
	skey, vkey string
	log        logKeys
	dir        string
}

func newFixture(t *testing.T) *fixture {
	skey, vkey, err := witness.GenerateKey(rand.Reader, "witness.example/w1")
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{skey: skey, vkey: vkey, log: newLog(t, origin), dir: t.TempDir()}
}

func (f *fixture) start(t *testing.T) *witness.Witness {
	w, err := witness.New(f.skey, []string{f.log.vkey}, f.dir)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// specVerify checks a cosignature line as tlog-cosignature describes it,
// without the package: the key ID is SHA-256(name || "\n" || 0x04 ||
// public key)[:4], the signature 8 bytes of big-endian time then Ed25519
// over "cosignature/v1\ntime T\n" and the checkpoint's body.
func specVerify(t *testing.T, vkey string, checkpoint, line []byte) {
	t.Helper()
	parts := strings.SplitN(vkey, "+", 3)
	raw, _ := base64.StdEncoding.DecodeString(parts[2])
	if len(parts) != 3 || len(raw) != 33 || raw[0] != 0x04 {
		t.Fatalf("vkey %q is not name+hash+base64(0x04||key)", vkey)
	}
	name, pub := parts[0], ed25519.PublicKey(raw[1:])
	body, _, ok := bytes.Cut(checkpoint, []byte("\n\n"))
	if !ok {
		t.Fatal("checkpoint has no signature block")
	}
	text := append(body, '\n')
	l, ok := strings.CutPrefix(string(line), "— "+name+" ")
	if !ok || !strings.HasSuffix(l, "\n") || strings.Count(l, "\n") != 1 {
		t.Fatalf("cosignature %q is not one signature line by %s", line, name)
	}
	sig, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(l, "\n"))
	if err != nil || len(sig) != 4+8+64 {
		t.Fatalf("cosignature %q: %d bytes, want key ID, timestamp and signature", l, len(sig))
	}
	id := sha256.Sum256(append([]byte(name+"\n\x04"), pub...))
	if !bytes.Equal(sig[:4], id[:4]) {
		t.Fatalf("key ID %x, want %x", sig[:4], id[:4])
	}
	ts := binary.BigEndian.Uint64(sig[4:12])
	msg := append([]byte("cosignature/v1\ntime "+strconv.FormatUint(ts, 10)+"\n"), text...)
	if !ed25519.Verify(pub, msg, sig[12:]) {
		t.Fatalf("cosignature does not verify over %q", msg)
	}
}

func TestRunCosignedInOrder(t *testing.T) {
	f := newFixture(t)
	srv := httptest.NewServer(f.start(t))
	defer srv.Close()
	wv, err := witness.NewVerifier(f.vkey)
	if err != nil {
		t.Fatal(err)
	}
	logV, _ := note.NewVerifier(f.log.vkey)
	tr := &memTree{}
	var old int64
	for i := range 12 {
		tr.add(t, fmt.Sprintf("call %d", i))
		if i%3 == 1 {
			continue // not every size is witnessed
		}
		cp := f.log.checkpoint(t, tr)
		line, err := witness.Cosign(context.Background(), srv.Client(), srv.URL, old, proof(t, tr, old), cp)
		if err != nil {
			t.Fatalf("size %d from %d: %v", tr.n, old, err)
		}
		specVerify(t, f.vkey, cp, line)
		n, err := note.Open(append(bytes.Clone(cp), line...), note.VerifierList(logV, wv))
		if err != nil || len(n.Sigs) != 2 {
			t.Fatalf("cosigned checkpoint: %v (%d signatures)", err, len(n.Sigs))
		}
		old = tr.n
	}
}

// add posts one request straight to the handler and returns its status and
// body.
func add(w http.Handler, body []byte) (int, string) {
	rec := httptest.NewRecorder()
	w.ServeHTTP(rec, httptest.NewRequest("POST", "/add-checkpoint", bytes.NewReader(body)))
	return rec.Code, rec.Body.String()
}

func request(old int64, p tlog.TreeProof, cp []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "old %d\n", old)
	for _, h := range p {
		fmt.Fprintf(&b, "%s\n", h)
	}
	b.WriteByte('\n')
	b.Write(cp)
	return b.Bytes()
}

func grow(t *testing.T, tr *memTree, prefix string, n int) {
	for i := 0; tr.n < int64(n); i++ {
		tr.add(t, fmt.Sprintf("%s %d", prefix, tr.n))
	}
}

func TestCutBackRefused(t *testing.T) {
	f := newFixture(t)
	w := f.start(t)
	tr := &memTree{}
	grow(t, tr, "call", 5)
	short := tr.clone()
	cp5 := f.log.checkpoint(t, short)
	grow(t, tr, "call", 8)
	if _, err := w.AddCheckpoint(0, nil, f.log.checkpoint(t, tr)); err != nil {
		t.Fatal(err)
	}
	var e *witness.Error
	_, err := w.AddCheckpoint(5, nil, cp5)
	if !errors.As(err, &e) || e.Status != http.StatusConflict || e.Size != 8 {
		t.Fatalf("old 5 after 8: %v, want 409 with size 8", err)
	}
	_, err = w.AddCheckpoint(8, nil, cp5)
	if !errors.As(err, &e) || e.Status != http.StatusBadRequest {
		t.Fatalf("size 5 from old 8: %v, want 400", err)
	}
	code, body := add(w, request(5, nil, cp5))
	if code != http.StatusConflict || body != "8\n" {
		t.Fatalf("HTTP old 5 after 8: %d %q, want 409 \"8\\n\"", code, body)
	}
}

func TestForkRefused(t *testing.T) {
	f := newFixture(t)
	w := f.start(t)
	base := &memTree{}
	grow(t, base, "call", 4)
	if _, err := w.AddCheckpoint(0, nil, f.log.checkpoint(t, base)); err != nil {
		t.Fatal(err)
	}
	a, b := base.clone(), base.clone()
	grow(t, a, "run A", 6)
	grow(t, b, "run B", 6)
	if _, err := w.AddCheckpoint(4, proof(t, a, 4), f.log.checkpoint(t, a)); err != nil {
		t.Fatal(err)
	}
	var e *witness.Error
	_, err := w.AddCheckpoint(6, nil, f.log.checkpoint(t, b))
	if !errors.As(err, &e) || e.Status != http.StatusConflict {
		t.Fatalf("fork B at the same size: %v, want 409", err)
	}
	grow(t, b, "run B", 7)
	// B's own proof from 6 starts from B's root, not the cosigned A's.
	_, err = w.AddCheckpoint(6, proof(t, b, 6), f.log.checkpoint(t, b))
	if !errors.As(err, &e) || e.Status != http.StatusUnprocessableEntity {
		t.Fatalf("fork B extended: %v, want 422", err)
	}
	// A still extends.
	grow(t, a, "run A", 9)
	if _, err := w.AddCheckpoint(6, proof(t, a, 6), f.log.checkpoint(t, a)); err != nil {
		t.Fatal(err)
	}
}

func TestRestartKeepsState(t *testing.T) {
	f := newFixture(t)
	tr := &memTree{}
	grow(t, tr, "call", 3)
	if _, err := f.start(t).AddCheckpoint(0, nil, f.log.checkpoint(t, tr)); err != nil {
		t.Fatal(err)
	}
	w := f.start(t)
	grow(t, tr, "call", 7)
	var e *witness.Error
	if _, err := w.AddCheckpoint(0, nil, f.log.checkpoint(t, tr)); !errors.As(err, &e) || e.Size != 3 {
		t.Fatalf("after restart, old 0: %v, want 409 with size 3", err)
	}
	if _, err := w.AddCheckpoint(3, proof(t, tr, 3), f.log.checkpoint(t, tr)); err != nil {
		t.Fatal(err)
	}
}

// A signature line under the witness's own name in a request is not kept:
// the state still verifies at the next start.
func TestForgedCosignatureNotStored(t *testing.T) {
	f := newFixture(t)
	tr := &memTree{}
	grow(t, tr, "call", 3)
	cp := f.log.checkpoint(t, tr)
	name, rest, _ := strings.Cut(f.vkey, "+")
	hash, _, _ := strings.Cut(rest, "+")
	id, _ := strconv.ParseUint(hash, 16, 32)
	forged := binary.BigEndian.AppendUint32(nil, uint32(id))
	forged = append(forged, make([]byte, 72)...)
	cp = append(cp, "— "+name+" "+base64.StdEncoding.EncodeToString(forged)+"\n"...)
	if _, err := f.start(t).AddCheckpoint(0, nil, cp); err != nil {
		t.Fatal(err)
	}
	grow(t, tr, "call", 5)
	if _, err := f.start(t).AddCheckpoint(3, proof(t, tr, 3), f.log.checkpoint(t, tr)); err != nil {
		t.Fatal(err)
	}
}

func TestCorruptStateRefused(t *testing.T) {
	f := newFixture(t)
	tr := &memTree{}
	grow(t, tr, "call", 3)
	if _, err := f.start(t).AddCheckpoint(0, nil, f.log.checkpoint(t, tr)); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(f.dir, "*.checkpoint"))
	if len(files) != 1 {
		t.Fatalf("state files %v, want one", files)
	}
	good, _ := os.ReadFile(files[0])
	grow(t, tr, "call", 9)
	for name, bad := range map[string][]byte{
		"flipped size": bytes.Replace(good, []byte("\n3\n"), []byte("\n2\n"), 1),
		"truncated":    good[:len(good)/2],
		"empty":        {},
		// The log signed it, but the witness never cosigned it.
		"log's checkpoint only": f.log.checkpoint(t, tr),
	} {
		if err := os.WriteFile(files[0], bad, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := witness.New(f.skey, []string{f.log.vkey}, f.dir)
		var se *witness.StateError
		if !errors.As(err, &se) || se.Path != files[0] {
			t.Errorf("%s: New = %v, want a *StateError naming %s", name, err, files[0])
		}
		if after, _ := os.ReadFile(files[0]); !bytes.Equal(after, bad) {
			t.Errorf("%s: the state file was changed", name)
		}
	}
	// A good state under another file's name, and a good state of a log
	// no key given covers, are refused too.
	if err := os.WriteFile(files[0], good, 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(f.dir, "0000.checkpoint")
	if err := os.WriteFile(other, good, 0o600); err != nil {
		t.Fatal(err)
	}
	var se *witness.StateError
	if _, err := witness.New(f.skey, []string{f.log.vkey}, f.dir); !errors.As(err, &se) || se.Path != other {
		t.Errorf("a state under another name: New = %v, want a *StateError naming %s", err, other)
	}
	os.Remove(other)
	_, otherLog, _ := note.GenerateKey(rand.Reader, "other.example/log")
	if _, err := witness.New(f.skey, []string{otherLog}, f.dir); !errors.As(err, &se) || se.Path != files[0] || !strings.Contains(se.Reason, "no log key given covers") {
		t.Errorf("a state no log key covers: New = %v", err)
	}
}

func TestConcurrentRequestsSerialize(t *testing.T) {
	f := newFixture(t)
	w := f.start(t)
	tr := &memTree{}
	var cps [][]byte
	for range 16 {
		tr.add(t, fmt.Sprintf("call %d", tr.n))
		cps = append(cps, f.log.checkpoint(t, tr))
	}
	// Every request claims the witness has seen nothing: one may win.
	codes := make([]int, len(cps))
	var wg sync.WaitGroup
	for i, cp := range cps {
		wg.Go(func() { codes[i], _ = add(w, request(0, nil, cp)) })
	}
	wg.Wait()
	won := -1
	for i, c := range codes {
		switch {
		case c == http.StatusOK && won < 0:
			won = i
		case c != http.StatusConflict:
			t.Fatalf("request %d: %d (winner %d)", i, c, won)
		}
	}
	if won < 0 {
		t.Fatal("no request was cosigned")
	}
	code, body := add(w, request(0, nil, cps[0]))
	if code != http.StatusConflict || body != fmt.Sprintf("%d\n", won+1) {
		t.Fatalf("state after the race: %d %q, want size %d", code, body, won+1)
	}
}

func TestHostileRequests(t *testing.T) {
	f := newFixture(t)
	w := f.start(t)
	tr := &memTree{}
	grow(t, tr, "call", 4)
	if code, body := add(w, request(0, nil, f.log.checkpoint(t, tr))); code != http.StatusOK {
		t.Fatal(code, body)
	}
	grow(t, tr, "call", 11)
	cp := f.log.checkpoint(t, tr)
	good := proof(t, tr, 4)
	other := newLog(t, origin)
	stranger := newLog(t, "example.com/other")
	var hash tlog.Hash
	zeroWithRoot, err := note.Sign(&note.Note{Text: fmt.Sprintf("%s\n0\n%s\n", origin, tlog.Hash{1})}, f.log.signer)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		body []byte
		code int
	}{
		{"huge", append(request(4, good, cp), bytes.Repeat([]byte("x"), 1<<20)...), http.StatusRequestEntityTooLarge},
		{"no old line", cp, http.StatusBadRequest},
		{"old with a leading zero", request(4, good, cp)[:0:0], http.StatusBadRequest},
		{"no empty line", []byte("old 4\n"), http.StatusBadRequest},
		{"malformed note", request(4, good, []byte("example.com/log\n11\n")), http.StatusBadRequest},
		{"bad base64 proof line", append([]byte("old 4\nnot base64!\n\n"), cp...), http.StatusBadRequest},
		{"64 proof lines", request(4, make(tlog.TreeProof, 64), cp), http.StatusBadRequest},
		{"proof too short", request(4, good[:len(good)-1], cp), http.StatusUnprocessableEntity},
		{"proof too long", request(4, append(good, hash), cp), http.StatusUnprocessableEntity},
		{"proof from 0", request(0, good, cp), http.StatusBadRequest},
		{"old above size", request(12, nil, cp), http.StatusBadRequest},
		{"size 0 with a root", request(0, nil, zeroWithRoot), http.StatusBadRequest},
		{"unknown origin", request(0, nil, stranger.checkpoint(t, tr)), http.StatusNotFound},
		{"another key, same origin", request(4, good, other.checkpoint(t, tr)), http.StatusForbidden},
	}
	cases[2].body = append([]byte("old 04\n\n"), cp...)
	for _, c := range cases {
		if code, body := add(w, c.body); code != c.code {
			t.Errorf("%s: %d %q, want %d", c.name, code, body, c.code)
		}
	}
	rec := httptest.NewRecorder()
	w.ServeHTTP(rec, httptest.NewRequest("GET", "/add-checkpoint", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d, want 405", rec.Code)
	}
	// None of it moved the state: the good proof still applies.
	if code, body := add(w, request(4, good, cp)); code != http.StatusOK {
		t.Fatalf("after the hostile requests: %d %q", code, body)
	}
}

func TestKeys(t *testing.T) {
	skey, vkey, err := note.GenerateKey(rand.Reader, "w")
	if err != nil {
		t.Fatal(err)
	}
	var ke *witness.KeyError
	if _, err := witness.New(skey, nil, t.TempDir()); !errors.As(err, &ke) {
		t.Errorf("a note signer key as the witness key: %v, want *KeyError", err)
	}
	if _, err := witness.NewVerifier(vkey); !errors.As(err, &ke) {
		t.Errorf("a note verifier key as a witness verifier: %v, want *KeyError", err)
	}
	if _, _, err := witness.GenerateKey(rand.Reader, "a b"); !errors.As(err, &ke) {
		t.Errorf("a name with a space: %v, want *KeyError", err)
	}
}
