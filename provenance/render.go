package provenance

import (
	"cmp"
	"slices"

	"github.com/promptloom/promptloom/fragment"
)

// headings are RenderLabelled's register headings. The generated one says
// what generated prose is: advisory, never canon.
var headings = map[fragment.Register]string{
	fragment.Binding:    "## Rules (binding)",
	fragment.Considered: "## Considered (what you have read; weigh it)",
	fragment.Craft:      "## Craft (how to write; follow unless a rule says otherwise)",
	fragment.Generated:  "## Generated summaries (advisory, not canon: written by a model and may be wrong; the rules and the record win)",
}

// RenderLabelled renders a role's parts as Assemble does: parts grouped by register
// (binding, considered, craft, generated) under one heading each, every
// part its own fragment (id = slot, producer = role) carrying its register,
// rank and sources. Within a register, parts go highest rank first (stable),
// and the heading opens the first part's fragment. A budget sheds lowest rank
// first and, among equals, later first, so that first part is the last of
// its register to go: a heading never stands without its parts, and never
// leaves them behind.
func RenderLabelled(role string, parts []Part) []fragment.Fragment {
	var out []fragment.Fragment
	for _, reg := range fragment.Registers() {
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
			out = append(out, fragment.Fragment{
				ID: p.Slot, Source: "part", Producer: role, Body: body,
				Register: p.Register, Rank: p.Rank, Sources: sourceStrings(p.Cites),
			})
		}
	}
	return out
}
