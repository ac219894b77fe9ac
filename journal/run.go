package journal

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/promptloom/promptloom/internal/textsafe"
	"github.com/promptloom/promptloom/manifest"

	"github.com/tidwall/gjson"
)

// Run is a transcript read for a person: its calls in order, each with
// the fragments it was served and its verdict, and for each call what
// changed since the last call of the same role.
type Run struct {
	Source string     `json:"source"`
	Report *Report    `json:"report"`
	Calls  []*RunCall `json:"calls"`
}

// RunCall is one call of a Run.
type RunCall struct {
	Call   string `json:"call"`
	Role   string `json:"role"`
	Line   int    `json:"line"`
	Status Status `json:"status"`
	// Problem is why the call did not verify, or is incomplete.
	Problem     string     `json:"problem,omitempty"`
	SystemBytes int        `json:"system_bytes"`
	Fragments   []RunSeg   `json:"fragments"`
	Outcome     string     `json:"outcome,omitempty"` // the response's text, or the error's message
	Since       *RunChange `json:"since,omitempty"`   // against the last call of the same role
	system      string
	mf          *manifest.Manifest
}

// RunSeg is one fragment of a call: included, excluded or shed, with the
// reason and the sources it was built from.
type RunSeg struct {
	ID      string   `json:"id"`
	State   string   `json:"state"` // included, excluded, shed
	Reason  string   `json:"reason"`
	Bytes   int      `json:"bytes"`
	Sources []string `json:"sources,omitempty"`
}

// RunChange is what changed in a role's system prompt between two calls.
type RunChange struct {
	Previous string           `json:"previous"` // the earlier call
	Changes  []FragmentChange `json:"changes"`
	// CommonPrefixBytes is the bytes the two prompts share from the start:
	// what a provider's prefix cache can still serve; ResendBytes the rest.
	CommonPrefixBytes int `json:"common_prefix_bytes"`
	ResendBytes       int `json:"resend_bytes"`
}

// NewRun reads a promptloom or Harn transcript into a Run, taking each
// call's verdict from rep (the Verify report of the same transcript). A
// call shows the system prompt, manifest and outcome at the lines the
// verifier resolved for it (CallReport.SystemLine and the others), never
// another line claiming the same hash or answering the same request.
func NewRun(r io.Reader, source string, rep *Report) (*Run, error) {
	run := &Run{Source: source, Report: rep}
	status := map[int]CallReport{}
	needed := map[int]bool{} // lines some call resolved
	for _, c := range rep.Calls {
		status[c.Line] = c
		needed[c.SystemLine], needed[c.ManifestLine] = true, true
	}
	systems, manifests := map[int]string{}, map[int]*manifest.Manifest{} // by line
	outcomes := map[int]*RunCall{}                                       // outcome line -> its call
	last := map[string]*RunCall{}                                        // role -> its last call
	lr := newLineReader(r)
	for {
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return run, err
		}
		if blank(line) || unreadable(line) != "" {
			continue
		}
		l := gjson.ParseBytes(line)
		kind := l.Get("kind").String()
		if kind == "" {
			kind = l.Get("type").String()
		}
		switch {
		case kind == KindSystemPrompt && needed[lr.n]:
			systems[lr.n] = l.Get("content").String()
		case kind == KindContextManifest && needed[lr.n]:
			if m, err := manifest.Read([]byte(l.Get("manifest").Raw)); err == nil {
				manifests[lr.n] = m
			}
		case kind == KindRequest:
			v, ok := status[lr.n]
			if !ok {
				continue
			}
			c := &RunCall{Call: v.Call, Line: lr.n, Status: v.Status, Problem: v.Problem}
			c.system = systems[v.SystemLine]
			c.SystemBytes = len(c.system)
			m := manifests[v.ManifestLine]
			if m != nil {
				c.Role = m.CallRole
				for _, s := range m.Segments {
					c.Fragments = append(c.Fragments, RunSeg{ID: s.ID, State: segState(s), Reason: s.Reason, Bytes: s.Bytes, Sources: s.Sources})
				}
			}
			if p := last[c.Role]; p != nil && m != nil && p.Fragments != nil {
				common := commonPrefix(p.system, c.system)
				c.Since = &RunChange{Previous: p.Call, Changes: ChangedFragments(p.mf.Rows(), m.Rows()),
					CommonPrefixBytes: common, ResendBytes: len(c.system) - common}
			}
			if m != nil {
				c.mf = m
				last[c.Role] = c
			}
			if v.OutcomeLine > 0 {
				outcomes[v.OutcomeLine] = c
			}
			run.Calls = append(run.Calls, c)
		case kind == KindResponse:
			if c := outcomes[lr.n]; c != nil {
				c.Outcome = l.Get("response.text").String()
			}
		case kind == KindError:
			if c := outcomes[lr.n]; c != nil {
				c.Outcome = "error: " + l.Get("error.message").String()
			}
		}
	}
	return run, nil
}

// segState names a segment's state as the report and ChangedFragments say
// it: included, shed by a budget, or excluded (a pin keeps no reason, so
// its shed rows read as excluded).
func segState(s manifest.Segment) string {
	switch {
	case s.Included:
		return "included"
	case s.Shed():
		return "shed"
	}
	return "excluded"
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// WriteText writes the run, a call a block. Every value taken from the
// transcript is escaped (textsafe.Line): a reply holding a newline or an
// ESC sequence cannot forge a row or reach the terminal.
func (run *Run) WriteText(w io.Writer) error {
	var b strings.Builder
	q := textsafe.Line
	for _, c := range run.Calls {
		fmt.Fprintf(&b, "%s %s (role %s, line %d): %d-byte prompt\n", c.Status, q(c.Call), q(c.Role), c.Line, c.SystemBytes)
		if c.Problem != "" {
			fmt.Fprintf(&b, "  problem: %s\n", q(c.Problem))
		}
		for _, f := range c.Fragments {
			fmt.Fprintf(&b, "  %-8s %s: %s\n", f.State, q(f.ID), q(f.Reason))
		}
		if s := c.Since; s != nil {
			fmt.Fprintf(&b, "  since %s: %d change(s), %d bytes in common, %d re-sent\n", q(s.Previous), len(s.Changes), s.CommonPrefixBytes, s.ResendBytes)
			for _, ch := range s.Changes {
				fmt.Fprintf(&b, "    %s\n", q(ch.String()))
			}
		}
		if c.Outcome != "" {
			fmt.Fprintf(&b, "  reply: %s\n", q(c.Outcome))
		}
	}
	_, err := io.WriteString(w, b.String())
	if err == nil {
		err = run.Report.WriteText(w)
	}
	return err
}
