package payload

import (
	"strings"
	"testing"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/manifest"

	"github.com/google/go-cmp/cmp"
)

func reduce(t *testing.T, frags []promptloom.Fragment, tools ...string) *promptloom.Reduction {
	t.Helper()
	r, err := promptloom.Reduce(frags, &promptloom.Options{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func item(i int, body string) promptloom.Fragment {
	return promptloom.SystemItem(i, "", body, promptloom.Before)
}

// base is "Base.\n\nStyle.\n\nUse grep.\n\nLate rule.\n\nYou are X.\n\nAppendix."
// with grep active: Style. ends at 13, Use grep. at 24, Late rule. at 36,
// You are X. at 48, Appendix. at 59.
func base(primary string) []promptloom.Fragment {
	return []promptloom.Fragment{
		item(0, "Base."),
		item(1, "Style."),
		promptloom.ToolGuidance("grep", "Use grep."),
		item(3, "Late rule."),
		promptloom.Primary(primary),
		promptloom.SystemItem(5, "", "Appendix.", promptloom.After),
	}
}

type bp struct {
	After  string
	Offset int
	Kind   string
}

func TestPlace(t *testing.T) {
	gates := []promptloom.Fragment{
		item(0, "A."), item(1, "B."), promptloom.ToolGuidance("grep", "Grep."),
		item(3, "C."), promptloom.ToolGuidance("ls", "Ls."), item(5, "D."),
	}
	tests := []struct {
		name     string
		frags    []promptloom.Fragment
		tools    []string
		since    []promptloom.Fragment // nil: no previous manifest
		max      int
		want     []bp
		dropped  []bp
		warnings []string
		none     string
	}{
		{name: "first breakpoint after the unconditional before run",
			frags: base("You are X."), tools: []string{"grep"}, max: 4,
			want: []bp{{"system[1]", 13, kindUnconditional}}},
		{name: "a gated-out fragment ends the run too",
			frags: base("You are X."), max: 4,
			want: []bp{{"system[1]", 13, kindUnconditional}}},
		{name: "same call again: the whole prompt is stable, the gate before it warned",
			frags: base("You are X."), tools: []string{"grep"}, since: base("You are X."), max: 4,
			want:     []bp{{"system[1]", 13, kindUnconditional}, {"system[5]", 59, kindStable}},
			warnings: []string{"tool:grep.guidance"}},
		{name: "primary changed: stable up to the fragment before it",
			frags: base("You are X."), tools: []string{"grep"}, since: base("You are Y."), max: 4,
			want:     []bp{{"system[1]", 13, kindUnconditional}, {"system[3]", 36, kindStable}},
			warnings: []string{"tool:grep.guidance"}},
		{name: "first fragment changed: nothing stable beyond the unconditional run",
			frags: base("You are X."), tools: []string{"grep"}, since: append([]promptloom.Fragment{item(0, "Other.")}, base("You are X.")[1:]...), max: 4,
			want: []bp{{"system[1]", 13, kindUnconditional}}},
		{name: "gate boundaries inside the stable prefix",
			frags: gates, tools: []string{"grep", "ls"}, since: gates, max: 4,
			want:     []bp{{"system[1]", 6, kindUnconditional}, {"system[3]", 17, kindGate}, {"system[5]", 26, kindStable}},
			warnings: []string{"tool:grep.guidance", "tool:ls.guidance"}},
		{name: "the limit keeps the best",
			frags: gates, tools: []string{"grep", "ls"}, since: gates, max: 2,
			want:     []bp{{"system[1]", 6, kindUnconditional}, {"system[5]", 26, kindStable}},
			dropped:  []bp{{"system[3]", 17, kindGate}},
			warnings: []string{"tool:grep.guidance", "tool:ls.guidance"}},
		{name: "a gated first fragment leaves no breakpoint",
			frags: []promptloom.Fragment{promptloom.ToolGuidance("grep", "Grep."), item(1, "B.")}, tools: []string{"grep"}, max: 4,
			none: "no fragment boundary is stable: the first fragment is gated, in the after bucket, or sheddable by a budget"},
		{name: "an absent prompt has no blocks",
			frags: []promptloom.Fragment{promptloom.ToolGuidance("grep", "Grep.")}, max: 4,
			none: "the prompt is absent"},
		{name: "a replacement root is one unconditional block",
			frags: []promptloom.Fragment{promptloom.Replacement("  Exactly this.\n")}, max: 4,
			want: []bp{{"replacement", 16, kindUnconditional}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := reduce(t, tt.frags, tt.tools...)
			opts := &PlaceOptions{MaxBreakpoints: tt.max}
			if tt.max == 0 {
				opts.MaxBreakpoints = -1 // none
			}
			if tt.since != nil {
				opts.Since = manifest.New(reduce(t, tt.since, tt.tools...), "agent")
			}
			p := placement(r, opts)
			if d := cmp.Diff(tt.want, points(p.Breakpoints)); d != "" {
				t.Errorf("breakpoints -want +got:\n%s", d)
			}
			if d := cmp.Diff(tt.dropped, points(p.Dropped)); d != "" {
				t.Errorf("dropped -want +got:\n%s", d)
			}
			var warned []string
			for _, w := range p.Warnings {
				warned = append(warned, w.ID)
			}
			if d := cmp.Diff(tt.warnings, warned); d != "" {
				t.Errorf("warnings -want +got:\n%s", d)
			}
			if p.None != tt.none {
				t.Errorf("none %q, want %q", p.None, tt.none)
			}
			checkBlocks(t, r, p)
		})
	}
}

func points(bps []Breakpoint) []bp {
	var out []bp
	for _, b := range bps {
		out = append(out, bp{b.After, b.Offset, b.Kind})
	}
	return out
}

// checkBlocks: the blocks concatenate to the prompt; exactly the blocks
// that end at a breakpoint carry cache_control; no block starts with a
// fragment and ends with a separator.
func checkBlocks(t *testing.T, r *promptloom.Reduction, p *Placement) {
	t.Helper()
	var b strings.Builder
	marked := 0
	for i, blk := range p.blocks {
		b.WriteString(blk.Text)
		if blk.Type != "text" || blk.Text == "" {
			t.Errorf("block %d: %+v", i, blk)
		}
		if strings.HasSuffix(blk.Text, promptloom.Separator) {
			t.Errorf("block %d ends with the separator: %q", i, blk.Text)
		}
		if blk.CacheControl != nil {
			if p.Breakpoints[marked].Block != i || b.Len() != p.Breakpoints[marked].Offset {
				t.Errorf("block %d marked, breakpoint %+v", i, p.Breakpoints[marked])
			}
			marked++
		}
	}
	if b.String() != r.System || marked != len(p.Breakpoints) || len(p.Breakpoints) > anthropicMaxBreakpoints {
		t.Errorf("blocks %q, %d marked, want %q, %d", b.String(), marked, r.System, len(p.Breakpoints))
	}
}

func TestWarningMessage(t *testing.T) {
	r := reduce(t, base("You are X."), "grep")
	p := placement(r, &PlaceOptions{Since: manifest.New(r, "agent")})
	want := "tool:grep.guidance is gated and stands before cache breakpoint 2 (after system[5], byte 59): each state of its gate is a different prefix, so the cache at that breakpoint splits; move it after the unconditional fragments"
	if len(p.Warnings) != 1 || p.Warnings[0].Message != want || p.Warnings[0].ID != "tool:grep.guidance" {
		t.Errorf("warnings %+v", p.Warnings)
	}
}

// Every provider's field reads back as the prompt, and as the manifest's.
func TestFieldRoundTrip(t *testing.T) {
	for _, frags := range [][]promptloom.Fragment{
		base("You are <X> & \"Y\" 😀."),
		{promptloom.Replacement("  verbatim\n\n")},
	} {
		r := reduce(t, frags, "grep")
		m := manifest.New(r, "agent")
		for _, p := range providers {
			body, _, err := Field(r, p, nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := verifyBody(m, body, Auto)
			if err != nil {
				t.Fatalf("%s: %s: %v", p, body, err)
			}
			if res.Channel.Provider != p || res.Channel.Text != r.System || res.Placed {
				t.Errorf("%s: read back as %s %q", p, res.Channel.Provider, res.Channel.Text)
			}
		}
	}
	absent := reduce(t, []promptloom.Fragment{promptloom.ToolGuidance("ls", "x")})
	for _, p := range providers {
		if body, _, err := Field(absent, p, nil); err != nil || string(body) != "{}" {
			t.Errorf("%s: absent prompt gave %s, %v", p, body, err)
		}
	}
}

// TestPlaceUnconditionalPrefixIsBinding: a fragment a budget may shed
// (any register but binding) ends the unconditional run: under a budget
// that did not need to shed it, it is in this call's prompt, yet another
// budget removes it, so the bytes after it are not the same in every call.
func TestPlaceUnconditionalPrefixIsBinding(t *testing.T) {
	frags := []promptloom.Fragment{item(0, "Base."), item(1, "Maybe this."), item(2, "Rule.")}
	frags[1].Register = budget.Considered
	r, err := promptloom.Reduce(frags, &promptloom.Options{Budget: &budget.Budget{Counter: budget.Bytes(), Total: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Rows[1].Included {
		t.Fatal("the considered fragment was shed; the test needs it in the prompt")
	}
	p := placement(r, nil)
	if len(p.Breakpoints) != 1 || p.Breakpoints[0].After != "system[0]" || p.Breakpoints[0].Offset != 5 {
		t.Fatalf("breakpoints %+v, want one after system[0] (byte 5)", p.Breakpoints)
	}
	// Sheddable first: no unconditional prefix at all.
	frags[0].Register = budget.Generated
	r, err = promptloom.Reduce(frags, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := placement(r, nil); len(p.Breakpoints) != 0 || !strings.Contains(p.None, "budget") {
		t.Fatalf("breakpoints %+v (none: %q), want none", p.Breakpoints, p.None)
	}
}

// A fragment rendered from a template that reads bindings has the call's
// bytes, so the unconditional prefix ends before it; one reading none
// (its bytes are the template's) may stand in it.
func TestPlaceUnconditionalPrefixEndsAtABinding(t *testing.T) {
	frags := []promptloom.Fragment{item(0, "Base."), item(1, "Today is Monday."), item(2, "Rule.")}
	frags[1].Template = &promptloom.Template{Bindings: map[string]digest.Digest{"date": digest.Of(`"Monday"`)}}
	p := placement(reduce(t, frags), nil)
	if len(p.Breakpoints) != 1 || p.Breakpoints[0].After != "system[0]" {
		t.Fatalf("breakpoints %+v, want one after system[0]", p.Breakpoints)
	}
	frags[1].Template = &promptloom.Template{}
	if p := placement(reduce(t, frags), nil); len(p.Breakpoints) != 1 || p.Breakpoints[0].After != "system[2]" {
		t.Fatalf("no bindings read: breakpoints %+v, want one after system[2]", p.Breakpoints)
	}
}

// TestPlaceNeverAnEmptyBlock: an empty replacement root with --since (its
// one fragment unchanged) has no block, not an empty one carrying
// cache_control, which Anthropic refuses; Field reads back as the prompt.
func TestPlaceNeverAnEmptyBlock(t *testing.T) {
	r := reduce(t, []promptloom.Fragment{promptloom.Replacement("")})
	if !r.Present || r.System != "" {
		t.Fatalf("present %v system %q", r.Present, r.System)
	}
	since := manifest.New(r, "agent")
	for _, o := range []*PlaceOptions{nil, {Since: since}} {
		p := placement(r, o)
		if len(p.blocks) != 0 || len(p.Breakpoints) != 0 || p.None == "" {
			t.Errorf("since %v: blocks %+v breakpoints %+v none %q", o != nil, p.blocks, p.Breakpoints, p.None)
		}
		// Nor a provider's empty part: Gemini refuses an empty text too.
		for _, prov := range []Provider{Anthropic, Gemini} {
			body, _, err := Field(r, prov, o)
			if err != nil || strings.Contains(string(body), `"text":""`) {
				t.Errorf("%s field %s: %v", prov, body, err)
			}
			if c, err := extract(body, prov); err != nil || c.Text != "" {
				t.Errorf("%s read back %+v: %v", prov, c, err)
			}
		}
	}
	// A prompt whose first fragment is empty and unchanged since: no
	// breakpoint at byte 0, however it came.
	frags := []promptloom.Fragment{item(0, ""), item(1, "Rule.")}
	r = reduce(t, frags)
	p := placement(r, &PlaceOptions{Since: manifest.New(r, "agent")})
	for _, b := range p.blocks {
		if b.Text == "" {
			t.Fatalf("an empty block: %+v", p.blocks)
		}
	}
}

// TestPlaceWarnsOfASheddableFragmentBeforeABreakpoint: with --since, a
// stable-prefix breakpoint may stand after a fragment a budget may shed;
// the placement says so, as it does of a gated one.
func TestPlaceWarnsOfASheddableFragmentBeforeABreakpoint(t *testing.T) {
	frags := []promptloom.Fragment{item(0, "Base."), item(1, "Maybe this."), item(2, "Rule.")}
	frags[1].Register = budget.Considered
	r := reduce(t, frags)
	p := placement(r, &PlaceOptions{Since: manifest.New(r, "agent")})
	if len(p.Warnings) != 1 || p.Warnings[0].ID != "system[1]" || !strings.Contains(p.Warnings[0].Message, "shed") {
		t.Fatalf("breakpoints %+v warnings %+v", p.Breakpoints, p.Warnings)
	}
}
