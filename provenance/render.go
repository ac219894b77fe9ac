package provenance

import (
	"cmp"
	"slices"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/budget"
)

// headings are renderLabelled's register headings. The generated one says
// what generated prose is: advisory, never canon.
var headings = map[budget.Register]string{
	budget.Binding:    "## Rules (binding)",
	budget.Considered: "## Considered (what you have read; weigh it)",
	budget.Craft:      "## Craft (how to write; follow unless a rule says otherwise)",
	budget.Generated:  "## Generated summaries (advisory, not canon: written by a model and may be wrong; the rules and the record win)",
}

// renderLabelled renders a role's parts for Assemble: parts grouped by register
// (binding, considered, craft, generated) under one heading each, every
// part its own fragment (id = slot, producer = role) carrying its register,
// rank and sources. Within a register, parts go highest rank first (stable),
// and the heading opens the first part's fragment. A budget sheds lowest rank
// first and, among equals, later first, so that first part is the last of
// its register to go: a heading never stands without its parts, and never
// leaves them behind.
func renderLabelled(role string, parts []Part) []promptloom.Fragment {
	var out []promptloom.Fragment
	for _, reg := range []budget.Register{budget.Binding, budget.Considered, budget.Craft, budget.Generated} {
		var group []Part
		for _, p := range parts {
			if p.Register == reg {
				group = append(group, p)
			}
		}
		slices.SortStableFunc(group, func(a, b Part) int { return cmp.Compare(b.Rank, a.Rank) })
		for i, p := range group {
			body := p.Text
			if i == 0 {
				body = headings[reg] + "\n" + p.Text
			}
			out = append(out, promptloom.Fragment{
				ID: p.Slot, Source: "part", Producer: role, Body: body,
				Register: p.Register, Rank: p.Rank, Sources: sourceStrings(p.Cites),
			})
		}
	}
	return out
}
