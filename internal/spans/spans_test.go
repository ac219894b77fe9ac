package spans_test

import (
	"fmt"
	"testing"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/internal/spans"

	"github.com/google/go-cmp/cmp"
)

// A render "Hi {{ name }}!\n" of "Hi Ada!\n", cut to its first line and
// placed at byte 10 of a prompt.
var rendered = "Hi Ada!\n"

var of = []promptloom.Span{
	{Start: 0, End: 3, Kind: "text", File: "t", Line: 1, Col: 1},
	{Start: 3, End: 6, Kind: "binding", Path: "name", File: "t", Line: 1, Col: 4},
	{Start: 6, End: 8, Kind: "text", File: "t", Line: 1, Col: 15},
}

func ExampleCut() {
	for _, s := range spans.Cut(of, rendered, 1, 7, 10) {
		fmt.Println(s.Start, s.End, s.Kind, s.Line, s.Col)
	}
	// Output:
	// 11 13 text 1 2
	// 13 16 binding 1 4
	// 16 17 text 1 15
}

// A text span cut at its start names the position of its first byte left,
// across a line break; spans outside the range are dropped.
func TestCut(t *testing.T) {
	src := "ab\ncd"
	in := []promptloom.Span{{Start: 0, End: 5, Kind: "text", Line: 7, Col: 3}}
	got := spans.Cut(in, src, 4, 5, -4)
	want := []promptloom.Span{{Start: 0, End: 1, Kind: "text", Line: 8, Col: 2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := spans.Cut(of, rendered, 8, 8, 0); got != nil {
		t.Errorf("an empty range: %+v", got)
	}
}
