// Package report shows a verified transcript to a person: each call in
// order with the fragments it was served (included, excluded or shed, with
// reasons and sources), its verdict and reply, and against the last call
// of the same role what changed and how many bytes a prefix cache still
// serves, beside the tokens the provider said its cache served. It renders a journal.Report, which Verify filled in one pass over
// the transcript, so what is shown is what was verified.
package report

import (
	"bufio"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strconv"

	"github.com/promptloom/promptloom/internal/textsafe"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/manifest"
)

// WriteText writes the report a call a block, then the verdicts
// (journal.Report.WriteText). Every value taken from the transcript is
// escaped (textsafe.Line): a reply holding a newline or an ESC sequence
// cannot forge a row or reach the terminal.
//
// A call citing the manifest an earlier call showed says so instead of
// listing its rows again, and the text is written as it is made: a run of
// many calls on one large manifest is as long, and takes as much memory,
// as the manifest once.
func WriteText(w io.Writer, rep *journal.Report) error {
	b := bufio.NewWriter(w)
	q := textsafe.Line
	shown := map[*manifest.Manifest]string{} // manifest -> the call that listed it
	for i := range rep.Calls {
		c := &rep.Calls[i]
		if c.Unattributed {
			fmt.Fprintf(b, "%s %s (line %d): unattributed: no manifest, so nothing accounts for its prompt\n", c.Status, q(callName(c)), c.Line)
		} else {
			fmt.Fprintf(b, "%s %s (role %s, line %d): %d-byte prompt\n", c.Status, q(callName(c)), q(role(c)), c.Line, c.SystemBytes)
		}
		if c.Problem != nil {
			fmt.Fprintf(b, "  problem: %s\n", q(c.Problem.Detail))
		}
		if first, ok := shown[c.Manifest]; ok && c.Manifest != nil {
			fmt.Fprintf(b, "  fragments: as listed for %s (the same manifest)\n", q(first))
		} else {
			for _, f := range c.Manifest.Rows() {
				fmt.Fprintf(b, "  %-8s %s: %s\n", f.State(), q(f.ID), q(f.Reason))
			}
			if c.Manifest != nil {
				shown[c.Manifest] = callName(c) + " (line " + strconv.Itoa(c.Line) + ")"
			}
		}
		if c.Previous != "" {
			fmt.Fprintf(b, "  since %s: %d change(s), %d bytes in common, %d re-sent\n", q(c.Previous), len(c.Changes), c.CommonPrefixBytes, c.ResendBytes)
			for _, ch := range c.Changes {
				fmt.Fprintf(b, "    %s\n", q(ch.String()))
			}
		}
		if c.Usage != nil {
			fmt.Fprintf(b, "  cache: %s\n", q(cacheLine(c)))
		}
		if c.Outcome != "" {
			fmt.Fprintf(b, "  reply: %s\n", q(c.Outcome))
		}
		for _, tc := range c.ToolCalls {
			fmt.Fprintf(b, "  tool call: %s\n", q(toolCallLine(tc)))
		}
	}
	if err := b.Flush(); err != nil {
		return err
	}
	return rep.WriteText(w)
}

// cacheLine sets the prefix promptloom predicted stable against the
// role's previous call beside what the provider's cache served: the one
// in bytes of the system prompt, the other in the provider's tokens (of
// everything cached before the system prompt's end: tools too).
func cacheLine(c *journal.CallReport) string {
	predicted := "no earlier call of its role to keep a prefix stable against"
	if c.Previous != "" {
		predicted = fmt.Sprintf("promptloom predicted %d bytes of the prompt stable since %s", c.CommonPrefixBytes, c.Previous)
	}
	u := c.Usage
	served := fmt.Sprintf("the provider read %d tokens from its cache", u.CacheReadTokens)
	if u.CacheWriteTokens > 0 {
		served += fmt.Sprintf(" and wrote %d", u.CacheWriteTokens)
	}
	return fmt.Sprintf("%s; %s (its input_tokens: %d)", predicted, served, u.InputTokens)
}

// toolCallLine names a tool call: the tool, the provider's id for the
// call, and the digest of its arguments (the transcript keeps them in the
// body, redacted).
func toolCallLine(tc journal.ToolCall) string {
	line := tc.Name
	if tc.ID != "" {
		line += " (id " + tc.ID + ")"
	}
	return line + ", arguments " + tc.ArgumentsHash.String()
}

// role is a call's role: its manifest's call role.
// callName is the call's name, or "(unnamed)": a request without a
// manifest may carry none.
func callName(c *journal.CallReport) string {
	if c.Call == "" {
		return "(unnamed)"
	}
	return c.Call
}

func role(c *journal.CallReport) string {
	if c.Manifest == nil {
		return ""
	}
	return c.Manifest.CallRole
}

//go:embed page.html.tmpl
var pageTemplate string

var page = template.Must(template.New("run").Parse(pageTemplate))

// The page's view of the report.
type (
	lane struct {
		Name  string
		Calls []call
	}
	call struct {
		Call, Status, Problem, Outcome string
		ToolCalls                      []string
		Prompt                         string
		Line, SystemBytes              int
		Unattributed                   bool
		Fragments                      []fragment
		Since                          *since
		Cache                          *cache
	}
	// cache is the prefix predicted stable beside the provider's cache
	// tokens (cacheLine).
	cache struct {
		Text                                    string
		PredictedBytes, ReadTokens, WriteTokens int
	}
	since struct {
		Previous                       string
		Changes                        []manifest.Change
		CommonPrefixBytes, ResendBytes int
	}
	fragment struct {
		ID, State, Reason string
		Bytes             int
		Sources           []string
	}
)

// WriteHTML renders the report as one self-contained HTML page, titled by
// source (the transcript's name): a lane of calls per role, in the order of
// their first call.
func WriteHTML(w io.Writer, source string, rep *journal.Report) error {
	var lanes []*lane
	byRole := map[string]*lane{}
	for i := range rep.Calls {
		c := &rep.Calls[i]
		name := role(c)
		l := byRole[name]
		if l == nil {
			l = &lane{Name: name}
			byRole[name] = l
			lanes = append(lanes, l)
		}
		v := call{Call: callName(c), Status: string(c.Status), Outcome: c.Outcome, Line: c.Line, SystemBytes: c.SystemBytes, Unattributed: c.Unattributed, Prompt: c.System()}
		for _, tc := range c.ToolCalls {
			v.ToolCalls = append(v.ToolCalls, toolCallLine(tc))
		}
		if c.Previous != "" {
			v.Since = &since{c.Previous, c.Changes, c.CommonPrefixBytes, c.ResendBytes}
		}
		if c.Problem != nil {
			v.Problem = c.Problem.Detail
		}
		if c.Usage != nil {
			v.Cache = &cache{cacheLine(c), c.CommonPrefixBytes, c.Usage.CacheReadTokens, c.Usage.CacheWriteTokens}
		}
		for _, s := range c.Manifest.Rows() {
			v.Fragments = append(v.Fragments, fragment{ID: s.ID, State: s.State(), Reason: s.Reason, Bytes: s.Bytes, Sources: s.Sources})
		}
		l.Calls = append(l.Calls, v)
	}
	problems := make([]string, len(rep.Problems))
	for i, p := range rep.Problems {
		problems[i] = p.Detail
	}
	v, i, f := rep.Counts()
	return page.Execute(w, map[string]any{
		"Title":    "promptloom run: " + source,
		"Summary":  fmt.Sprintf("%d call(s) verified, %d incomplete, %d failed (%s transcript, %d lines)", v, i, f, rep.Format, rep.Lines),
		"Head":     rep.Head,
		"Signed":   signedLine(rep),
		"Problems": problems,
		"Roles":    lanes,
	})
}

// signedLine says whether the report's transcript was held to a key and
// how far the signature reaches: what verify --key says.
func signedLine(rep *journal.Report) string {
	if rep.SignedBy == "" {
		return "not checked against a signer's key"
	}
	return fmt.Sprintf("signed by %s: the checkpoint at line %d, the last, covers every line before it (a transcript cut back to an earlier checkpoint verifies too)", rep.SignedBy, rep.SignedThrough)
}
