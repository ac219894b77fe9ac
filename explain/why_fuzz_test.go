package explain

import (
	"encoding/json"
	"testing"
)

// FuzzWhy: for any accepted options and any text, every place Why yields
// is an occurrence of the text where it says: in the prompt at Offset, its
// part at Start..End of its fragment's bytes; in a fragment left out, at
// Start..End of its body. The same holds of the explanation read back from
// JSON (no reduction: left-out fragments only by digest), which never finds
// more in the prompt than the original.
func FuzzWhy(f *testing.F) {
	f.Add([]byte(`{"system":["aaa","xaa",{"content":"aa","position":"after"}],"_system_fragments":[{"id":"o","body":"baab","requires_tools":["t"]}]}`), "aa")
	f.Add([]byte(`{"system":["one two","three"]}`), "two\n\nth")
	f.Add([]byte(`{"system":[{"title":"T","template":"  a {{ x }} b","bindings":{"x":"yy"}}]}`), "a yy")
	f.Add([]byte(`{"system":{"mode":"replace","content":"  x\n"}}`), "\n")
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		e, err := Explain(data, nil)
		if err != nil {
			return
		}
		sys := e.System
		count := func(x *Explanation) int {
			n, last := 0, -1
			for p := range x.Why(text) {
				if p.Offset >= 0 {
					if p.Offset+len(text) > len(sys) || sys[p.Offset:p.Offset+len(text)] != text {
						t.Fatalf("no %q at %d of %q", text, p.Offset, sys)
					}
					if p.Row != nil {
						at := *p.Row.Offset
						if p.Start < 0 || p.End > p.Row.Bytes || p.Start >= p.End ||
							sys[at+p.Start:at+p.End] != text[at+p.Start-p.Offset:at+p.End-p.Offset] {
							t.Fatalf("%q at %d: %s %d-%d is not its part", text, p.Offset, p.Row.ID, p.Start, p.End)
						}
					}
					if p.Offset != last {
						n, last = n+1, p.Offset
					}
					continue
				}
				if x.Reduction != nil {
					i := p.Row
					for j := range x.Fragments {
						if &x.Fragments[j] == i {
							if b := x.Reduction.Rows[j].Body; b[p.Start:p.End] != text {
								t.Fatalf("%q is not at %d-%d of %s's body %q", text, p.Start, p.End, i.ID, b)
							}
						}
					}
				}
				for _, s := range p.Spans {
					if s.Start < p.Start || s.End > p.End || s.Start >= s.End {
						t.Fatalf("span %+v outside its place %d-%d", s, p.Start, p.End)
					}
				}
			}
			return n
		}
		n := count(e)
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var back Explanation
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if m := count(&back); m != n {
			t.Fatalf("read back, %d occurrences in the prompt; %d before", m, n)
		}
	})
}
