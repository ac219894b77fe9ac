package journal

import (
	"fmt"
	"io"
	"strings"

	"github.com/promptloom/promptloom/internal/textsafe"
)

// Status is the verdict on one call.
type Status string

// The verdicts.
const (
	// Verified: every receipt resolves to retained bytes that re-derive
	// it, and (in a promptloom transcript) the call's outcome is recorded
	// and hashes to its receipt.
	Verified Status = "ok"
	// Incomplete: the request verifies, but no response or error line
	// answers it.
	Incomplete Status = "incomplete"
	// Failed: something does not verify; Problem says what.
	Failed Status = "failed"
)

// Formats of a transcript, as Verify tells them apart by the first line.
const (
	FormatPromptloom = "promptloom" // lines with "kind" (and "prev")
	FormatHarn       = "harn"       // lines with "type"
)

// CallReport is the verdict on one request of a transcript.
type CallReport struct {
	// Line is the request's line number (from 1).
	Line   int    `json:"line"`
	Seq    int64  `json:"seq"`
	Call   string `json:"call"`
	Status Status `json:"status"`
	OK     bool   `json:"ok"`
	// Problem says what failed, or what is missing, with the line.
	Problem string `json:"problem,omitempty"`
	// SystemLine, ManifestLine and OutcomeLine are the lines the verifier
	// took the call's system prompt, manifest and response (or error) from
	// (0: none resolved). A report of the run shows those lines and no
	// others, so a second, unverified line cannot stand in for them.
	SystemLine   int `json:"system_line,omitempty"`
	ManifestLine int `json:"manifest_line,omitempty"`
	OutcomeLine  int `json:"outcome_line,omitempty"`
}

// Report is the verdict on a whole transcript.
type Report struct {
	// Format is FormatPromptloom or FormatHarn ("" when unknown).
	Format string       `json:"format"`
	Calls  []CallReport `json:"calls"`
	// Problems are lines that break the transcript itself: not JSON, a
	// duplicate key, a broken chain, an unknown kind, a session unclosed;
	// and a transcript with no call to check.
	Problems []string `json:"problems,omitempty"`
	// Lines is the number of lines read; Head the chain hash of the last
	// (promptloom transcripts): keep it to detect lines cut from the end.
	Lines int    `json:"lines"`
	Head  string `json:"head,omitempty"`
}

// Counts returns how many calls verified, are incomplete, and failed.
func (r *Report) Counts() (verified, incomplete, failed int) {
	for _, c := range r.Calls {
		switch c.Status {
		case Verified:
			verified++
		case Incomplete:
			incomplete++
		default:
			failed++
		}
	}
	return
}

// OK reports whether the transcript proves its run: at least one call,
// every call verified, and no problem.
func (r *Report) OK() bool {
	v, i, f := r.Counts()
	return len(r.Problems) == 0 && v > 0 && i == 0 && f == 0
}

func (r *Report) problem(format string, args ...any) {
	r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
}

// WriteText writes one line per call and per problem, and a summary.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "FAIL %s\n", textsafe.Line(fmt.Sprint(p)))
	}
	for _, c := range r.Calls {
		switch c.Status {
		case Verified:
			fmt.Fprintf(&b, "ok   line %d: call %s (seq %d)\n", c.Line, textsafe.Line(c.Call), c.Seq)
		case Incomplete:
			fmt.Fprintf(&b, "INCOMPLETE line %d: call %s (seq %d): %s\n", c.Line, textsafe.Line(c.Call), c.Seq, textsafe.Line(fmt.Sprint(c.Problem)))
		default:
			fmt.Fprintf(&b, "FAIL line %d: call %s (seq %d): %s\n", c.Line, textsafe.Line(c.Call), c.Seq, textsafe.Line(fmt.Sprint(c.Problem)))
		}
	}
	v, i, f := r.Counts()
	fmt.Fprintf(&b, "%d call(s) verified, %d incomplete, %d failed", v, i, f)
	if r.Format != "" {
		fmt.Fprintf(&b, " (%s transcript, %d lines)", r.Format, r.Lines)
	}
	b.WriteByte('\n')
	if r.Head != "" {
		fmt.Fprintf(&b, "head %s\n", r.Head)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
