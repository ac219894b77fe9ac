package explain

import (
	"fmt"
	"slices"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/harn/options"
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
				Message: fmt.Sprintf("%s is gated but stands before unconditional %s %s: each state of its gate is a different prefix, so the prompt cache misses for everything after it; %s",
					f.ID, g.ID, where, e.advice(f, g)),
			})
		}
	}
	slices.Reverse(gated)
	return append(out, gated...)
}

// The contributors whose gated fragments Lint advises on.
const (
	kindProfile  = "a profile fragment"
	kindGuidance = "tool guidance"
	kindPart     = "a _system_fragments item"
)

// gatedKinds names the contributor of each gated fragment of o.
func gatedKinds(o *options.Options) map[string]string {
	kinds := map[string]string{}
	for _, c := range []struct {
		frags []promptloom.Fragment
		kind  string
	}{{o.Primary, kindPart}, {o.Profile, kindProfile}, {o.Guidance, kindGuidance}} {
		for i := range c.frags {
			if c.frags[i].Gated() {
				kinds[c.frags[i].ID] = c.kind
			}
		}
	}
	return kinds
}

// advice says how to act on gated f standing before unconditional g.
// Profile fragments and tool guidance have no position key: they always
// stand in the before bucket, after the system list's before items and the
// primary block, so the fix is to move g ahead of them, not f behind it.
func (e *Explanation) advice(f, g *promptloom.Fragment) string {
	kind := e.kinds[f.ID]
	cross := f.Bucket == promptloom.Before && g.Bucket == promptloom.After
	switch {
	case (kind == kindProfile || kind == kindGuidance) && cross:
		return fmt.Sprintf("%s has no position key (it always follows the system list's before items and the primary block), so make %s a before fragment instead: drop its \"position\": \"after\" (in _system_fragments, \"bucket\": \"before\")", kind, g.ID)
	case kind == kindProfile:
		return fmt.Sprintf("list it after %s in context_profile.prompt_fragments", g.ID)
	case kind == kindPart && cross:
		return fmt.Sprintf("give it \"bucket\": \"after\" and list it after the unconditional items of _system_fragments, or make %s a before fragment", g.ID)
	case kind == kindPart:
		return fmt.Sprintf("list it after %s in _system_fragments, or give it \"bucket\": \"after\"", g.ID)
	}
	return "move it after the unconditional fragments"
}
