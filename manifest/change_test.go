package manifest

import (
	"slices"
	"testing"

	"github.com/promptloom/promptloom/digest"
)

func changeStrings(cs []Change, all bool) []string {
	var out []string
	for _, c := range cs {
		if all || c.What != "" {
			out = append(out, c.Kind+" "+c.String())
		}
	}
	return out
}

// The manifest leaves register and rank out for a binding fragment of rank 0
// with no sources; a pin that has them spelled out is the same fragment.
func TestCompareReadsOmittedDefaults(t *testing.T) {
	zero, two, d := 0, 2, digest.Of("d")
	old := []Segment{{ID: "a", Digest: d}, {ID: "b", Digest: d, Register: "craft", Rank: &two}}
	cur := []Segment{{ID: "a", Digest: d, Register: "binding", Rank: &zero}, {ID: "b", Digest: d, Register: "craft", Rank: &zero}}
	got := changeStrings(Compare(old, cur), true)
	if want := []string{"same a (same)", "same b (rank 2 → 0)"}; !slices.Equal(got, want) {
		t.Errorf("changes = %q, want %q", got, want)
	}
}

// A fragment's state changes are named as the report names states:
// included, shed (by a budget) or excluded; its Kind is the gate's flip.
func TestCompareNamesStates(t *testing.T) {
	d := digest.Of("d")
	old := []Segment{{ID: "a", Digest: d, Reason: "shed by budget: considered rank 1"}, {ID: "b", Digest: d, Included: true}}
	cur := []Segment{{ID: "a", Digest: d, Included: true}, {ID: "b", Digest: d, Reason: "requires tool t"}}
	got := changeStrings(Differing(old, cur), true)
	if want := []string{"included a (shed → included)", "excluded b (included → excluded)"}; !slices.Equal(got, want) {
		t.Errorf("changes = %q, want %q", got, want)
	}
}

// Every fragment of either side has one Change, in the new side's order,
// a removed one after the fragment it followed; a fragment out of order,
// or in another bucket, moved; ids that repeat pair by occurrence.
func TestCompareOrderAndPlace(t *testing.T) {
	d, e := digest.Of("d"), digest.Of("e")
	old := []Segment{{ID: "x", Digest: d}, {ID: "y", Digest: d}, {ID: "gone", Digest: d}, {ID: "z", Digest: d, Bucket: "before"}, {ID: "r", Digest: d}, {ID: "r", Digest: d}}
	cur := []Segment{{ID: "y", Digest: d}, {ID: "x", Digest: d}, {ID: "z", Digest: d, Bucket: "after"}, {ID: "r", Digest: e}, {ID: "new", Digest: d}}
	cs := Compare(old, cur)
	got := changeStrings(cs, true)
	// x and y swapped: one of them (the run's tie goes to x) moved.
	want := []string{"moved y (moved)", "removed gone (removed)", "same x (same)", "moved z (moved)", "changed r (digest)", "removed r (removed)", "added new (added)"}
	if !slices.Equal(got, want) {
		t.Errorf("changes = %q\nwant %q", got, want)
	}
	for _, c := range cs {
		if (c.InA >= 0 && old[c.InA].ID != c.ID) || (c.InB >= 0 && cur[c.InB].ID != c.ID) || (c.InA < 0 && c.InB < 0) {
			t.Errorf("%+v does not index its segments", c)
		}
	}
	if cs := Compare(nil, nil); len(cs) != 0 {
		t.Errorf("nothing compared: %v", cs)
	}
}
