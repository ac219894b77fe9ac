package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/manifest"
)

func init() {
	register("verify", "verify MANIFEST SYSTEM_FILE | verify MANIFEST --payload REQUEST.json [--provider P] | verify --transcript FILE", runVerify)
}

// runVerify checks a manifest against the exact bytes of a served prompt,
// or every call of a transcript: exit 0 when everything holds, 1 naming
// what does not.
func runVerify(e *env, args []string) int {
	fs := newFlags(e, "verify")
	transcript := fs.String("transcript", "", "verify every call of a JSONL transcript")
	pf := addPayloadFlags(fs)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return e.flagError("verify", err)
	}
	if *transcript != "" {
		if len(pos) > 0 {
			return e.fail("verify --transcript: takes no other argument, got %q", pos[0])
		}
		return e.verifyTranscript(*transcript)
	}
	if *pf.payload != "" {
		return e.verifyPayload(pos, pf)
	}
	if len(pos) != 2 {
		return e.fail("verify: takes MANIFEST and SYSTEM_FILE, got %d argument(s)", len(pos))
	}
	raw, err := e.read(pos[0])
	if err != nil {
		return e.fail("verify: %v", err)
	}
	m, err := manifest.Read(raw)
	if err != nil {
		return e.fail("verify: %s: %v", pos[0], err)
	}
	system, err := e.read(pos[1])
	if err != nil {
		return e.fail("verify: %v", err)
	}
	if err := manifest.Validate(m, string(system)); err != nil {
		var rule manifest.Rule
		name := "unknown"
		if errors.As(err, &rule) {
			name = rule.Rule()
		}
		fmt.Fprintf(e.stdout, "FAIL %s: %v\n", name, err)
		return ExitFail
	}
	fmt.Fprintf(e.stdout, "ok: manifest %s holds for %d bytes (%d segments, %d included)\n",
		manifest.HashBytes(raw), len(system), len(m.Segments), m.IncludedCount())
	return ExitOK
}

func (e *env) verifyTranscript(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return e.fail("verify: %v", err)
	}
	defer f.Close()
	rep, err := journal.Verify(f)
	if err != nil {
		return e.fail("verify: %v", err)
	}
	if err := rep.WriteText(e.stdout); err != nil {
		return e.fail("verify: %v", err)
	}
	if !rep.OK() {
		return ExitFail
	}
	return ExitOK
}
