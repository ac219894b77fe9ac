package provenance

import (
	"encoding/json"
	"slices"

	"github.com/promptloom/promptloom/digest"
	canon "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/manifest"
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

// DescribedPart is one part of a Description, as a manifest.Segment: the
// row of the part's fragment, with the part's own words where the manifest
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
	return canon.MarshalRaw(w) // the caller's encoder decides on HTML escaping
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

// Describe returns the context as plain data.
func (c *Context) Describe() Description {
	d := Description{Role: c.Role, Upto: c.Upto, Parts: []DescribedPart{}, Shed: []string{},
		Read: sourceStrings(c.Read), Prompt: c.Reduction.System, Traces: c.Traces}
	rows := map[string]int{}
	for i, r := range c.Reduction.Rows {
		rows[r.Fragment.ID] = i
	}
	for _, p := range c.Parts {
		var dp DescribedPart
		i, ok := rows[p.Slot]
		if ok {
			dp.Segment = c.Manifest.Segments[i]
			r := &c.Reduction.Rows[i]
			// The reduction's own values, as the prompt holds them.
			dp.Included, dp.Reason, dp.Bytes, dp.Digest = r.Included, r.Reason, r.Bytes, r.Digest
			if r.Shed {
				d.Shed = append(d.Shed, p.Slot)
			}
		}
		rank := p.Rank
		dp.ID, dp.Register, dp.Rank, dp.Sources = p.Slot, p.Register.String(), &rank, sourceStrings(p.Cites)
		d.Parts = append(d.Parts, dp)
	}
	slices.Sort(d.Shed)
	return d
}
