package manifest

import (
	"strings"
	"testing"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/internal/fit"
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
		b := &budget.Budget{Counter: budget.Bytes(), Total: total}
		r, err := promptloom.Reduce(frags, &promptloom.Options{Budget: b})
		if err != nil {
			continue // binding alone does not fit
		}
		m := New(r, "")
		for i := range r.Rows {
			if got, want := m.Segments[i].State() == "shed", r.Rows[i].Shed; got != want {
				t.Errorf("total %d, %s: Segment.Shed %v, Row.Shed %v (reason %q)", total, r.Rows[i].Fragment.ID, got, want, r.Rows[i].Reason)
			}
			if r.Rows[i].Shed {
				shed++
			}
		}
	}
	if shed == 0 {
		t.Error("nothing shed at any total; the fixture no longer tests shedding")
	}
	for _, s := range []Segment{{Reason: "shed"}, {Reason: "not shed by budget: x"}, {Included: true, Reason: fit.ShedPrefix + "craft rank 1"}} {
		if s.State() == "shed" {
			t.Errorf("%+v reads as shed", s)
		}
	}
}

// An unlimited budget counts and records no total: the manifest of a
// prompt counted in bytes without a limit has no budget_total, so its
// content hash is the same on every GOARCH (it once held math.MaxInt). The
// hash below is this code's own, checked by CI on amd64 and on 386.
func TestUnlimitedBudgetHashesAlikeEverywhere(t *testing.T) {
	frags := []promptloom.Fragment{promptloom.Primary("You are careful."), promptloom.SystemItem(0, "", "Answer briefly.", promptloom.After)}
	b := &budget.Budget{Counter: budget.Bytes(), Unlimited: true}
	r, err := promptloom.Reduce(frags, &promptloom.Options{Budget: b})
	if err != nil {
		t.Fatal(err)
	}
	m := New(r, "agent")
	raw, err := m.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "budget_total") || !strings.Contains(string(raw), `"system_prompt_tokens":33`) {
		t.Fatalf("manifest: %s", raw)
	}
	const want = "blake3:92ecc098310eea142e896de4b745727fb96dbc30b6dcc117bde4e75840682d92"
	if got, _ := m.ContentHash(); got.String() != want {
		t.Errorf("content hash %s, want %s", got, want)
	}
}
