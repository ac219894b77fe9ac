package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

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
// call's verdict from rep (the Verify report of the same transcript).
func NewRun(r io.Reader, source string, rep *Report) (*Run, error) {
	run := &Run{Source: source, Report: rep}
	status := map[int]CallReport{}
	for _, c := range rep.Calls {
		status[c.Line] = c
	}
	systems, manifests := map[string]string{}, map[string]*manifest.Manifest{}
	byLine := map[int64]*RunCall{} // promptloom request seq -> call
	last := map[string]*RunCall{}  // role -> its last call
	lr := newLineReader(r)
	for {
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return run, err
		}
		if !json.Valid(line) {
			continue
		}
		l := gjson.ParseBytes(line)
		kind := l.Get("kind").String()
		if kind == "" {
			kind = l.Get("type").String()
		}
		switch kind {
		case KindSystemPrompt:
			systems[l.Get("content_hash").String()] = l.Get("content").String()
		case KindContextManifest:
			if m, err := manifest.Read([]byte(l.Get("manifest").Raw)); err == nil {
				manifests[l.Get("content_hash").String()] = m
			}
		case KindRequest:
			c := &RunCall{Call: l.Get("call").String(), Line: lr.n}
			if c.Call == "" {
				c.Call = l.Get("call_id").String()
			}
			v := status[lr.n]
			c.Status, c.Problem = v.Status, v.Problem
			c.system = systems[l.Get("served_context.system_prompt_content_hash").String()]
			c.SystemBytes = len(c.system)
			m := manifests[l.Get("served_context.manifest_content_hash").String()]
			if m != nil {
				c.Role = m.CallRole
				for _, s := range m.Segments {
					c.Fragments = append(c.Fragments, RunSeg{ID: s.ID, State: segState(s), Reason: s.Reason, Bytes: s.Bytes, Sources: s.Sources})
				}
			}
			if p := last[c.Role]; p != nil && m != nil && p.Fragments != nil {
				common := commonPrefix(p.system, c.system)
				c.Since = &RunChange{Previous: p.Call, Changes: ChangedFragments(p.segments(), segmentsOfRun(m)),
					CommonPrefixBytes: common, ResendBytes: len(c.system) - common}
			}
			if m != nil {
				c.mf = m
				last[c.Role] = c
			}
			byLine[l.Get("seq").Int()] = c
			run.Calls = append(run.Calls, c)
		case KindResponse:
			if c := byLine[l.Get("request_seq").Int()]; c != nil {
				c.Outcome = l.Get("response.text").String()
			}
		case KindError:
			if c := byLine[l.Get("request_seq").Int()]; c != nil {
				c.Outcome = "error: " + l.Get("error.message").String()
			}
		}
	}
	return run, nil
}

func segState(s manifest.Segment) string {
	switch {
	case s.Included:
		return "included"
	case strings.HasPrefix(s.Reason, "shed"):
		return "shed"
	}
	return "excluded"
}

func segmentsOfRun(m *manifest.Manifest) []PinSegment { return SegmentsOf(m) }

func (c *RunCall) segments() []PinSegment { return SegmentsOf(c.mf) }

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// WriteText writes the run, a call a block.
func (run *Run) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, c := range run.Calls {
		fmt.Fprintf(&b, "%s %s (role %s, line %d): %d-byte prompt\n", c.Status, c.Call, c.Role, c.Line, c.SystemBytes)
		if c.Problem != "" {
			fmt.Fprintf(&b, "  problem: %s\n", c.Problem)
		}
		for _, f := range c.Fragments {
			fmt.Fprintf(&b, "  %-8s %s: %s\n", f.State, f.ID, f.Reason)
		}
		if s := c.Since; s != nil {
			fmt.Fprintf(&b, "  since %s: %d change(s), %d bytes in common, %d re-sent\n", s.Previous, len(s.Changes), s.CommonPrefixBytes, s.ResendBytes)
			for _, ch := range s.Changes {
				fmt.Fprintf(&b, "    %s\n", ch)
			}
		}
		if c.Outcome != "" {
			fmt.Fprintf(&b, "  reply: %s\n", c.Outcome)
		}
	}
	_, err := io.WriteString(w, b.String())
	if err == nil {
		err = run.Report.WriteText(w)
	}
	return err
}
