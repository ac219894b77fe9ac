package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/transcript"
)

// A recorded call is explained from what its transcript retained: the
// system prompt and the manifest its request's receipt names, and nothing
// else (no options file). The transcript is read once, whole, and verified
// first; the call's lines are then taken from the same bytes, so what is
// explained is what was verified, never a second reading of a file that may
// have changed meanwhile.
//
// What a recording can tell: the prompt, byte for byte, and every
// fragment's row as the manifest holds it (id, producer, bucket, state,
// reason, bytes, digest; ids and reasons redacted, as a manifest holds
// them). What it cannot: a fragment's source apart from its producer, its
// gates apart from the words of its reason, and the body of a fragment left
// out (the manifest keeps its digest only).

// recording is a verified call's explanation and where it came from.
type recording struct {
	x    *explain.Explanation
	name string // the transcript (or session) read
	call string
	line int // the request's line
}

// recordedCalls reads the transcript arg names, verifies it, and explains
// each of calls from its retained prompt and manifest.
func (e *env) recordedCalls(arg string, calls ...string) ([]recording, error) {
	ctx := context.Background()
	data, err := e.readTranscript(ctx, arg, maxTranscriptBytes)
	if err != nil {
		return nil, err
	}
	rep, err := transcript.Verify(bytes.NewReader(data), &transcript.Options{MaxLineBytes: maxLineBytes})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", shown(arg), err)
	}
	e.noteOpen(arg, rep)
	out := make([]recording, len(calls))
	for i, call := range calls {
		c, err := verifiedCall(rep, call)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", shown(arg), err)
		}
		x, err := recordedExplanation(c, data)
		if err != nil {
			return nil, fmt.Errorf("%s: call %s (line %d): %w", shown(arg), call, c.Line, err)
		}
		out[i] = recording{x: x, name: shown(arg), call: call, line: c.Line}
	}
	return out, nil
}

// verifiedCall is the one call named call, when the lines it is explained
// from verify: its receipts re-derive from the prompt and manifest it names
// (an answered call, or one whose answer is yet to come), and no line up to
// the one after its request breaks a rule of the transcript (that line's
// prev is what covers the request). What says only that the run is not
// finished (a session open, a last line not whole yet) is no objection: a
// run being written can be explained.
func verifiedCall(rep *transcript.Report, call string) (*transcript.CallReport, error) {
	c, err := verifiedCallAny(rep, call)
	if err != nil {
		return nil, err
	}
	if c.Status == "failed" || c.SystemLine == 0 || c.Manifest == nil {
		detail := "call does not verify: its prompt and manifest are not retained"
		switch {
		case c.Problem != nil:
			detail = c.Problem.Detail
		case c.Unattributed:
			// A proxied call verifies; what it lacks is a prompt to explain
			// fragment by fragment. Its whole request is kept.
			detail = "no manifest accounts for its prompt (a call recorded through the proxy, or the transport without a prompt): --request explains its whole request"
		}
		return nil, fmt.Errorf("call %s (line %d) is not explained: %s", call, c.Line, detail)
	}
	for _, p := range rep.Problems {
		if p.Line > c.Line+1 || p.Line == 0 || rep.Pending(p) {
			continue
		}
		return nil, fmt.Errorf("the transcript does not verify up to call %s (line %d), so it is not explained: %s", call, c.Line, p.Detail)
	}
	return c, nil
}

// verifiedCallAny is the one call named call, attributed or not.
func verifiedCallAny(rep *transcript.Report, call string) (*transcript.CallReport, error) {
	return parseCallRef(call).find(rep.Calls)
}

// callRef is a call as --call names it, in every command that takes one:
// NAME, or NAME@LINE, the call of that name whose request is at LINE. A
// file holds every session appended to it, so a name may repeat (a
// harness run twice into one file), and the line tells them apart.
type callRef struct {
	given string // as given: a call may itself be named "x@5"
	name  string
	line  int // 0 when given no line
}

// parseCallRef reads NAME@LINE, LINE a positive decimal number, or NAME.
func parseCallRef(s string) callRef {
	r := callRef{given: s, name: s}
	at := strings.LastIndexByte(s, '@')
	if at < 0 || at+1 == len(s) || strings.TrimLeft(s[at+1:], "0123456789") != "" {
		return r
	}
	if n, err := strconv.Atoi(s[at+1:]); err == nil && n > 0 {
		r.name, r.line = s[:at], n
	}
	return r
}

// matches reports whether the call named call, its request at line, is
// the one r names: by the name as given, or by name and line.
func (r callRef) matches(call string, line int) bool {
	return call == r.given || r.line > 0 && call == r.name && line == r.line
}

// find is the one call of calls r names.
func (r callRef) find(calls []transcript.CallReport) (*transcript.CallReport, error) {
	var found []*transcript.CallReport
	var lines []string
	for i := range calls {
		if c := &calls[i]; r.matches(c.Call, c.Line) {
			found = append(found, c)
			lines = append(lines, strconv.Itoa(c.Line))
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		return nil, fmt.Errorf("%d calls are named %q (lines %s): --call must name one, as NAME@LINE (%s@%s)", len(found), r.given, strings.Join(lines, ", "), r.given, lines[len(lines)-1])
	}
	if r.line > 0 {
		for i := range calls {
			if calls[i].Call == r.name {
				lines = append(lines, strconv.Itoa(calls[i].Line))
			}
		}
		switch len(lines) {
		case 0:
		case 1:
			return nil, fmt.Errorf("no call %q at line %d: its request is at line %s", r.name, r.line, lines[0])
		default:
			return nil, fmt.Errorf("no call %q at line %d: the requests of the calls of that name are at lines %s", r.name, r.line, strings.Join(lines, ", "))
		}
	}
	return nil, fmt.Errorf("no call %q in the transcript (%d call(s); promptloom verify --transcript lists them)", r.given, len(calls))
}

// recordedExplanation is the explanation of a verified call: its prompt
// from the system_prompt line the verifier resolved, its manifest the one
// it read, held to the prompt again (a Harn transcript may retain a prompt
// redacted, whose bytes the manifest's rows do not place).
func recordedExplanation(c *transcript.CallReport, data []byte) (*explain.Explanation, error) {
	line, ok := nthLine(data, c.SystemLine)
	if !ok {
		return nil, fmt.Errorf("no line %d", c.SystemLine)
	}
	l, err := transcript.Decode(line)
	if err != nil {
		return nil, fmt.Errorf("line %d: %w", c.SystemLine, err)
	}
	sys, ok := l.Body.(*transcript.SystemPrompt)
	if !ok {
		return nil, fmt.Errorf("line %d is a %s, not a system_prompt", c.SystemLine, l.Kind)
	}
	x, err := explain.FromManifest(sys.Content, c.Manifest)
	if err != nil {
		return nil, fmt.Errorf("the manifest at line %d does not place the bytes of the prompt at line %d (a redacted prompt?): %w", c.ManifestLine, c.SystemLine, err)
	}
	return x, nil
}

// nthLine returns line n (from 1) of data, without its newline.
func nthLine(data []byte, n int) ([]byte, bool) {
	for i := 1; n > 0; i++ {
		j := bytes.IndexByte(data, '\n')
		if i == n {
			if j < 0 {
				return data, len(data) > 0
			}
			return data[:j], true
		}
		if j < 0 {
			return nil, false
		}
		data = data[j+1:]
	}
	return nil, false
}

// onlyRecordedFlags refuses the flags of fs that need options (to shape
// the prompt, lint it, trace its run, build a payload), which a recording
// does not have: allowed are the ones named.
func onlyRecordedFlags(fs *flag.FlagSet, allowed ...string) error {
	var bad []string
	fs.Visit(func(f *flag.Flag) {
		for _, a := range allowed {
			if f.Name == a {
				return
			}
		}
		bad = append(bad, "--"+f.Name)
	})
	if len(bad) > 0 {
		verb := "needs"
		if len(bad) > 1 {
			verb = "need"
		}
		return fmt.Errorf("%s %s an options file; with --transcript the prompt is the one recorded", strings.Join(bad, ", "), verb)
	}
	return nil
}

// explainRecorded is explain --transcript FILE --call NAME: the recorded
// call's explanation, in the formats that need no options (text, json,
// html, raw).
func (e *env) explainRecorded(fs *flag.FlagSet, pos []string, tr, call, format string) int {
	if err := onlyRecordedFlags(fs, "transcript", "call", "format"); err != nil {
		return e.fail("explain: %v", err)
	}
	if msg := recordedUsage(tr != "", call != "", len(pos) > 0, "--call NAME"); msg != "" {
		return e.fail("explain: --transcript FILE --call NAME explains a recorded call: %s", msg)
	}
	if err := oneOf("format", format, "text", "json", "html", "raw"); err != nil {
		return e.fail("explain: %v (a recorded call has no options to build a payload from)", err)
	}
	recs, err := e.recordedCalls(tr, call)
	if err != nil {
		return e.fail("explain: %v", err)
	}
	x := recs[0].x
	switch format {
	case "json":
		err = x.WriteJSON(e.stdout)
	case "html":
		err = x.WriteHTML(e.stdout, recs[0].name+" call "+call)
	case "raw":
		_, err = e.stdout.Write([]byte(x.System))
	default:
		fmt.Fprintf(e.stdout, "recorded call %s (line %d of %s), verified: its manifest's rows, which keep no source and no body of a fragment left out\n", call, recs[0].line, recs[0].name)
		err = x.WriteText(e.stdout)
	}
	if err != nil {
		return e.fail("explain: %v", err)
	}
	return ExitOK
}

// diffRecorded is diff --transcript FILE --call A --call B: two recorded
// calls compared as diff compares two options files.
func (e *env) diffRecorded(fs *flag.FlagSet, pos []string, tr string, calls []string, format string) int {
	if err := onlyRecordedFlags(fs, "transcript", "call", "format"); err != nil {
		return e.fail("diff: %v", err)
	}
	if msg := recordedUsage(tr != "", len(calls) == 2, len(pos) > 0, "--call A --call B (got "+strconv.Itoa(len(calls))+")"); msg != "" {
		return e.fail("diff: --transcript FILE --call A --call B compares two recorded calls: %s", msg)
	}
	recs, err := e.recordedCalls(tr, calls...)
	if err != nil {
		return e.fail("diff: %v", err)
	}
	a, b := "call "+calls[0], "call "+calls[1]
	d := explain.Diff(recs[0].x, recs[1].x, a, b)
	switch format {
	case "json":
		err = d.WriteJSON(e.stdout)
	case "html":
		err = d.WriteHTML(e.stdout, a, b)
	default:
		err = d.WriteText(e.stdout, a, b)
	}
	if err != nil {
		return e.fail("diff: %v", err)
	}
	if d.Identical {
		return ExitOK
	}
	return ExitFail
}

// recordedUsage says what a command on a recorded call lacks or has too
// much of: the transcript, the call(s) it names, or an options file it
// does not take ("" when nothing).
func recordedUsage(tr, calls, optionsFile bool, want string) string {
	switch {
	case !tr:
		return "give --transcript FILE"
	case !calls:
		return "give " + want
	case optionsFile:
		return "it takes no options file"
	}
	return ""
}
