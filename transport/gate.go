package transport

import (
	"fmt"
	"slices"
	"strings"

	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/manifest"
)

// The rules a request's tools break (manifest.RuleError.Rule).
const (
	ruleGatedOut = manifest.Rule("tool_gated_out")
	ruleNotSent  = manifest.Rule("tool_not_sent")
)

// gatedRow is what a prompt's row says about tools: the tools an included
// fragment required, or the tool whose absence excluded one.
type gatedRow struct {
	id       string
	included bool
	tools    []string // included: every tool it required; excluded: the one missing
}

// gatedRows reads the tool gates of a prompt: from the reduction's
// fragments when the explanation has them, else from the manifest's
// reasons, in the words the reducer writes ("tool(s) present: a, b",
// "requires tool `t` (not available)").
func gatedRows(e *explain.Explanation, m *manifest.Manifest) []gatedRow {
	var rows []gatedRow
	if e != nil && e.Reduction != nil {
		for _, r := range e.Reduction.Rows {
			if r.Fragment == nil || len(r.Fragment.RequiresTools) == 0 {
				continue
			}
			g := gatedRow{id: r.Fragment.ID, included: r.Included}
			if r.Included {
				g.tools = r.Fragment.RequiresTools
			} else if t, ok := missingTool(r.Reason); ok {
				g.tools = []string{t}
			} else {
				continue // shed by a budget, or empty: not a tool's doing
			}
			rows = append(rows, g)
		}
		return rows
	}
	for _, s := range m.Rows() {
		if s.Included {
			if list, ok := strings.CutPrefix(s.Reason, "tool(s) present: "); ok {
				rows = append(rows, gatedRow{id: s.ID, included: true, tools: strings.Split(list, ", ")})
			}
		} else if t, ok := missingTool(s.Reason); ok {
			rows = append(rows, gatedRow{id: s.ID, tools: []string{t}})
		}
	}
	return rows
}

func missingTool(reason string) (string, bool) {
	rest, ok := strings.CutPrefix(reason, "requires tool `")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "` (not available)")
}

// checkTools holds the tools a body sends to the tools its prompt was
// gated on: a fragment kept for a tool not sent, or a tool sent whose
// fragment was gated out for its absence, is a RuleError naming both.
func checkTools(rows []gatedRow, sent []string) *manifest.RuleError {
	for _, r := range rows {
		for _, t := range r.tools {
			has := slices.Contains(sent, t)
			switch {
			case r.included && !has:
				return &manifest.RuleError{Rule: ruleNotSent, ID: r.id, Offset: -1, Got: t,
					Detail: fmt.Sprintf("fragment %s is guidance for tool %s, which the request does not send", r.id, t)}
			case !r.included && has:
				return &manifest.RuleError{Rule: ruleGatedOut, ID: r.id, Offset: -1, Got: t,
					Detail: fmt.Sprintf("the request sends tool %s, but fragment %s was gated out for want of it", t, r.id)}
			}
		}
	}
	return nil
}
