package promptloom

import (
	"errors"
	"fmt"
	"testing"

	"github.com/promptloom/promptloom/budget"

	"github.com/google/go-cmp/cmp"
	"github.com/tiktoken-go/tokenizer"
)

func reg(id string, r budget.Register, rank int, body string) Fragment {
	f := frag(id, Before, body)
	f.Register, f.Rank = r, rank
	return f
}

// shedFixture: ten bytes a body, separators two bytes.
var shedFixture = []Fragment{
	reg("rule", budget.Binding, 0, "rule-aaaa!"),
	reg("c1", budget.Considered, 1, "c1-aaaaaa!"),
	reg("craft", budget.Craft, 0, "craft-aaa!"),
	reg("c0-early", budget.Considered, 0, "c0e-aaaaa!"),
	reg("gen", budget.Generated, 5, "gen-aaaaa!"),
	reg("c0-late", budget.Considered, 0, "c0l-aaaaa!"),
	reg("rule2", budget.Binding, 9, "rule2-aaa!"),
}

func TestBudgetShedsInOrder(t *testing.T) {
	all := len(shedFixture)*10 + (len(shedFixture)-1)*2 // 82 bytes
	// Each step down sheds exactly one more: considered (rank 0, later
	// first; then rank 1), then generated, then craft. Binding never goes.
	order := []string{"c0-late", "c0-early", "c1", "gen", "craft"}
	for shed := 0; shed <= len(order); shed++ {
		total := all - 12*shed
		b := &budget.Budget{Counter: budget.Bytes(), Total: total}
		r, err := Reduce(shedFixture, &Options{Budget: b})
		if err != nil {
			t.Fatalf("total %d: %v", total, err)
		}
		var got []string
		for _, row := range r.Rows {
			if !row.Included {
				got = append(got, row.Fragment.ID)
				if want := fmt.Sprintf("shed by budget: %s rank %d", row.Fragment.Register, row.Fragment.Rank); row.Reason != want {
					t.Errorf("reason %q, want %q", row.Reason, want)
				}
			}
		}
		want := append([]string(nil), order[:shed]...)
		if diff := cmp.Diff(sortedByWire(want), got); diff != "" {
			t.Errorf("total %d: shed (-want +got):\n%s", total, diff)
		}
		if r.Fit.Tokens != len(r.System) || r.Fit.Tokens > total || r.Fit.Shed != shed {
			t.Errorf("total %d: fit %+v for %d bytes", total, r.Fit, len(r.System))
		}
	}
	// Nothing left to shed but the rules: 22 bytes of binding text.
	b := &budget.Budget{Counter: budget.Bytes(), Total: 21}
	_, err := Reduce(shedFixture, &Options{Budget: b})
	var ex *budget.ExceededError
	if !errors.Is(err, budget.ErrExceeded) || !errors.As(err, &ex) || ex.Count != 22 || ex.Total != 21 || ex.Shed != 5 {
		t.Errorf("impossible budget: %v (%+v)", err, ex)
	}
}

func sortedByWire(ids []string) []string {
	var out []string
	for _, f := range shedFixture {
		for _, id := range ids {
			if f.ID == id {
				out = append(out, id)
			}
		}
	}
	return out
}

func TestGatedFragmentsAreNotCountedOrShed(t *testing.T) {
	gated := reg("gated", budget.Considered, 0, "needs a tool that is not there")
	gated.RequiresTools = []string{"absent"}
	frags := []Fragment{reg("rule", budget.Binding, 0, "rule"), gated, reg("empty", budget.Considered, 0, " ")}
	b := &budget.Budget{Counter: budget.Bytes(), Total: 4}
	r, err := Reduce(frags, &Options{Budget: b})
	if err != nil {
		t.Fatal(err)
	}
	if r.Rows[1].Reason != "requires tool `absent` (not available)" || r.Rows[1].Tokens != 0 || r.Fit.Shed != 0 {
		t.Errorf("a gated row was counted or shed: %+v", r.Rows[1])
	}
}

// The whole prompt's exact count, not the sum of the rows, is held to the
// total; and both match tiktoken-go's own counts.
func TestWholeCountIsHeldToTheTotal(t *testing.T) {
	codec, _ := tokenizer.Get(tokenizer.O200kBase)
	counter, _ := budget.NewCounter("o200k_base")
	frags := []Fragment{
		reg("a", budget.Binding, 0, "Keep the todo list current"),
		reg("b", budget.Considered, 0, "The repository is a Go module"),
		reg("c", budget.Considered, 1, "Tests run with go test"),
	}
	free := &budget.Budget{Counter: counter, Total: 1 << 30}
	r, err := Reduce(frags, &Options{Budget: free})
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, row := range r.Rows {
		want, _ := codec.Count(row.Body)
		if row.Tokens != want {
			t.Errorf("%s: %d tokens, tiktoken %d", row.Fragment.ID, row.Tokens, want)
		}
		sum += row.Tokens
	}
	whole, _ := codec.Count(r.System)
	if r.Fit.Tokens != whole || whole <= sum {
		t.Fatalf("whole %d (tiktoken %d), sum of rows %d: the separators should cost tokens", r.Fit.Tokens, whole, sum)
	}
	// A total the rows' sum would meet but the whole prompt does not.
	tight := &budget.Budget{Counter: counter, Total: sum}
	r, err = Reduce(frags, &Options{Budget: tight})
	if err != nil {
		t.Fatal(err)
	}
	if r.Fit.Shed == 0 {
		t.Error("the sum of the rows was held to the total instead of the whole prompt")
	}
	if got, _ := codec.Count(r.System); got != r.Fit.Tokens || got > sum {
		t.Errorf("after shedding: %d tokens (tiktoken %d), total %d", r.Fit.Tokens, got, sum)
	}
}

func TestReplacementUnderBudget(t *testing.T) {
	b := &budget.Budget{Counter: budget.Bytes(), Total: 3}
	if _, err := Reduce([]Fragment{Replacement("four")}, &Options{Budget: b}); !errors.Is(err, budget.ErrExceeded) {
		t.Errorf("a replacement root over budget: %v", err)
	}
	bad := &budget.Budget{Counter: budget.Bytes(), Total: 3, ShedOrder: []budget.Register{budget.Binding}}
	if _, err := Reduce(shedFixture, &Options{Budget: bad}); !errors.Is(err, budget.ErrInvalid) {
		t.Errorf("binding in the shed order: %v", err)
	}
}
