package journal

import (
	"strconv"
	"strings"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/manifest"
)

// FragmentChange is one fragment that differs between two calls.
type FragmentChange struct {
	ID   string
	What string // "rank 2 → 0", "shed → included", "digest", "added", "removed", ...
}

// String is the change as the replay and the report print it: "ID (what)".
func (c FragmentChange) String() string { return c.ID + " (" + c.What + ")" }

// ChangedFragments lists, in the new call's order, the fragments whose
// digest, inclusion, register or rank differ, then those the old call had
// and the new one lacks.
func ChangedFragments(old, cur []manifest.Segment) []FragmentChange {
	byID := map[string]manifest.Segment{}
	for _, s := range old {
		byID[s.ID] = s
	}
	var out []FragmentChange
	for _, s := range cur {
		o, ok := byID[s.ID]
		delete(byID, s.ID)
		var what []string
		switch {
		case !ok:
			what = append(what, "added")
		default:
			if o.Digest != s.Digest {
				what = append(what, "digest")
			}
			if a, b := o.State(), s.State(); a != b {
				what = append(what, a+" → "+b)
			}
			if register(o) != register(s) {
				what = append(what, "register "+register(o)+" → "+register(s))
			}
			if rank(o) != rank(s) {
				what = append(what, "rank "+strconv.Itoa(rank(o))+" → "+strconv.Itoa(rank(s)))
			}
		}
		if len(what) > 0 {
			out = append(out, FragmentChange{ID: s.ID, What: strings.Join(what, ", ")})
		}
	}
	for _, s := range old {
		if _, gone := byID[s.ID]; gone {
			out = append(out, FragmentChange{ID: s.ID, What: "removed"})
		}
	}
	return out
}

// register and rank read a segment's, which the manifest leaves out for a
// binding fragment of rank 0 with no sources.
func register(s manifest.Segment) string {
	if s.Register == "" {
		return budget.Binding.String()
	}
	return s.Register
}

func rank(s manifest.Segment) int {
	if s.Rank == nil {
		return 0
	}
	return *s.Rank
}
