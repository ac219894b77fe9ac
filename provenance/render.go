package provenance

import (
	"math"

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

// RenderLabelled is the default renderer: parts grouped by register
// (binding, considered, craft, generated), each group under one heading,
// each part its own fragment (id = slot, producer = role) carrying its
// register, rank and sources. A heading shares its group's register and
// ranks above every part, so under a budget it goes only after its parts.
func RenderLabelled(role string, parts []Part) []fragment.Fragment {
	var out []fragment.Fragment
	for _, reg := range fragment.Registers() {
		first := true
		for _, p := range parts {
			if p.Register != reg {
				continue
			}
			if first {
				out = append(out, fragment.Fragment{
					ID: "heading:" + reg.String(), Source: "renderer", Producer: role,
					Body: headings[reg], Register: reg, Rank: math.MaxInt32,
				})
				first = false
			}
			out = append(out, fragment.Fragment{
				ID: p.Slot, Source: "part", Producer: role, Body: p.Text,
				Register: p.Register, Rank: p.Rank, Sources: sourceStrings(p.Cites),
			})
		}
	}
	return out
}
