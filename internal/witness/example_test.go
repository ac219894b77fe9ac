package witness_test

import (
	"crypto/rand"
	"fmt"
	"os"

	"github.com/promptloom/promptloom/internal/witness"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// A witness cosigns a log's first checkpoint; note.Open then checks the
// checkpoint with both the log's key and the witness's.
func Example() {
	logKey, logPub, _ := note.GenerateKey(rand.Reader, "example.com/log")
	witKey, witPub, _ := witness.GenerateKey(rand.Reader, "witness.example/w1")
	dir, err := os.MkdirTemp("", "witness-state-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	w, err := witness.New(witKey, []string{logPub}, dir)
	if err != nil {
		fmt.Println(err)
		return
	}

	leaf := tlog.RecordHash([]byte("call 1"))
	logSigner, _ := note.NewSigner(logKey)
	checkpoint, _ := note.Sign(&note.Note{Text: fmt.Sprintf("example.com/log\n1\n%s\n", leaf)}, logSigner)

	line, err := w.AddCheckpoint(0, nil, checkpoint)
	if err != nil {
		fmt.Println(err)
		return
	}
	logV, _ := note.NewVerifier(logPub)
	witV, _ := witness.NewVerifier(witPub)
	n, err := note.Open(append(checkpoint, line...), note.VerifierList(logV, witV))
	fmt.Println(err, len(n.Sigs), n.Sigs[1].Name)

	// The same size with another root is a fork: refused.
	forkText := fmt.Sprintf("example.com/log\n1\n%s\n", tlog.RecordHash([]byte("other call")))
	fork, _ := note.Sign(&note.Note{Text: forkText}, logSigner)
	_, err = w.AddCheckpoint(1, nil, fork)
	fmt.Println(err)
	// Output:
	// <nil> 2 witness.example/w1
	// witness: origin "example.com/log": a fork: size 1 was cosigned with another root hash (409)
}
