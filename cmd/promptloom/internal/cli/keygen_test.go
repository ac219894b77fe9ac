package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
)

// keygen writes the signer's key readable by its owner alone and the
// verifier's for anyone, each in note's text format, and a key made from
// one verifies what the other signs.
func TestKeygen(t *testing.T) {
	name := filepath.Join(t.TempDir(), "alice")
	var out, errb bytes.Buffer
	if code := Main([]string{"keygen", name}, nil, &out, &errb); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if st, err := os.Stat(name + ".key"); err != nil || st.Mode().Perm()&0o077 != 0 {
		t.Errorf("the signer's key: %v %v, want mode 0600", st.Mode(), err)
	}
	if _, err := os.Stat(name + ".pub"); err != nil {
		t.Error(err)
	}
	skey, _ := os.ReadFile(name + ".key")
	vkey, _ := os.ReadFile(name + ".pub")
	s, err := note.NewSigner(strings.TrimSpace(string(skey)))
	if err != nil {
		t.Fatal(err)
	}
	v, err := note.NewVerifier(strings.TrimSpace(string(vkey)))
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := note.Sign(&note.Note{Text: "hello\n"}, s)
	if _, err := note.Open(msg, note.VerifierList(v)); err != nil || v.Name() != "alice" {
		t.Errorf("open: %v (name %s)", err, v.Name())
	}
}

// A signer key others can read is used, with a warning on stderr (as ssh
// warns of an unprotected private key); keygen's own 0600 key gets none.
func TestSignerKeyReadableByOthersWarns(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "alice")
	if code := Main([]string{"keygen", name}, nil, new(bytes.Buffer), new(bytes.Buffer)); code != ExitOK {
		t.Fatal("keygen failed")
	}
	e := &env{stdout: new(bytes.Buffer), stderr: new(bytes.Buffer)}
	if _, err := e.signer(name + ".key"); err != nil {
		t.Fatal(err)
	}
	if got := e.stderr.(*bytes.Buffer).String(); got != "" {
		t.Errorf("a 0600 key warned: %q", got)
	}
	if err := os.Chmod(name+".key", 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := e.signer(name + ".key"); err != nil {
		t.Fatal(err)
	}
	if got := e.stderr.(*bytes.Buffer).String(); !strings.Contains(got, "the signer key can be read by others (mode 0644)") || !strings.Contains(got, "chmod 600") {
		t.Errorf("a 0644 key: stderr %q", got)
	}
}
