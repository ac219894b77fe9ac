package provenance

import (
	"slices"

	"github.com/promptloom/promptloom/stage"
)

// Description is a context as plain data, for golden tests and reports:
// every part with its register, rank, sources and fate, what was shed, and
// what the grant handed out.
type Description struct {
	Role  string          `json:"role"`
	Upto  int64           `json:"upto"`
	Parts []DescribedPart `json:"parts"`
	// Shed lists the slots a budget dropped.
	Shed []string `json:"shed"`
	// Read lists every source the grant handed out: slice by slice in the
	// grant's field order, each in the order it handed them out.
	Read []string `json:"read"`
	// Prompt is the system prompt the context reduced to.
	Prompt string `json:"prompt"`
	// Traces are the stages of the assembly.
	Traces []stage.Trace `json:"traces"`
}

// DescribedPart is one part of a Description.
type DescribedPart struct {
	Slot     string   `json:"slot"`
	Register string   `json:"register"`
	Rank     int      `json:"rank"`
	Cites    []string `json:"cites"`
	Included bool     `json:"included"`
	Reason   string   `json:"reason"`
	Bytes    int      `json:"bytes"`
	Digest   string   `json:"digest"`
}

// Describe returns the context as plain data.
func (c *Context) Describe() Description {
	d := Description{Role: c.Role, Upto: c.Upto, Parts: []DescribedPart{}, Shed: []string{},
		Read: sourceStrings(c.Read), Prompt: c.Reduction.System, Traces: c.Traces}
	rows := map[string]int{}
	for i, r := range c.Reduction.Rows {
		rows[r.Fragment.ID] = i
	}
	for _, p := range c.Parts {
		dp := DescribedPart{Slot: p.Slot, Register: p.Register.String(), Rank: p.Rank, Cites: sourceStrings(p.Cites)}
		if i, ok := rows[p.Slot]; ok {
			r := &c.Reduction.Rows[i]
			dp.Included, dp.Reason, dp.Bytes, dp.Digest = r.Included, r.Reason, r.Bytes, r.Digest.String()
			if r.Shed {
				d.Shed = append(d.Shed, p.Slot)
			}
		}
		d.Parts = append(d.Parts, dp)
	}
	slices.Sort(d.Shed)
	return d
}
