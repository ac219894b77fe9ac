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
