package cli

import (
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/journal/report"
)

func init() {
	register("report", "report --transcript FILE [--format text|html]", runReport)
}

// runReport renders a transcript as a run a person can read: each call's
// fragments and verdict, and what changed between calls of one role. The
// exit code is verify's: 0 when the run verifies, 1 when it does not (the
// page is written either way, marking what failed).
func runReport(e *env, args []string) int {
	fs := newFlags("report")
	transcript := fs.String("transcript", "", "the JSONL transcript to report, or a postgres:// URL of one session (?session=NAME)")
	format := fs.String("format", "text", "text or html")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return e.flagError(fs, "report", err)
	}
	if err := oneOf("format", *format, "text", "html"); err != nil {
		return e.fail("report: %v", err)
	}
	if *transcript == "" || len(pos) > 0 {
		return e.fail("report: takes --transcript FILE and nothing else")
	}
	// One pass: the page shows what Verify read and judged, never a
	// second reading of a transcript that may have changed meanwhile.
	name, rep, verr, err := verifyOne(*transcript, &journal.Options{MaxLineBytes: maxLineBytes})
	if err != nil {
		return e.fail("report: %v", err)
	}
	if *format == "html" {
		err = report.WriteHTML(e.stdout, name, rep)
	} else {
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
