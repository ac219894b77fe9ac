package cli

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/promptloom/promptloom/journal/tiles"
	"github.com/promptloom/promptloom/transcript"
)

func init() {
	register("prove", "prove --transcript FILE (--call NAME[@LINE] | --from CHECKPOINT | --checkpoint SESSION) [--key VERIFIER] [--out FILE]", runProve)
}

// runProve writes, for a signed transcript, one of three things an
// auditor keeps or checks without the rest of it: the inclusion proof of
// one call (--call; verify --proof checks it), the proof that the run
// extends a checkpoint the auditor kept (--from; verify --consistency
// checks it), or the latest checkpoint of a session, to keep (--checkpoint).
// The transcript must verify (with --key, against that key) as far as it
// is written: a run still being written proves the calls its checkpoints
// cover already, and is said to be open.
func runProve(e *env, args []string) int {
	fs := newFlags("prove")
	trArg := fs.String("transcript", "", "the signed transcript: a file, or a postgres:// URL of one session (?session=NAME)")
	call := fs.String("call", "", "the call to prove: NAME, or NAME@LINE (the line of its request)")
	from := fs.String("from", "", "prove that the run extends this checkpoint (a note file, as prove --checkpoint writes it)")
	session := fs.String("checkpoint", "", "write the latest signed checkpoint of this session")
	key := fs.String("key", "", "verify the transcript's checkpoints against this verifier key (NAME.pub) first")
	out := fs.String("out", "", "write to FILE (default stdout)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return e.flagError(fs, "prove", err)
	}
	given := 0
	for _, s := range []string{*call, *from, *session} {
		if s != "" {
			given++
		}
	}
	if *trArg == "" || given != 1 || len(pos) > 0 {
		return e.fail("prove: takes --transcript FILE and one of --call NAME, --from CHECKPOINT, --checkpoint SESSION")
	}
	o := &transcript.Options{MaxLineBytes: maxLineBytes}
	if *key != "" {
		if o.Verifier, err = e.verifier(*key); err != nil {
			return e.fail("prove: %v", err)
		}
	}
	var cp []byte
	if *from != "" {
		if cp, err = e.readLimited(*from, 64<<10); err != nil {
			return e.fail("prove: %v", err)
		}
	}
	var result []byte
	var what string
	ref := parseCallRef(*call)
	// A proof is made of the one call of a name (transcript.Prove): NAME@LINE
	// is proved by its name, and the line then held to the call's. A call
	// named "x@5" itself, which the first reading shows, is read again.
	literal := false
	prove := func(r io.Reader) (rep *transcript.Report, err error) {
		switch {
		case *call != "" && literal:
			result, rep, err = transcript.Prove(r, ref.given, o)
		case *call != "":
			result, rep, err = transcript.Prove(r, ref.name, o)
			what = "the proof of call " + *call
			if err != nil || ref.line == 0 {
				break
			}
			c, ferr := ref.find(rep.Calls)
			switch {
			case ferr != nil:
				result, err = nil, ferr
			case c.Call == ref.given:
				literal, result = true, nil
			case result == nil && namedCount(rep.Calls, ref.name) > 1:
				// Why the line does not help: transcript.Prove chooses by
				// name alone.
				err = fmt.Errorf("%d calls are named %q, and a proof is made only of a call whose name no other call has", namedCount(rep.Calls, ref.name), ref.name)
			}
		case *from != "":
			result, rep, err = transcript.ProveConsistency(r, cp, o)
			what = "the proof that the run extends " + *from
		default:
			var logs map[string]tiles.Log
			logs, rep, err = transcript.Logs(r, o)
			what = "the latest checkpoint of session " + *session
			if l, ok := logs[*session]; ok {
				result = l.Checkpoint
			} else if logs != nil {
				ids := make([]string, 0, len(logs))
				for id := range logs {
					ids = append(ids, fmt.Sprintf("%q", id))
				}
				slices.Sort(ids)
				err = fmt.Errorf("no signed checkpoint of session %q; signed sessions: %s", *session, strings.Join(ids, ", "))
			}
		}
		return rep, err
	}
	_, rep, err, oerr := e.readOne(*trArg, prove)
	if oerr == nil && literal {
		_, rep, err, oerr = e.readOne(*trArg, prove)
	}
	if oerr != nil {
		return e.fail("prove: %v", oerr)
	}
	if err != nil || result == nil {
		// Why there is nothing to write: the transcript's report.
		rep.WriteText(e.stderr)
		verdict(e.stderr, rep, err)
		return ExitFail
	}
	if *out == "" {
		_, err = e.stdout.Write(result)
	} else {
		err = os.WriteFile(*out, result, 0o644)
	}
	if err != nil {
		return e.fail("prove: %v", err)
	}
	if *out != "" {
		fmt.Fprintf(e.stdout, "wrote %s to %s\n", what, *out)
	}
	e.noteOpen(*trArg, rep)
	return ExitOK
}

// namedCount counts the calls named name.
func namedCount(calls []transcript.CallReport, name string) int {
	n := 0
	for _, c := range calls {
		if c.Call == name {
			n++
		}
	}
	return n
}
