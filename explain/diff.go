package explain

import (
	"strconv"
	"strings"

	"github.com/promptloom/promptloom/internal/seq"
	"github.com/promptloom/promptloom/manifest"
)

// FragmentDelta is one fragment's change (manifest.Compare's, of the
// rows' segments) with the rows it compares; A or B is nil when the
// fragment is only on the other side.
type FragmentDelta struct {
	// Change is the fragment's id and what became of it: Kind is added or
	// removed (on one side only); included or excluded (its gate flipped:
	// both reasons are in the rows); changed (its body: both digests);
	// moved (its bytes kept, not its place); same.
	manifest.Change
	A *Row `json:"a"`
	B *Row `json:"b"`
	// Bindings and TemplateChanged say, for a changed fragment rendered
	// from a template on both sides, what behind it changed: the binding
	// paths whose values differ (and, when the template is the same, those
	// one side read and the other did not), sorted, and whether the
	// template or a file it included differs.
	Bindings        []string `json:"bindings,omitempty"`
	TemplateChanged bool     `json:"template_changed,omitempty"`
}

// Delta is what changes between two prompts, fragment by fragment and byte
// by byte, and what the change costs the provider's prompt cache.
type Delta struct {
	A         *Explanation    `json:"a"`
	B         *Explanation    `json:"b"`
	Fragments []FragmentDelta `json:"fragments"`
	// CommonPrefixBytes is the length of the longest common byte prefix of
	// the two prompts: what a prefix cache can still serve.
	CommonPrefixBytes int `json:"common_prefix_bytes"`
	// FirstChangedFragment is the id of the fragment in which the prompts
	// first differ; nil when they are identical.
	FirstChangedFragment *string `json:"first_changed_fragment"`
	// ResendBytes is how many bytes of B come after the common prefix and
	// must be sent (and cached) again.
	ResendBytes int  `json:"resend_bytes"`
	Identical   bool `json:"identical"`
	// Unified is a unified diff of the two prompts, line by line.
	Unified string `json:"unified"`
	// hunks is the same diff as data, with the characters that changed
	// inside each changed line.
	hunks []hunk
}

// Diff compares two explanations. aName and bName label the sides of the
// unified diff.
func Diff(a, b *Explanation, aName, bName string) *Delta {
	d := &Delta{A: a, B: b}
	at, bt := a.System, b.System
	d.Identical = at == bt && a.absent() == b.absent()
	d.CommonPrefixBytes = seq.CommonPrefix(at, bt)
	d.ResendBytes = len(bt) - d.CommonPrefixBytes
	d.Fragments = matchRows(a.Fragments, b.Fragments)
	explainInputs(d.Fragments)
	if !d.Identical {
		d.FirstChangedFragment = d.firstChanged()
	}
	d.hunks = lineHunks(at, bt, 3)
	d.Unified = renderUnified(d.hunks, aName, bName)
	return d
}

// firstChanged names the fragment in which the prompts first differ: the
// included row that covers the first differing byte, on the side where that
// row actually changed (an added fragment shows on B, a removed one on A).
func (d *Delta) firstChanged() *string {
	p := d.CommonPrefixBytes
	change := map[string]string{}
	for _, f := range d.Fragments {
		change[f.ID] = f.Kind
	}
	var fallback *string
	for _, e := range []*Explanation{d.A, d.B} {
		r := rowAt(e, p)
		if r == nil {
			continue
		}
		id := r.ID
		if c := change[id]; c != manifest.Same {
			return &id
		}
		if fallback == nil {
			fallback = &id
		}
	}
	return fallback
}

// rowAt returns the included row whose bytes hold offset p, or the row
// after the separator p falls in; nil when p is past the end.
func rowAt(e *Explanation, p int) *Row {
	for i := range e.Fragments {
		r := &e.Fragments[i]
		if r.Included && p < *r.Offset+r.Bytes {
			return r
		}
	}
	return nil
}

// matchRows pairs rows by id and classifies each pair (manifest.Compare).
// The result follows B's wire order, each removed row placed after the row
// it followed in A.
func matchRows(a, b []Row) []FragmentDelta {
	changes := manifest.Compare(segments(a), segments(b))
	out := make([]FragmentDelta, len(changes))
	for i, c := range changes {
		out[i].Change = c
		if c.InA >= 0 {
			out[i].A = &a[c.InA]
		}
		if c.InB >= 0 {
			out[i].B = &b[c.InB]
		}
	}
	return out
}

// segments are the rows' segments, copied.
func segments(rows []Row) []manifest.Segment {
	out := make([]manifest.Segment, len(rows))
	for i := range rows {
		out[i] = *rows[i].segment()
	}
	return out
}

// Counts tallies the deltas by change, for summaries.
func (d *Delta) counts() map[string]int {
	out := map[string]int{}
	for _, f := range d.Fragments {
		out[f.Kind]++
	}
	return out
}

// summary is one line: "3 same, 1 excluded".
func (d *Delta) summary() string {
	order := []string{manifest.Same, manifest.Changed, manifest.Included, manifest.Excluded, manifest.Added, manifest.Removed, manifest.Moved}
	counts := d.counts()
	var parts []string
	for _, c := range order {
		if counts[c] > 0 {
			parts = append(parts, strconv.Itoa(counts[c])+" "+string(c))
		}
	}
	if len(parts) == 0 {
		return "no fragments"
	}
	return strings.Join(parts, ", ")
}
