package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/promptloom/promptloom/journal"
)

func init() {
	register("prove", "prove --transcript FILE --call NAME [--key VERIFIER] [--out PROOF]", runProve)
}

// runProve writes the inclusion proof of one call of a signed transcript
// (its request and outcome lines, the path to its session's root, the
// session's last checkpoint), which verify --proof checks without the
// rest of the transcript. The transcript must verify (with --key, against
// that key) and its session must have a checkpoint after the call.
func runProve(e *env, args []string) int {
	fs := newFlags("prove")
	transcript := fs.String("transcript", "", "the signed transcript: a file, or a postgres:// URL of one session (?session=NAME)")
	call := fs.String("call", "", "the call to prove, by its name")
	key := fs.String("key", "", "verify the transcript's checkpoints against this verifier key (NAME.pub) first")
	out := fs.String("out", "", "write the proof to PROOF (default stdout)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return e.flagError(fs, "prove", err)
	}
	if *transcript == "" || *call == "" || len(pos) > 0 {
		return e.fail("prove: takes --transcript FILE and --call NAME")
	}
	o := &journal.Options{MaxLineBytes: maxLineBytes}
	if *key != "" {
		if o.Verifier, err = e.verifier(*key); err != nil {
			return e.fail("prove: %v", err)
		}
	}
	var proof []byte
	_, rep, err, oerr := e.readOne(*transcript, func(r io.Reader) (rep *journal.Report, err error) {
		proof, rep, err = journal.Prove(r, *call, o)
		return rep, err
	})
	if oerr != nil {
		return e.fail("prove: %v", oerr)
	}
	if err != nil || !rep.OK() || proof == nil {
		// Why there is no proof: the transcript's report.
		rep.WriteText(e.stderr)
		verdict(e.stderr, rep, err)
		return ExitFail
	}
	if *out == "" {
		_, err = e.stdout.Write(proof)
	} else {
		err = os.WriteFile(*out, proof, 0o644)
	}
	if err != nil {
		return e.fail("prove: %v", err)
	}
	if *out != "" {
		fmt.Fprintf(e.stdout, "wrote the proof of call %s to %s\n", *call, *out)
	}
	return ExitOK
}
