package cli

import (
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/journal/report"
)

func init() {
	register("report", "report --transcript FILE|- [--key VERIFIER] [--format text|html|json]", runReport)
}

// runReport renders a transcript as a run a person can read: each call's
// fragments and verdict, and what changed between calls of one role. The
// exit code is verify's: 0 when the run verifies, 1 when it does not (the
// page is written either way, marking what failed).
func runReport(e *env, args []string) int {
	fs := newFlags("report")
	transcript := fs.String("transcript", "", "the JSONL transcript to report, or a postgres:// URL of one session (?session=NAME)")
	format := fs.String("format", "text", "text, html or json (the verifier's report, as verify --format json writes it)")
	key := fs.String("key", "", "hold the transcript to this verifier key (NAME.pub), as verify --key does, and show what its signature covers")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return e.flagError(fs, "report", err)
	}
	if err := oneOf("format", *format, "text", "html", "json"); err != nil {
		return e.fail("report: %v", err)
	}
	if *transcript == "" || len(pos) > 0 {
		return e.fail("report: takes --transcript FILE and nothing else")
	}
	// One pass: the page shows what Verify read and judged, never a
	// second reading of a transcript that may have changed meanwhile.
	o := &journal.Options{MaxLineBytes: maxLineBytes}
	if *key != "" {
		if o.Verifier, err = e.verifier(*key); err != nil {
			return e.fail("report: %v", err)
		}
	}
	name, rep, verr, err := e.verifyOne(*transcript, o)
	if err != nil {
		return e.fail("report: %v", err)
	}
	switch *format {
	case "json":
		v := newVerdict(name, rep, verr)
		if err := writeJSON(e, v); err != nil {
			return e.fail("report: %v", err)
		}
		if !v.OK {
			return ExitFail
		}
		return ExitOK
	case "html":
		err = report.WriteHTML(e.stdout, name, rep)
	default:
		err = report.WriteText(e.stdout, rep)
	}
	if err != nil {
		return e.fail("report: %v", err)
	}
	// After a page, a FAIL line goes to stderr: the page stays HTML.
	w := e.stdout
	if *format == "html" {
		w = e.stderr
	}
	return verdict(w, rep, verr)
}
