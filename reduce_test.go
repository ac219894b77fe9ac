package promptloom

import (
	"errors"
	"testing"

	"github.com/promptloom/promptloom/digest"

	"github.com/google/go-cmp/cmp"
)

func frag(id string, bucket Bucket, body string) Fragment {
	return Fragment{ID: id, Source: id, Bucket: bucket, Body: body}
}

type row struct {
	ID       string
	Included bool
	Reason   string
	Bytes    int
	Offset   int
}

func rows(r *Reduction) []row {
	var out []row
	for _, x := range r.Rows {
		out = append(out, row{x.Fragment.ID, x.Included, x.Reason, x.Bytes, x.Offset})
	}
	return out
}

func TestWireOrderAndOffsets(t *testing.T) {
	gated := frag("gated", After, "needs git")
	gated.RequiresCaps = []string{"vcs.git"}
	frags := []Fragment{
		frag("parts", Before, "parts"),
		frag("appendix", After, "  appendix\n"),
		gated,
		frag("blank", Before, "\u00a0\t"),
		frag("base", Before, "base"),
	}
	r, err := Reduce(frags, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "parts\n\nbase\n\nappendix"; r.System != want || !r.Present {
		t.Errorf("system = %q (present %v), want %q", r.System, r.Present, want)
	}
	want := []row{
		{"parts", true, "unconditional", 5, 0},
		{"blank", false, "empty body", 0, -1},
		{"base", true, "unconditional", 4, 7},
		{"appendix", true, "unconditional", 8, 13},
		{"gated", false, "requires capability `vcs.git` (not set)", 0, -1},
	}
	if diff := cmp.Diff(want, rows(r)); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if r.Rows[4].Digest != digest.Of("needs git") {
		t.Error("an excluded row has no digest of its body")
	}
	if r.WholeDigest != digest.Of(r.System) {
		t.Error("whole digest is not the digest of the system prompt")
	}
}

func TestNothingIncludedIsAbsent(t *testing.T) {
	r, err := Reduce([]Fragment{frag("a", Before, " ")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Present || r.System != "" || r.WholeDigest != digest.String("") || r.Rows[0].Included {
		t.Errorf("reduction of nothing: %+v", r)
	}
}

func TestReplacementRoot(t *testing.T) {
	r, err := Reduce([]Fragment{Replacement("  kept \n")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.System != "  kept \n" || len(r.Rows) != 1 || !r.Rows[0].Fragment.Verbatim || r.Rows[0].Reason != reasonReplacement || r.Rows[0].Bytes != 8 {
		t.Errorf("replacement: %+v", r)
	}
	_, err = Reduce([]Fragment{Replacement("x"), frag("b", Before, "b")}, nil)
	if !errors.Is(err, ErrReplacementNotAlone) {
		t.Errorf("replacement beside another fragment: %v", err)
	}
}

func TestDeterministic(t *testing.T) {
	frags := []Fragment{frag("a", After, "x"), frag("b", Before, "y"), ToolGuidance("t", "z")}
	active := &Options{Tools: []string{"t"}}
	first, _ := Reduce(frags, active)
	for range 20 {
		again, _ := Reduce(frags, active)
		if again.System != first.System || again.WholeDigest != first.WholeDigest {
			t.Fatal("two reductions of the same input differ")
		}
	}
}
