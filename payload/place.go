package payload

import (
	"fmt"
	"slices"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/manifest"
)

// block is one Anthropic system text block.
type block struct {
	Type         string        `json:"type"`
	Text         string        `json:"text"`
	CacheControl *CacheControl `json:"cache_control,omitempty"`
}

// CacheControl marks a cache breakpoint: the prefix up to the end of its
// block is cached.
type CacheControl struct {
	Type string `json:"type"`
	// TTL is the entry's lifetime ("5m", "1h"; "" for the provider's default).
	TTL string `json:"ttl,omitempty"`
}

// The kinds of breakpoint, in the order Field prefers them.
const (
	// kindUnconditional ends the longest run of unconditional, binding
	// before fragments: the same bytes in every call, whatever is active
	// and whatever the budget.
	kindUnconditional = "unconditional-prefix"
	// kindStable ends the fragments unchanged since the previous manifest.
	kindStable = "stable-prefix"
	// kindGate stands just before a gated fragment inside the stable
	// prefix: calls with that gate in another state share the bytes before
	// it.
	kindGate = "gate-boundary"
)

// Breakpoint is one cache_control placement and why it is there.
type Breakpoint struct {
	// Block is the index of the system block that carries cache_control.
	Block int `json:"block"`
	// After is the fragment the cached prefix ends with; Offset is where
	// the prefix ends in the system prompt (the separator after After
	// starts the next block).
	After  string `json:"after"`
	Offset int    `json:"offset"`
	// Kind is unconditional-prefix (the end of the longest run of
	// unconditional before fragments: the same bytes in every call),
	// stable-prefix (the end of the fragments unchanged since the previous
	// manifest) or gate-boundary (just before a gated fragment inside the
	// stable prefix).
	Kind   string `json:"kind"`
	Reason string `json:"reason"`
}

// Placement is where Field cut a system prompt into Anthropic system
// blocks, and why. The blocks concatenate to the system prompt, byte for
// byte; the separator between fragments starts a block rather than ending
// one, so a cached prefix does not depend on whether anything follows it.
type Placement struct {
	Breakpoints []Breakpoint `json:"breakpoints"`
	// Dropped are candidates left out by the limit, best first.
	Dropped []Breakpoint `json:"dropped,omitempty"`
	// Warnings name the gated fragments, and those a budget may shed, that
	// stand before a breakpoint: each state of a gate, and each choice of
	// what to shed, is a different prefix, so the cache at that breakpoint
	// splits.
	Warnings []promptloom.Warning `json:"warnings,omitempty"`
	// None says why there is no breakpoint, when there is none.
	None string `json:"none,omitempty"`

	blocks []block
}

// PlaceOptions configure Field. The zero value (or nil) places
// up to Anthropic's limit of four breakpoints, with no previous call.
type PlaceOptions struct {
	// Since is the manifest of a previous call: boundaries up to which the
	// included fragments (ids, digests, bytes) are the same in both calls
	// are stable, and later breakpoints are placed there.
	Since *manifest.Manifest
	// MaxBreakpoints caps the breakpoints placed in the system field, for
	// a caller who places some in tools or messages: 1 to 4; 0 is
	// Anthropic's limit of 4, a negative number places none.
	MaxBreakpoints int
}

// limit is the number of breakpoints o allows.
func (o *PlaceOptions) limit() int {
	switch {
	case o.MaxBreakpoints < 0:
		return 0
	case o.MaxBreakpoints == 0:
		return anthropicMaxBreakpoints
	}
	return min(o.MaxBreakpoints, anthropicMaxBreakpoints)
}

// placement cuts a reduction's system prompt into Anthropic system blocks with
// cache_control breakpoints at fragment boundaries: the first after the
// longest run of unconditional before fragments from the start (a fragment
// that is gated, in the after bucket, or excluded with a body ends the run);
// with Since, one at the end of the fragments unchanged since the previous
// manifest and, within that, one before each gated fragment, latest first;
// at most o.MaxBreakpoints. A fragment a budget may shed (a register other
// than binding) ends the run too. No block is empty: an absent or empty
// prompt has no blocks, and no breakpoint ends at byte 0.
func placement(r *promptloom.Reduction, o *PlaceOptions) *Placement {
	if o == nil {
		o = &PlaceOptions{}
	}
	p := &Placement{blocks: []block{}, Breakpoints: []Breakpoint{}}
	if !r.Present {
		p.None = "the prompt is absent"
		return p
	}
	if r.System == "" {
		p.None = "the prompt is empty: no block, and nothing to cache"
		return p
	}
	cands := candidates(r, o.Since)
	if len(cands) == 0 {
		p.None = "no fragment boundary is stable: the first fragment is gated, in the after bucket, or sheddable by a budget"
		if o.Since != nil {
			p.None += ", and no fragment is unchanged since the previous manifest"
		}
		return place(r, p)
	}
	keep := min(len(cands), o.limit())
	p.Breakpoints, p.Dropped = cands[:keep], cands[keep:]
	if keep == 0 {
		p.None = "the limit is 0 breakpoints"
	}
	slices.SortFunc(p.Breakpoints, func(a, b Breakpoint) int { return a.Offset - b.Offset })
	place(r, p)
	p.Warnings = warnings(r, p.Breakpoints)
	return p
}

// place cuts the prompt at the breakpoints' offsets into blocks.
func place(r *promptloom.Reduction, p *Placement) *Placement {
	from := 0
	for i := range p.Breakpoints {
		bp := &p.Breakpoints[i]
		bp.Block = len(p.blocks)
		p.blocks = append(p.blocks, block{Type: "text", Text: r.System[from:bp.Offset],
			CacheControl: &CacheControl{Type: "ephemeral"}})
		from = bp.Offset
	}
	if from < len(r.System) {
		p.blocks = append(p.blocks, block{Type: "text", Text: r.System[from:]})
	}
	return p
}

// end is where row i's bytes end in the prompt.
func end(row *promptloom.Row) int { return row.Offset + row.Bytes }

// candidates returns the breakpoints worth placing, best first, at most
// one per offset.
func candidates(r *promptloom.Reduction, since *manifest.Manifest) []Breakpoint {
	var out []Breakpoint
	seen := map[int]bool{}
	add := func(row *promptloom.Row, kind, reason string) {
		// A breakpoint at byte 0 would end an empty block, which the
		// provider refuses (and which caches nothing).
		if o := end(row); o > 0 && !seen[o] {
			seen[o] = true
			out = append(out, Breakpoint{After: row.Fragment.ID, Offset: o, Kind: kind, Reason: reason})
		}
	}
	first := -1
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.Body == "" {
			continue // empty in every call: no bytes, no split
		}
		// Only what no tool, capability, budget or binding can change: a
		// gated fragment, an after one, one excluded with a body, one a
		// budget may shed (any register but binding, whether or not this
		// call had a budget), or one rendered from a template that reads
		// bindings (its bytes are the call's) ends the run.
		if !row.Included || row.Fragment.Gated() || row.Fragment.Bucket != promptloom.Before ||
			row.Fragment.Register != budget.Binding || row.Fragment.Template != nil && len(row.Fragment.Template.Bindings) > 0 {
			break
		}
		first = i
	}
	if first >= 0 {
		add(&r.Rows[first], kindUnconditional,
			"end of the longest run of unconditional, binding before fragments: the same bytes in every call, whatever tools, capabilities, budget and bindings are active")
	}
	if since == nil {
		return out
	}
	stable := stableRows(r, since)
	if stable < 0 {
		return out
	}
	add(&r.Rows[stable], kindStable,
		fmt.Sprintf("end of the fragments unchanged since the previous manifest (same ids, digests and bytes): the %d bytes before it are what that call cached", end(&r.Rows[stable])))
	// Gate boundaries inside the stable prefix, latest first.
	for j := stable; j > first && j >= 0; j-- {
		row := &r.Rows[j]
		if row.Body == "" || !row.Fragment.Gated() {
			continue
		}
		prev := -1
		for i := j - 1; i >= 0; i-- {
			if r.Rows[i].Included {
				prev = i
				break
			}
		}
		if prev > first {
			add(&r.Rows[prev], kindGate,
				fmt.Sprintf("before gated %s: calls with its gate in another state share the bytes up to here", row.Fragment.ID))
		}
	}
	return out
}

// stableRows returns the last row of the longest run of included rows,
// from the start, that match the old manifest's included segments by id,
// digest and bytes; -1 when the first differs.
func stableRows(r *promptloom.Reduction, old *manifest.Manifest) int {
	if old.Root == manifest.RootTransformed {
		return -1 // an egress manifest's rows are not fragments
	}
	last, k := -1, 0
	for i := range r.Rows {
		row := &r.Rows[i]
		if !row.Included {
			continue
		}
		for k < len(old.Segments) && !old.Segments[k].Included {
			k++
		}
		if k == len(old.Segments) {
			break
		}
		s := &old.Segments[k]
		if s.ID != row.Fragment.ID || s.Bytes != row.Bytes || row.Digest != s.Digest {
			break
		}
		last, k = i, k+1
	}
	return last
}

// warnings names each gated fragment (included or gated out) and each a
// budget may shed that stands before a breakpoint, with the first such
// breakpoint.
func warnings(r *promptloom.Reduction, bps []Breakpoint) []promptloom.Warning {
	var out []promptloom.Warning
	// Row positions of the breakpoints: a row stands before breakpoint b
	// when it comes before the row b ends.
	at := make([]int, len(bps))
	for b := range bps {
		for i := range r.Rows {
			if r.Rows[i].Included && end(&r.Rows[i]) == bps[b].Offset && r.Rows[i].Fragment.ID == bps[b].After {
				at[b] = i
			}
		}
	}
	for i := range r.Rows {
		row := &r.Rows[i]
		gated, sheddable := row.Fragment.Gated(), row.Fragment.Register != budget.Binding
		if row.Body == "" || !gated && !sheddable {
			continue
		}
		for b := range bps {
			if i > at[b] {
				continue
			}
			msg := fmt.Sprintf("%s is gated and stands before cache breakpoint %d (after %s, byte %d): each state of its gate is a different prefix, so the cache at that breakpoint splits; move it after the unconditional fragments",
				row.Fragment.ID, b+1, bps[b].After, bps[b].Offset)
			if !gated {
				msg = fmt.Sprintf("%s may be shed by a budget (register %s) and stands before cache breakpoint %d (after %s, byte %d): a call that sheds it has a different prefix, so the cache at that breakpoint splits; move it after the binding fragments",
					row.Fragment.ID, row.Fragment.Register, b+1, bps[b].After, bps[b].Offset)
			}
			out = append(out, promptloom.Warning{ID: row.Fragment.ID, Message: msg})
			break
		}
	}
	return out
}
