// Package witness is a C2SP transparency-log witness (c2sp.org/tlog-witness)
// for any log that publishes tlog-checkpoint notes, run by `promptloom
// witness`, and the client a journal uses to ask one for a cosignature.
// The public package witness holds what a verifier needs of it: the
// verifier of a witness key (NewVerifier), which this package implements.
//
// A log's own signature on a checkpoint proves only that the log signed it:
// a log can sign two different trees and show each to a different auditor,
// or cut its run back and sign a shorter one. A witness closes that gap for
// everyone who trusts it: it cosigns a checkpoint only after a consistency
// proof shows the tree extends the last one it cosigned for that origin, so
// no two inconsistent trees of one origin ever carry its cosignature. The
// cosignature is cosignature/v1 (c2sp.org/tlog-cosignature, Ed25519 and a
// timestamp), a note signature any note.Open accepts given NewVerifier.
//
// The witness keeps, per origin, the checkpoint it last cosigned, with the
// log's signature and its own cosignature, in a state directory; both are
// checked when the state is read, so a file that was edited, truncated or
// swapped for a checkpoint the witness never cosigned is refused, never
// taken as empty. What a file cannot show is that it was replaced by an
// older state of this same witness: the directory must be kept as safe as
// the key.
package witness

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// maxBody caps a request: 63 proof lines, a checkpoint with its extension
// lines and a few signatures fit many times over.
const maxBody = 64 << 10

// emptyRoot is RFC 6962's hash of the empty tree, the one root a
// checkpoint of size 0 may have.
var emptyRoot = tlog.Hash(sha256.Sum256(nil))

// maxProof is the spec's cap on consistency proof lines.
const maxProof = 63

// Witness cosigns checkpoints of the logs it was given. It is an
// http.Handler serving POST /add-checkpoint; AddCheckpoint is the same check
// without HTTP.
type Witness struct {
	signer *signer
	logs   map[string]note.Verifier // by key name
	dir    string
	mux    *http.ServeMux
	mu     sync.Mutex              // guards origin
	origin map[string]*originState // each entry locks itself
}

// originState is one origin's latest cosigned tree; its mutex serializes
// the check and the write of that origin, as the spec requires, while other
// origins proceed.
type originState struct {
	mu   sync.Mutex
	tree tlog.Tree // size 0: nothing cosigned yet
}

// New returns the witness whose signer key is skey (GenerateKey's), which
// witnesses the logs whose note verifier keys are logs, keeping its state
// in dir. A log key covers the origin that is its name, as tlog-checkpoint
// recommends, and every origin under it (NAME/...): a log that is many
// trees, as a promptloom transcript is one per session, signs them all
// with one key. Every state file in dir is read and checked here, so a
// corrupted one stops the witness before it answers anyone.
func New(skey string, logs []string, dir string) (*Witness, error) {
	s, err := newSigner(skey, time.Now)
	if err != nil {
		return nil, err
	}
	w := &Witness{signer: s, logs: map[string]note.Verifier{}, dir: dir, origin: map[string]*originState{}}
	for _, k := range logs {
		v, err := note.NewVerifier(k)
		if err != nil {
			return nil, fmt.Errorf("log key %q: %w", keyName(k), err)
		}
		if _, dup := w.logs[v.Name()]; dup {
			return nil, fmt.Errorf("log key %q: a second key named %q (one key a name)", keyName(k), v.Name())
		}
		w.logs[v.Name()] = v
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.checkpoint"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		origin, _, _ := strings.Cut(string(data), "\n")
		if w.path(origin) != f {
			return nil, &StateError{Path: f, Reason: fmt.Sprintf("holds origin %q, whose state is another file", origin)}
		}
		if _, ok := w.logFor(origin); !ok {
			return nil, &StateError{Path: f, Reason: fmt.Sprintf("holds origin %q, which no log key given covers (remove the file to retire the log)", origin)}
		}
		st, err := w.load(origin)
		if err != nil {
			return nil, err
		}
		w.origin[origin] = st
	}
	w.mux = http.NewServeMux()
	w.mux.HandleFunc("POST /add-checkpoint", w.serveAdd)
	return w, nil
}

func keyName(k string) string {
	name, _, _ := strings.Cut(strings.TrimPrefix(k, "PRIVATE+KEY+"), "+")
	return name
}

// Error is a refused checkpoint. Status is the HTTP status tlog-witness
// gives the refusal; for http.StatusConflict on an old size, Size is the
// size the witness last cosigned for Origin.
type Error struct {
	Status int
	Origin string
	Size   int64
	Reason string
}

func (e *Error) Error() string {
	if e.Origin == "" {
		return fmt.Sprintf("witness: %s (%d)", e.Reason, e.Status)
	}
	return fmt.Sprintf("witness: origin %q: %s (%d)", e.Origin, e.Reason, e.Status)
}

func refuse(status int, origin, format string, args ...any) *Error {
	return &Error{Status: status, Origin: origin, Reason: fmt.Sprintf(format, args...)}
}

// StateError is a state file that does not hold a checkpoint this witness
// cosigned for its origin.
type StateError struct {
	Path   string
	Reason string
}

func (e *StateError) Error() string {
	return fmt.Sprintf("witness state %s: %s (refused: repair or remove it knowingly; it is never reset)", e.Path, e.Reason)
}

// AddCheckpoint checks checkpoint, a signed tlog-checkpoint note, against
// the tree of size old that proof starts from, and returns the witness's
// cosignature line once the new tree is recorded. A refusal is an *Error.
func (w *Witness) AddCheckpoint(old int64, proof tlog.TreeProof, checkpoint []byte) ([]byte, error) {
	origin, _, _ := bytes.Cut(checkpoint, []byte("\n"))
	v, ok := w.logFor(string(origin))
	if !ok {
		return nil, refuse(http.StatusNotFound, string(origin), "unknown origin")
	}
	n, err := note.Open(checkpoint, note.VerifierList(v))
	if err != nil {
		var unverified *note.UnverifiedNoteError
		var invalid *note.InvalidSignatureError
		if errors.As(err, &unverified) || errors.As(err, &invalid) {
			return nil, refuse(http.StatusForbidden, string(origin), "no signature by the log's key verifies")
		}
		return nil, refuse(http.StatusBadRequest, string(origin), "malformed checkpoint note: %v", err)
	}
	o := string(origin)
	tree, err := parseCheckpoint(n.Text, o)
	if err != nil {
		return nil, err
	}
	if tree.N == 0 && tree.Hash != emptyRoot {
		return nil, refuse(http.StatusBadRequest, o, "a tree of size 0 has the root SHA-256 of nothing, got %s", tree.Hash)
	}
	if old < 0 || old > tree.N {
		return nil, refuse(http.StatusBadRequest, o, "old size %d is above the checkpoint's size %d", old, tree.N)
	}
	if old == 0 && len(proof) != 0 {
		return nil, refuse(http.StatusBadRequest, o, "a proof from size 0 is empty, got %d hashes", len(proof))
	}
	st, err := w.state(o)
	if err != nil {
		return nil, err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if old != st.tree.N {
		e := refuse(http.StatusConflict, o, "old size %d is not the size %d last cosigned", old, st.tree.N)
		e.Size = st.tree.N
		return nil, e
	}
	switch {
	case old == tree.N && old > 0 && tree.Hash != st.tree.Hash:
		e := refuse(http.StatusConflict, o, "a fork: size %d was cosigned with another root hash", old)
		e.Size = st.tree.N
		return nil, e
	case old == tree.N && len(proof) != 0:
		return nil, refuse(http.StatusUnprocessableEntity, o, "a proof between equal sizes is empty, got %d hashes", len(proof))
	case old > 0 && old < tree.N:
		if err := tlog.CheckTree(proof, tree.N, tree.Hash, old, st.tree.Hash); err != nil {
			return nil, refuse(http.StatusUnprocessableEntity, o, "the consistency proof from size %d to %d does not verify", old, tree.N)
		}
	}
	sig, err := w.signer.Sign([]byte(n.Text))
	if err != nil {
		return nil, err
	}
	line := w.signer.line(sig)
	if err := w.store(o, n, line); err != nil {
		return nil, err
	}
	st.tree = tree
	return []byte(line), nil
}

// parseCheckpoint reads a tlog-checkpoint body: origin, decimal size, a
// base64 hash of 32 bytes, then optional non-empty extension lines.
func parseCheckpoint(text, origin string) (tlog.Tree, error) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) < 3 {
		return tlog.Tree{}, refuse(http.StatusBadRequest, origin, "a checkpoint has an origin, a size and a root hash line; got %d line(s)", len(lines))
	}
	n, err := parseSize(lines[1])
	if err != nil {
		return tlog.Tree{}, refuse(http.StatusBadRequest, origin, "checkpoint size line %q: %v", lines[1], err)
	}
	h, err := parseHash(lines[2])
	if err != nil {
		return tlog.Tree{}, refuse(http.StatusBadRequest, origin, "checkpoint root hash line: %v", err)
	}
	for i, l := range lines[3:] {
		if l == "" {
			return tlog.Tree{}, refuse(http.StatusBadRequest, origin, "checkpoint extension line %d is empty", i+1)
		}
	}
	return tlog.Tree{N: n, Hash: h}, nil
}

// parseSize reads an ASCII decimal with no leading zeroes.
func parseSize(s string) (int64, error) {
	if s == "" || (s[0] == '0' && len(s) > 1) || strings.TrimLeft(s, "0123456789") != "" {
		return 0, errors.New("not a decimal size without leading zeroes")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, errors.New("not a size below 2^63")
	}
	return n, nil
}

func parseHash(s string) (tlog.Hash, error) {
	var h tlog.Hash
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil || len(b) != len(h) {
		return h, fmt.Errorf("%q is not base64 of %d bytes", s, len(h))
	}
	copy(h[:], b)
	return h, nil
}

// ServeHTTP serves POST /add-checkpoint.
func (w *Witness) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w.mux.ServeHTTP(rw, r)
}

func (w *Witness) serveAdd(rw http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(rw, fmt.Sprintf("request body above %d bytes", maxBody), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(rw, "reading the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	old, proof, checkpoint, err := parseRequest(body)
	if err == nil {
		var line []byte
		if line, err = w.AddCheckpoint(old, proof, checkpoint); err == nil {
			rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
			rw.Write(line)
			return
		}
	}
	var e *Error
	if !errors.As(err, &e) {
		http.Error(rw, "witness: "+err.Error(), http.StatusInternalServerError)
		return
	}
	if e.Status == http.StatusConflict {
		rw.Header().Set("Content-Type", "text/x.tlog.size")
		rw.WriteHeader(http.StatusConflict)
		fmt.Fprintf(rw, "%d\n", e.Size)
		return
	}
	http.Error(rw, e.Error(), e.Status)
}

// parseRequest splits an add-checkpoint body: "old N", up to 63 base64
// hashes, an empty line, the checkpoint note.
func parseRequest(body []byte) (int64, tlog.TreeProof, []byte, error) {
	rd := bufio.NewReader(bytes.NewReader(body))
	next := func() (string, bool) {
		l, err := rd.ReadString('\n')
		return strings.TrimSuffix(l, "\n"), err == nil
	}
	first, ok := next()
	size, found := strings.CutPrefix(first, "old ")
	if !ok || !found {
		return 0, nil, nil, refuse(http.StatusBadRequest, "", "the body starts with an \"old N\" line")
	}
	old, err := parseSize(size)
	if err != nil {
		return 0, nil, nil, refuse(http.StatusBadRequest, "", "old size %q: %v", size, err)
	}
	var proof tlog.TreeProof
	for {
		l, ok := next()
		if !ok {
			return 0, nil, nil, refuse(http.StatusBadRequest, "", "no empty line ends the proof")
		}
		if l == "" {
			break
		}
		if len(proof) == maxProof {
			return 0, nil, nil, refuse(http.StatusBadRequest, "", "more than %d consistency proof lines", maxProof)
		}
		h, err := parseHash(l)
		if err != nil {
			return 0, nil, nil, refuse(http.StatusBadRequest, "", "consistency proof line %d: %v", len(proof)+1, err)
		}
		proof = append(proof, h)
	}
	rest, _ := io.ReadAll(rd)
	return old, proof, rest, nil
}

// logFor is the key of the log origin belongs to: the key named origin,
// or the one whose name is the longest that origin is under.
func (w *Witness) logFor(origin string) (note.Verifier, bool) {
	for o := origin; ; {
		if v, ok := w.logs[o]; ok {
			return v, true
		}
		i := strings.LastIndexByte(o, '/')
		if i < 0 {
			return nil, false
		}
		o = o[:i]
	}
}

// state is origin's state, read when the witness started or new.
func (w *Witness) state(origin string) (*originState, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	st, ok := w.origin[origin]
	if !ok {
		var err error
		if st, err = w.load(origin); err != nil {
			return nil, err
		}
		w.origin[origin] = st
	}
	return st, nil
}

// path is the state file of origin: a hash, since an origin is a URL-like
// name with slashes.
func (w *Witness) path(origin string) string {
	sum := sha256.Sum256([]byte(origin))
	return filepath.Join(w.dir, hex.EncodeToString(sum[:16])+".checkpoint")
}

// store writes the cosigned checkpoint to a temporary file, syncs it and
// renames it over the old state, so a crash leaves the old state or the new
// one, never half. Only the log's verified signatures are kept, and the
// witness's line: a signature line the request carried under the witness's
// own name would otherwise make the state fail its check at the next start.
func (w *Witness) store(origin string, n *note.Note, line string) error {
	data := []byte(n.Text + "\n")
	for _, sig := range n.Sigs {
		data = append(data, "— "+sig.Name+" "+sig.Base64+"\n"...)
	}
	data = append(data, line...)
	f, err := os.CreateTemp(w.dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), w.path(origin))
	}
	if err != nil {
		return fmt.Errorf("witness state of %q: %w", origin, err)
	}
	if d, err := os.Open(w.dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// load reads origin's state: none yet is size 0; anything else must be a
// checkpoint for origin that both the log and this witness signed.
func (w *Witness) load(origin string) (*originState, error) {
	p := w.path(origin)
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return &originState{}, nil
	}
	if err != nil {
		return nil, err
	}
	logKey, _ := w.logFor(origin)
	for _, v := range []note.Verifier{logKey, w.signer.verifier()} {
		if _, err := note.Open(data, note.VerifierList(v)); err != nil {
			return nil, &StateError{Path: p, Reason: fmt.Sprintf("not a checkpoint signed by %s: %v", v.Name(), err)}
		}
	}
	n, _ := note.Open(data, note.VerifierList(logKey))
	if o, _, _ := strings.Cut(n.Text, "\n"); o != origin {
		return nil, &StateError{Path: p, Reason: fmt.Sprintf("holds origin %q, want %q", o, origin)}
	}
	tree, err := parseCheckpoint(n.Text, origin)
	if err != nil {
		return nil, &StateError{Path: p, Reason: err.Error()}
	}
	return &originState{tree: tree}, nil
}
