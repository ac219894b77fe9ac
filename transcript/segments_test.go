package transcript

import (
	"fmt"
	"strings"
	"testing"

	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/manifest"
)

// A run that copies a previous list past its end, line after line, is
// refused before it is held: the bodies Verify joins are held to the
// line limit, so a hostile transcript cannot make it join gigabytes.
func TestSegmentsDoublingIsBounded(t *testing.T) {
	bs := newBodies(1 << 20)
	if _, p := bs.add("s", `["`+strings.Repeat("x", 1000)+`"]`); p != nil {
		t.Fatal(p)
	}
	var p *manifest.RuleError
	for i := 1; i < 40 && p == nil; i++ {
		n := len(bs.sessions["s"].prev)
		_, p = bs.add("s", fmt.Sprintf("[[0,%d],[0,%d]]", n, n))
	}
	if p == nil || p.Rule != RuleBodyTooLarge {
		t.Fatalf("problem %v", p)
	}
}

// FuzzBodySegments: no list, however hostile, panics the reader, and
// whatever it joins is at most the limit.
func FuzzBodySegments(f *testing.F) {
	for _, s := range []string{`["a","b",[0,1],1]`, `[[0,2],"x"]`, `[0,[0,0],-1,1e3,"",{}]`, `[[0,1,2],[1],["a",0]]`} {
		f.Add(`["{\"a\":","1}"]`, s)
	}
	f.Fuzz(func(t *testing.T, first, second string) {
		bs := newBodies(1 << 12)
		for _, raw := range []string{first, second, second} {
			if pjson.Check([]byte(raw), nil) != nil {
				return
			}
			if b, p := bs.add("s", raw); p == nil && len(b) > 1<<12 {
				t.Fatalf("joined %d bytes", len(b))
			}
		}
	})
}
