package promptloom

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/budget"

	"github.com/google/go-cmp/cmp"
)

// TestEmptyIDRefused: a fragment with an empty id is refused with an
// error naming its place and source, matching ErrEmptyID, wherever it
// stands and whatever it holds.
func TestEmptyIDRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		frags []Fragment
		index int
	}{
		{"alone", []Fragment{{Source: "caller", Body: "x"}}, 0},
		{"after others", []Fragment{frag("a", Before, "a"), {Source: "s", Bucket: After, Body: "y"}}, 1},
		{"empty body too", []Fragment{frag("a", Before, "a"), {Source: "s"}}, 1},
		{"gated off", []Fragment{{Source: "s", Body: "z", RequiresTools: []string{"absent"}}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Reduce(tc.frags, nil)
			if r != nil || !errors.Is(err, ErrEmptyID) {
				t.Fatalf("got %v, %v; want ErrEmptyID", r, err)
			}
			if want := fmt.Sprintf("fragment %d (source %q): ", tc.index, tc.frags[tc.index].Source); !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("error %q: want it to start %q", err, want)
			}
		})
	}
}

// TestRepeatedIDAccepted: Harn builds one fragment per declared tool, so a
// tool declared twice gives two tool:NAME.guidance fragments with each
// copy's guidance, and _system_fragments items may repeat an id. Both are
// reduced as given, in order.
func TestRepeatedIDAccepted(t *testing.T) {
	frags := []Fragment{
		ToolGuidance("todo", "Keep the list."),
		ToolGuidance("todo", "Close done items."),
		{ID: "p", Source: "primary", Body: "one"},
		{ID: "p", Source: "primary", Body: "two", Bucket: After},
	}
	r, err := Reduce(frags, &Options{Tools: []string{"todo"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "Keep the list.\n\nClose done items.\n\none\n\ntwo"; r.System != want {
		t.Errorf("system = %q, want %q", r.System, want)
	}
	var got []string
	for _, row := range r.Rows {
		got = append(got, row.Fragment.ID+" "+row.Reason)
	}
	want := []string{"tool:todo.guidance tool(s) present: todo", "tool:todo.guidance tool(s) present: todo", "p unconditional", "p unconditional"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

// TestShedFlag: only rows a budget excluded are Shed; a gated-off or empty
// row is not, whatever its reason says.
func TestShedFlag(t *testing.T) {
	b := &budget.Budget{Counter: budget.Bytes(), Total: 5}
	frags := []Fragment{
		frag("keep", Before, "short"),
		{ID: "gone", Source: "s", Body: "sheddable text", Register: budget.Craft},
		{ID: "gated", Source: "s", Body: "x", RequiresTools: []string{"t"}, Register: budget.Craft},
		frag("empty", Before, " "),
	}
	r, err := Reduce(frags, &Options{Budget: b})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for i := range r.Rows {
		got[r.Rows[i].Fragment.ID] = r.Rows[i].Shed
	}
	want := map[string]bool{"keep": false, "gone": true, "gated": false, "empty": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("shed (-want +got):\n%s", diff)
	}
}
