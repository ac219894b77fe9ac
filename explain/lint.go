package explain

import (
	"fmt"
	"slices"

	"github.com/promptloom/promptloom/fragment"
	"github.com/promptloom/promptloom/gating"
)

// Warning is one finding of Lint.
type Warning struct {
	// ID is the gated fragment; Before the first unconditional fragment
	// that stands after it in the same bucket.
	ID      string `json:"id"`
	Before  string `json:"before"`
	Bucket  string `json:"bucket"`
	Message string `json:"message"`
}

// Lint warns about gated fragments (tool- or capability-dependent) that
// stand before an unconditional fragment of the same bucket. Every on/off
// state of a gate is a different prompt prefix, so such a fragment splits
// the provider's prefix cache for everything behind it; placed after the
// unconditional fragments, it would cost only its own bytes.
func Lint(e *Explanation) []Warning {
	r := e.Reduction
	if r == nil {
		return nil
	}
	// One pass from the end, remembering per bucket the first unconditional
	// fragment still to come.
	var next [fragment.After + 1]*fragment.Fragment
	var out []Warning
	for i := len(r.Rows) - 1; i >= 0; i-- {
		f := r.Rows[i].Fragment
		if r.Rows[i].Body == "" {
			continue
		}
		if !gating.Gated(f) {
			next[f.Bucket] = f
			continue
		}
		if g := next[f.Bucket]; g != nil {
			out = append(out, Warning{
				ID: f.ID, Before: g.ID, Bucket: f.Bucket.String(),
				Message: fmt.Sprintf("%s is gated but stands before unconditional %s in the %s bucket: each state of its gate is a different prefix, so the prompt cache misses for everything after it; move it after the unconditional fragments",
					f.ID, g.ID, f.Bucket),
			})
		}
	}
	slices.Reverse(out)
	return out
}
