package provenance

import (
	"encoding/json"
	"slices"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/digest"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/stage"
)

// Context is one role's context for one call: every part with its
// register, rank, sources and fate, what a budget shed, what the grant
// handed out, and the prompt they reduce to with its manifest. Its JSON is
// the description golden tests and reports keep; the reduction (with the
// fragments its rows point at) and the manifest are for the call itself.
type Context struct {
	Role string `json:"role"`
	// Upto is the log position the grant's slices read at.
	Upto  int64           `json:"upto"`
	Parts []DescribedPart `json:"parts"`
	// Shed lists the slots a budget dropped, sorted.
	Shed []string `json:"shed"`
	// Read lists every source the grant handed out: slice by slice in the
	// grant's field order, each in the order it handed them out.
	Read []Source `json:"read"`
	// Prompt is the system prompt the context reduced to
	// (Reduction.System).
	Prompt string `json:"prompt"`
	// Traces are the stages of the assembly.
	Traces []stage.Trace `json:"traces"`

	// Reduction is the parts' reduction: each row points at the part's
	// fragment (Row.Fragment). Manifest is its manifest.
	Reduction *promptloom.Reduction `json:"-"`
	Manifest  *manifest.Manifest    `json:"-"`
}

// DescribedPart is one part of a Context, as a manifest.Segment: the row
// of the part's fragment, with the part's own words where the manifest
// would differ. ID is the slot and Sources what the part cites, as the part
// names them (a manifest redacts them); Included, Reason, Bytes and Digest
// are the reduction's; Register and Rank are always set. Producer, Bucket
// and Tokens are the manifest's, and the JSON leaves them out.
//
// Its JSON is the part's own view, in the part's words: slot, register,
// rank, cites, included, reason, bytes, digest (MarshalJSON), where a
// manifest row says id and sources and leaves out a binding rank 0.
type DescribedPart struct {
	manifest.Segment
}

// describedJSON is DescribedPart's wire form.
type describedJSON struct {
	Slot     string        `json:"slot"`
	Register string        `json:"register"`
	Rank     int           `json:"rank"`
	Cites    []string      `json:"cites"`
	Included bool          `json:"included"`
	Reason   string        `json:"reason"`
	Bytes    int           `json:"bytes"`
	Digest   digest.Digest `json:"digest"`
}

// MarshalJSON writes the part in its own words.
func (p DescribedPart) MarshalJSON() ([]byte, error) {
	w := describedJSON{Slot: p.ID, Register: p.Register, Cites: p.Sources,
		Included: p.Included, Reason: p.Reason, Bytes: p.Bytes, Digest: p.Digest}
	if p.Rank != nil {
		w.Rank = *p.Rank
	}
	return pjson.MarshalRaw(w) // the caller's encoder decides on HTML escaping
}

// UnmarshalJSON reads a part as MarshalJSON writes it.
func (p *DescribedPart) UnmarshalJSON(b []byte) error {
	var w describedJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*p = DescribedPart{manifest.Segment{ID: w.Slot, Register: w.Register, Rank: &w.Rank, Sources: w.Cites,
		Included: w.Included, Reason: w.Reason, Bytes: w.Bytes, Digest: w.Digest}}
	return nil
}

// describe makes the context of a's parts, reduced to r with manifest m.
func describe(role string, a *assembled, run *stage.Result, r *promptloom.Reduction, m *manifest.Manifest) *Context {
	c := &Context{Role: role, Upto: a.upto, Parts: []DescribedPart{}, Shed: []string{}, Read: a.read,
		Prompt: r.System, Traces: run.Traces, Reduction: r, Manifest: m}
	rows := map[string]int{}
	for i, row := range r.Rows {
		rows[row.Fragment.ID] = i
	}
	for _, p := range a.parts {
		var dp DescribedPart
		i, ok := rows[p.Slot]
		if ok {
			dp.Segment = m.Segments[i]
			row := &r.Rows[i]
			// The reduction's own values, as the prompt holds them.
			dp.Included, dp.Reason, dp.Bytes, dp.Digest = row.Included, row.Reason, row.Bytes, row.Digest
			if row.Shed {
				c.Shed = append(c.Shed, p.Slot)
			}
		}
		rank := p.Rank
		dp.ID, dp.Register, dp.Rank, dp.Sources = p.Slot, p.Register.String(), &rank, sourceStrings(p.Cites)
		c.Parts = append(c.Parts, dp)
	}
	slices.Sort(c.Shed)
	return c
}
