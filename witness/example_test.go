package witness_test

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"

	iwitness "github.com/promptloom/promptloom/internal/witness"
	"github.com/promptloom/promptloom/witness"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// A witness (here the one `promptloom witness` runs) cosigns a log's first
// checkpoint; note.Open then checks the checkpoint with both the log's key
// and the witness's, whose verifier NewVerifier makes. A note key is not a
// witness key.
func ExampleNewVerifier() {
	logKey, logPub, _ := note.GenerateKey(rand.Reader, "example.com/log")
	witKey, witPub, _ := iwitness.GenerateKey(rand.Reader, "witness.example/w1")
	dir, err := os.MkdirTemp("", "witness-state-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	w, err := iwitness.New(witKey, []string{logPub}, dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	logSigner, _ := note.NewSigner(logKey)
	checkpoint, _ := note.Sign(&note.Note{Text: fmt.Sprintf("example.com/log\n1\n%s\n", tlog.RecordHash([]byte("call 1")))}, logSigner)
	line, err := w.AddCheckpoint(0, nil, checkpoint)
	if err != nil {
		fmt.Println(err)
		return
	}

	logV, _ := note.NewVerifier(logPub)
	witV, err := witness.NewVerifier(witPub)
	if err != nil {
		fmt.Println(err)
		return
	}
	n, err := note.Open(append(checkpoint, line...), note.VerifierList(logV, witV))
	fmt.Println(err, len(n.Sigs), n.Sigs[1].Name)

	_, err = witness.NewVerifier(logPub)
	fmt.Println(errors.Is(err, witness.ErrBadKey))
	// Output:
	// <nil> 2 witness.example/w1
	// true
}
