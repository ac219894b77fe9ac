package cli

import (
	"os"

	"github.com/promptloom/promptloom/journal"
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
	transcript := fs.String("transcript", "", "the JSONL transcript to report")
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
	f, err := os.Open(*transcript)
	if err != nil {
		return e.fail("report: %v", err)
	}
	defer f.Close()
	rep, verr := journal.Verify(f)
	if _, err := f.Seek(0, 0); err != nil {
		return e.fail("report: %v", err)
	}
	run, err := journal.NewRun(f, *transcript, rep)
	if err != nil && verr == nil {
		verr = err
	}
	if *format == "html" {
		err = run.WriteHTML(e.stdout)
	} else {
		err = run.WriteText(e.stdout)
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
