package provenance

import (
	"encoding/json"
	"testing"

	"github.com/promptloom/promptloom/manifest"

	"github.com/google/go-cmp/cmp"
)

// TestDescribedPartJSON: a DescribedPart is its fragment's manifest row, but
// its JSON is the part's own view (slot, register, rank, cites, included,
// reason, bytes, digest; register and rank even for a binding rank 0), and
// it reads back with those fields.
func TestDescribedPartJSON(t *testing.T) {
	f := newFixture(t)
	c, err := Assemble(ctx, "uk", assembler("uk"), f.grant("uk", f.head), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := c
	if len(d.Parts) == 0 || d.Parts[0].Register != "binding" || *d.Parts[0].Rank != 0 {
		t.Fatalf("the fixture's first part is not binding rank 0: %+v", d.Parts)
	}
	segs := map[string]manifest.Segment{}
	for _, s := range c.Manifest.Segments {
		segs[s.ID] = s
	}
	for i, p := range d.Parts {
		if seg := segs[p.ID]; seg.Producer == "" || seg.Producer != p.Producer || seg.Digest != p.Digest {
			t.Errorf("part %s is not its manifest row %+v", p.ID, seg)
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		rank := *p.Rank
		cites, _ := json.Marshal(p.Sources)
		reason, _ := json.Marshal(p.Reason)
		id, _ := json.Marshal(p.ID)
		incl, _ := json.Marshal(p.Included)
		want := `{"slot":` + string(id) + `,"register":"` + p.Register + `","rank":` + itoa(rank) +
			`,"cites":` + string(cites) + `,"included":` + string(incl) + `,"reason":` + string(reason) +
			`,"bytes":` + itoa(p.Bytes) + `,"digest":"` + p.Digest.String() + `"}`
		if string(b) != want {
			t.Errorf("part %d:\n got %s\nwant %s", i, b, want)
		}
		var back DescribedPart
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		kept := DescribedPart{manifest.Segment{ID: p.ID, Register: p.Register, Rank: &rank, Sources: p.Sources,
			Included: p.Included, Reason: p.Reason, Bytes: p.Bytes, Digest: p.Digest}}
		if diff := cmp.Diff(kept, back); diff != "" {
			t.Errorf("part %d read back (-want +got):\n%s", i, diff)
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
