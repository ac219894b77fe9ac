package transcript

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/promptloom/promptloom/internal/chain"
	"github.com/promptloom/promptloom/internal/textsafe"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/payload"
)

// The verdicts on a call (CallReport.Status).
const (
	// verified: every receipt resolves to retained bytes that re-derive
	// it, and (in a promptloom transcript) the call's outcome is recorded
	// and hashes to its receipt.
	verified = "ok"
	// incomplete: the request verifies, but no response or error line
	// answers it.
	incomplete = "incomplete"
	// failed: something does not verify; Problem says what.
	failed = "failed"
)

// The formats of a transcript, as Verify tells them apart by the first
// line.
const (
	formatPromptloom = "promptloom" // lines with "kind" (and "prev")
	formatHarn       = "harn"       // lines with "type"
)

// CallReport is the verdict on one request of a transcript, with what the
// request was served and what answered it, as the verifier resolved them:
// enough for package transcript/report to show the call to a person (and to
// set it against its role's previous call) without reading the transcript
// again.
type CallReport struct {
	// Line is the request's line number (from 1).
	Line int    `json:"line"`
	Seq  int64  `json:"seq"`
	Call string `json:"call"`
	// Status is the verdict: "ok" (every receipt resolves to retained
	// bytes that re-derive it, and in a promptloom transcript the outcome
	// is recorded and hashes to its receipt), "incomplete" (no response or
	// error answers the request) or "failed" (Problem says what).
	Status string `json:"status"`
	// Problem says what failed, or what is missing, with the line; nil
	// when the call verified.
	Problem *manifest.RuleError `json:"problem,omitempty"`
	// SystemLine, ManifestLine and OutcomeLine are the lines the verifier
	// took the call's system prompt, manifest and response (or error) from
	// (0: none resolved); a second, unverified line claiming the same hash
	// cannot stand in for them.
	SystemLine   int `json:"system_line,omitempty"`
	ManifestLine int `json:"manifest_line,omitempty"`
	OutcomeLine  int `json:"outcome_line,omitempty"`

	// Manifest is the manifest at ManifestLine (nil when it did not read);
	// its call role is the call's role. SystemBytes is the length of the
	// system prompt at SystemLine.
	Manifest    *manifest.Manifest `json:"-"`
	SystemBytes int                `json:"system_bytes"`
	// Outcome is the response's text, or "error: " and the error's
	// message; Attempts counts the failed attempts before it (retries).
	Outcome  string `json:"outcome,omitempty"`
	Attempts int    `json:"attempts,omitempty"`
	// ToolCalls are the tools the answer called, as its response recorded
	// them: a turn that only calls a tool has them and no text.
	ToolCalls []payload.ToolCall `json:"tool_calls,omitempty"`
	// Usage is what the provider said the call cost, as its response
	// recorded it (nil when it said nothing, or the call failed): its
	// CacheReadTokens, beside the bytes in common with the role's previous
	// call (transcript/report), shows whether the prefix promptloom kept
	// stable was the prefix the provider's cache served.
	Usage *payload.Usage `json:"usage,omitempty"`
	// Unattributed is a call made without a manifest (its request holds
	// its whole body, redacted, and its digest): nothing accounts for the
	// prompt it was served.
	Unattributed bool `json:"unattributed,omitempty"`
	// System is the system prompt the call was served, as retained at
	// SystemLine ("" when none resolved; redacted, unless the journal kept
	// raw content).
	System string `json:"-"`

	inFlight bool // incomplete, its session still open: its answer may yet come
}

// Report is the verdict on a whole transcript.
type Report struct {
	// Format is "promptloom" or "harn" ("" when unknown), or "proof" for
	// CheckProof's.
	Format string       `json:"format"`
	Calls  []CallReport `json:"calls"`
	// Problems are the rules the transcript itself breaks: a line not
	// JSON, a duplicate key, a broken chain, an unknown kind, a session
	// unclosed; a transcript with no call to check. The first 1,000 are
	// listed, and one more of rule too_many_problems counts the rest.
	Problems []*manifest.RuleError `json:"problems,omitempty"`
	// Lines is the number of lines read; Head the chain hash of the last
	// (promptloom transcripts): keep it to detect lines cut from the end.
	Lines int    `json:"lines"`
	Head  string `json:"head,omitempty"`
	// Checkpoints counts the checkpoints that hold for the chain (signed
	// by Options.Verifier, when Verify has one); a proof's, checked, is 1.
	Checkpoints int `json:"checkpoints,omitempty"`
	// SignedBy and SignedThrough, when Verify was given a key and a
	// checkpoint signed by it held, name the key and the line of the last
	// such checkpoint: the signature covers the chain up to the line
	// before it, and nothing after.
	SignedBy      string `json:"signed_by,omitempty"`
	SignedThrough int    `json:"signed_through,omitempty"`
	// CosignedBy, when Verify was given witness keys (Options.Cosigners)
	// and a quorum of them held, names those whose cosignature is on the
	// last checkpoint of every session.
	CosignedBy []string `json:"cosigned_by,omitempty"`
	// Unattributed counts the calls made without a manifest
	// (CallReport.Unattributed). They verify as lines of the chain, but
	// nothing accounts for their prompt.
	Unattributed int `json:"unattributed,omitempty"`
	// Changed counts the calls whose body the writer changed before
	// sending it, with the body as it came kept beside the body sent
	// (request.received: Request.Received).
	Changed int `json:"changed,omitempty"`
	// Open are the sessions with no journal_close yet, in the order they
	// opened: a run still being written (or cut short). Each is also a
	// problem (session_unclosed), one that Holds accepts and OK does not.
	Open []OpenSession `json:"open,omitempty"`
	// Refused are the requests refused rather than made, in order.
	Refused []Refusal `json:"refused,omitempty"`

	// pending are the problems that say only that the run is not finished
	// (Pending): a session open, what it has yet to sign, a last line not
	// whole yet.
	pending  map[*manifest.RuleError]bool
	unlisted int // problems past maxProblems
	// earlier counts the calls, and refusedEarlier the refusals, read but
	// no longer listed (Options.KeepCalls).
	earlier struct {
		ok, incomplete, failed int
	}
	refusedEarlier int
	maxLine        int // the longest line Verify read: the longest body Requests joins
}

// Counts returns how many calls verified, are incomplete, and failed.
func (r *Report) Counts() (ok, incompleteCalls, failedCalls int) {
	if r == nil {
		return
	}
	ok, incompleteCalls, failedCalls = r.earlier.ok, r.earlier.incomplete, r.earlier.failed
	for _, c := range r.Calls {
		switch c.Status {
		case verified:
			ok++
		case incomplete:
			incompleteCalls++
		default:
			failedCalls++
		}
	}
	return
}

// OpenSession is a session of a transcript with no journal_close yet.
type OpenSession struct {
	Session string `json:"session"`
	// Line is its journal_open's line; Calls counts its requests so far.
	Line  int `json:"line"`
	Calls int `json:"calls"`
	// Follows is the session it continues (Options.Follows), if any.
	Follows string `json:"follows,omitempty"`
}

// Refusal is a request refused rather than made, as its
// provider_call_refused line records it (Journal.Refuse): the reason's
// code and message, and the length and BLAKE3 digest of the bytes
// received (the body is not kept). Decode gives one as a
// provider_call_refused line's Body, its Line 0.
type Refusal struct {
	Line            int    `json:"line"`
	Session         string `json:"session"`
	Call            string `json:"call,omitempty"`
	Reason          string `json:"reason"`
	Message         string `json:"message"`
	BodyBytes       int64  `json:"body_bytes"`
	BodyContentHash string `json:"body_content_hash"`
}

// OK reports whether the transcript proves its run, finished: at least
// one call, every call verified, and no problem (every session closed,
// every line whole).
func (r *Report) OK() bool {
	if r == nil {
		return false
	}
	v, i, f := r.Counts()
	return len(r.Problems) == 0 && v+r.Refusals() > 0 && i == 0 && f == 0
}

// Holds reports whether the transcript verifies as far as it is written:
// OK, or a run still being written, whose only problems are that it is
// not finished (Pending: a session open, what an open session has yet to
// sign, a last line not whole yet) and whose only unverified calls are
// those in flight (unanswered in a session still open). At least one
// call must verify. A transcript cut short holds too: the chain cannot
// tell a run cut from one still running, so an auditor of a finished run
// asks for OK (verify --closed), and keeps the chain head.
func (r *Report) Holds() bool {
	if r == nil || r.unlisted > 0 || r.earlier.incomplete+r.earlier.failed > 0 {
		return false // a call let go was answered, or never will be
	}
	ok := r.earlier.ok
	for _, c := range r.Calls {
		switch {
		case c.Status == verified:
			ok++
		case c.Status == incomplete && c.inFlight:
		default:
			return false
		}
	}
	for _, p := range r.Problems {
		if !r.pending[p] {
			return false
		}
	}
	return ok+r.Refusals() > 0
}

// Pending reports whether p, one of the report's Problems, says only that
// the run is not finished (Holds accepts it): a session with no
// journal_close (session_unclosed), a last line with no newline yet
// (torn_line), and, given a key, what a session still open has yet to
// sign (unsigned, unsigned_end, unsigned_lines).
func (r *Report) Pending(p *manifest.RuleError) bool { return r != nil && r.pending[p] }

// pend records a problem that says only that the run is not finished.
func (r *Report) pend(rule manifest.Rule, line int, format string, args ...any) {
	n := len(r.Problems)
	r.broke(rule, line, format, args...)
	if len(r.Problems) > n && r.Problems[n].Rule == rule {
		if r.pending == nil {
			r.pending = map[*manifest.RuleError]bool{}
		}
		r.pending[r.Problems[n]] = true
	}
}

// pendingSince counts the pending problems from index i of Problems.
func (r *Report) pendingSince(i int) int {
	n := 0
	for _, p := range r.Problems[min(i, len(r.Problems)):] {
		if r.pending[p] {
			n++
		}
	}
	return n
}

// broke records a rule the transcript breaks at line (0: the whole).
func (r *Report) broke(rule manifest.Rule, line int, format string, args ...any) {
	switch n := len(r.Problems); {
	case n < maxProblems:
		r.Problems = append(r.Problems, &manifest.RuleError{Rule: rule, Line: line, Offset: -1, Detail: fmt.Sprintf(format, args...)})
	case n == maxProblems:
		// A file of garbage is not held in memory a problem a line: past
		// the first maxProblems, the rest are counted (listUnlisted says
		// how many, once).
		r.Problems = append(r.Problems, &manifest.RuleError{Rule: RuleTooManyProblems, Line: line, Offset: -1})
		fallthrough
	default:
		r.unlisted++
	}
}

// listUnlisted words the too_many_problems entry, once the count is known.
func (r *Report) listUnlisted() {
	if r.unlisted > 0 {
		last := r.Problems[maxProblems]
		last.Detail = fmt.Sprintf("%d more problem(s) from line %d on, not listed", r.unlisted, last.Line)
	}
}

// maxProblems is how many of a transcript's own problems a Report lists.
const maxProblems = 1000

// WriteText writes one line per problem and per call, and a summary.
func (r *Report) WriteText(w io.Writer) error {
	if r == nil {
		r = &Report{}
	}
	if chain.IsNil(w) {
		return errors.New("transcript: WriteText: no writer")
	}
	detail := func(c CallReport) string {
		if c.Problem == nil {
			return "no problem recorded"
		}
		return textsafe.Line(c.Problem.Detail)
	}
	var b strings.Builder
	for _, p := range r.Problems {
		if r.pending[p] {
			fmt.Fprintf(&b, "OPEN %s\n", textsafe.Line(p.Detail))
		} else {
			fmt.Fprintf(&b, "FAIL %s\n", textsafe.Line(p.Detail))
		}
	}
	inFlight := 0
	for _, c := range r.Calls {
		switch {
		case c.Status == verified:
			note := ""
			if c.Unattributed {
				note = ": unattributed (no manifest)"
			}
			fmt.Fprintf(&b, "ok   line %d: call %s (seq %d)%s\n", c.Line, textsafe.Line(c.name()), c.Seq, note)
		case c.inFlight:
			inFlight++
			fmt.Fprintf(&b, "OPEN line %d: call %s (seq %d): %s\n", c.Line, textsafe.Line(c.name()), c.Seq, detail(c))
		case c.Status == incomplete:
			fmt.Fprintf(&b, "INCOMPLETE line %d: call %s (seq %d): %s\n", c.Line, textsafe.Line(c.name()), c.Seq, detail(c))
		default:
			fmt.Fprintf(&b, "FAIL line %d: call %s (seq %d): %s\n", c.Line, textsafe.Line(c.name()), c.Seq, detail(c))
		}
	}
	for _, x := range r.Refused {
		call := ""
		if x.Call != "" {
			call = ", call " + textsafe.Line(x.Call)
		}
		fmt.Fprintf(&b, "REFUSED line %d: session %s%s: %s: %s (%d bytes received, %s)\n", x.Line, textsafe.Line(x.Session), call, x.Reason, textsafe.Line(x.Message), x.BodyBytes, x.BodyContentHash)
	}
	v, i, f := r.Counts()
	fmt.Fprintf(&b, "%d call(s) verified, %d incomplete, %d failed", v, i-inFlight, f)
	if n := r.Refusals(); n > 0 {
		fmt.Fprintf(&b, ", %d refused", n)
	}
	if inFlight > 0 {
		fmt.Fprintf(&b, ", %d in flight", inFlight)
	}
	if r.Unattributed > 0 {
		fmt.Fprintf(&b, ", %d without a manifest", r.Unattributed)
	}
	if r.Changed > 0 {
		fmt.Fprintf(&b, ", %d changed before sending (both bodies kept)", r.Changed)
	}
	if n := len(r.Problems) - r.pendingSince(0); n > 0 {
		if r.unlisted > 0 {
			n += r.unlisted - 1 // the too_many_problems entry counts them
		}
		// Problems of the transcript, not of a call (a broken chain, a
		// session closed twice): the summary must not read as a pass.
		fmt.Fprintf(&b, "; %d problem(s) with the transcript", n)
	}
	if r.Format != "" {
		fmt.Fprintf(&b, " (%s transcript, %d lines)", r.Format, r.Lines)
	}
	b.WriteByte('\n')
	if line := r.Unfinished(); line != "" {
		b.WriteString(line + " (still being written, or cut short: verify --closed fails it)\n")
	}
	if r.Head != "" {
		fmt.Fprintf(&b, "chain head %s (the hash of line %d)\n", r.Head, r.Lines)
	}
	if r.SignedBy != "" && r.SignedThrough < r.Lines {
		fmt.Fprintf(&b, "signed by %s through the checkpoint at line %d, which covers every line before it; lines %d to %d are not signed yet (a session still open signs them at its next checkpoint or its close)\n",
			textsafe.Line(r.SignedBy), r.SignedThrough, r.SignedThrough+1, r.Lines)
	} else if r.SignedBy != "" {
		fmt.Fprintf(&b, "signed by %s: the checkpoint at line %d, the transcript's last, covers every line before it; a transcript cut back to an earlier checkpoint verifies too, so hold it to the latest checkpoint you kept (prove --from)\n",
			textsafe.Line(r.SignedBy), r.SignedThrough)
	}
	if len(r.CosignedBy) > 0 {
		names := make([]string, len(r.CosignedBy))
		for i, n := range r.CosignedBy {
			names[i] = textsafe.Line(n)
		}
		fmt.Fprintf(&b, "cosigned by %s: the last checkpoint of every session\n", strings.Join(names, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Unfinished says, of a transcript that holds but is not finished, which
// sessions are open with their calls so far and how far it verifies ("" for
// a finished run, or one that does not hold): the one sentence verify,
// report and every command that reads a transcript give of a run still
// being written.
func (r *Report) Unfinished() string {
	if r == nil || r.OK() || !r.Holds() {
		return ""
	}
	var open []string
	for _, s := range r.Open {
		follows := ""
		if s.Follows != "" {
			follows = " (following " + textsafe.Line(s.Follows) + ")"
		}
		open = append(open, fmt.Sprintf("session %s%s with %d call(s) so far", textsafe.Line(s.Session), follows, s.Calls))
	}
	what := "every session closed, but the last line not whole yet"
	if len(open) > 0 {
		what = "open: " + strings.Join(open, ", ")
	}
	return fmt.Sprintf("%s; verified through line %d", what, r.Lines)
}

// name is the call's name as the verdicts print it: "(unnamed)" for a
// request that carries none (an unattributed one may not).
func (c *CallReport) name() string {
	if c.Call == "" {
		return "(unnamed)"
	}
	return c.Call
}
