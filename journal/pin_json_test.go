package journal

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/promptloom/promptloom/manifest"
)

// TestPinJSON: a pin's segments are manifest.Segments, but the log keeps of
// each only id, included, digest, register and rank, in that order, as
// pins have always been written; a pin reads back with just those fields.
func TestPinJSON(t *testing.T) {
	two := 2
	full := Pin{Key: "k", Call: "c", SystemDigest: "blake3:ab", Response: Response{Text: "<ok> & on"},
		Segments: []manifest.Segment{
			{ID: "a", Producer: "p", Bucket: "before", Included: true, Reason: "unconditional", Bytes: 3, Digest: "blake3:01"},
			{ID: "b<", Producer: "p", Bucket: "after", Reason: "shed by budget: craft rank 2", Digest: "blake3:02",
				Register: "craft", Rank: &two, Sources: []string{"s:1"}, Tokens: &two},
		}}
	cases := []struct {
		name string
		pin  Pin
		want string
	}{
		{"full", full, `{"key":"k","call":"c","system_digest":"blake3:ab","segments":[` +
			`{"id":"a","included":true,"digest":"blake3:01"},` +
			`{"id":"b\u003c","included":false,"digest":"blake3:02","register":"craft","rank":2}],` +
			`"response":{"text":"\u003cok\u003e \u0026 on"}}`},
		{"no manifest", Pin{Key: "k"}, `{"key":"k","call":"","system_digest":"","segments":null,"response":{"text":""}}`},
		{"no segments", Pin{Key: "k", Segments: []manifest.Segment{}}, `{"key":"k","call":"","system_digest":"","segments":[],"response":{"text":""}}`},
	}
	for _, c := range cases {
		b, err := json.Marshal(c.pin)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("%s: got  %s\nwant %s", c.name, b, c.want)
		}
		var back Pin
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		want := c.pin
		if want.Segments != nil {
			want.Segments = make([]manifest.Segment, len(c.pin.Segments))
			for i, s := range c.pin.Segments {
				want.Segments[i] = manifest.Segment{ID: s.ID, Included: s.Included, Digest: s.Digest, Register: s.Register, Rank: s.Rank}
			}
		}
		if d := cmp.Diff(want, back); d != "" {
			t.Errorf("%s: read back (-want +got):\n%s", c.name, d)
		}
	}
}
