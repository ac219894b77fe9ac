package manifest

import (
	"testing"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/budget"
)

// TestSegmentShedAgreesWithRow: Segment.Shed, read from the reason, says
// what reducer.Row.Shed says, row by row: shed rows, a gated-out row whose
// reason is not a budget's, included rows; and a segment read from elsewhere
// whose reason only mentions shedding is not shed.
func TestSegmentShedAgreesWithRow(t *testing.T) {
	frag := func(id string, r budget.Register, rank int) promptloom.Fragment {
		f := promptloom.Primary(id + "-aaaa")
		f.ID, f.Register, f.Rank = id, r, rank
		return f
	}
	frags := []promptloom.Fragment{
		frag("rule", budget.Binding, 0),
		frag("c0", budget.Considered, 0),
		frag("c1", budget.Considered, 1),
		frag("gen", budget.Generated, 2),
		promptloom.ToolGuidance("absent", "never shown"),
	}
	shed := 0
	for total := 0; total <= 60; total += 6 {
		b, _ := budget.New(budget.Bytes(), total)
		r, err := promptloom.Reduce(frags, promptloom.Active{}, promptloom.WithBudget(b))
		if err != nil {
			continue // binding alone does not fit
		}
		m := New(r, "")
		for i := range r.Rows {
			if got, want := m.Segments[i].Shed(), r.Rows[i].Shed; got != want {
				t.Errorf("total %d, %s: Segment.Shed %v, Row.Shed %v (reason %q)", total, r.Rows[i].ID(), got, want, r.Rows[i].Reason)
			}
			if r.Rows[i].Shed {
				shed++
			}
		}
	}
	if shed == 0 {
		t.Error("nothing shed at any total; the fixture no longer tests shedding")
	}
	for _, s := range []Segment{{Reason: "shed"}, {Reason: "not shed by budget: x"}, {Included: true, Reason: budget.ShedPrefix + "craft rank 1"}} {
		if s.Shed() {
			t.Errorf("%+v reads as shed", s)
		}
	}
}
