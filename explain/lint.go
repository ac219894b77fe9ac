package explain

import (
	"fmt"
	"slices"

	"github.com/promptloom/promptloom"
)

// Lint returns, first, the options' warnings (Path set): input Harn accepts, so it is
// not refused, but that is likely a mistake (a key Harn ignores, an item it
// skips, a number used as text). Then it warns about gated fragments (tool-
// or capability-dependent) that stand before an unconditional fragment in
// the prompt, in either bucket: every "after" fragment follows every
// "before" one, so a gated "before" fragment shifts the offset of the
// "after" fragments too. Every on/off state of a gate is a different prompt
// prefix, so such a fragment splits the provider's prefix cache for
// everything behind it; placed after the unconditional fragments, it would
// cost only its own bytes. These warnings have the fragment's ID.
func Lint(e *Explanation) []promptloom.Warning {
	var out []promptloom.Warning
	for _, w := range e.warnings {
		out = append(out, promptloom.Warning{Path: w.Path, Message: "options: " + w.String()})
	}
	r := e.Reduction
	if r == nil {
		return out
	}
	// One pass from the end (rows are in prompt order: before, then
	// after), remembering the first unconditional fragment still to come.
	var next *promptloom.Fragment
	var gated []promptloom.Warning
	for i := len(r.Rows) - 1; i >= 0; i-- {
		f := r.Rows[i].Fragment
		if r.Rows[i].Body == "" {
			continue
		}
		if !f.Gated() {
			next = f
			continue
		}
		if g := next; g != nil {
			where := fmt.Sprintf("in the %s bucket", f.Bucket)
			if g.Bucket != f.Bucket {
				where = fmt.Sprintf("(%s bucket, before every %s fragment)", f.Bucket, g.Bucket)
			}
			gated = append(gated, promptloom.Warning{
				ID: f.ID,
				Message: fmt.Sprintf("%s is gated but stands before unconditional %s %s: each state of its gate is a different prefix, so the prompt cache misses for everything after it; move it after the unconditional fragments",
					f.ID, g.ID, where),
			})
		}
	}
	slices.Reverse(gated)
	return append(out, gated...)
}
