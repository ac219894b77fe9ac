package explain

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/harn/options"
	"github.com/promptloom/promptloom/internal/seq"
	"github.com/promptloom/promptloom/manifest"

	"github.com/google/go-cmp/cmp"
)

func explainJSON(t *testing.T, in string) *Explanation {
	t.Helper()
	e, err := Explain([]byte(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func explainOpts(t *testing.T, o *options.Options) *Explanation {
	t.Helper()
	e, err := FromOptions(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

const guidanceOpts = `{"system": ["You are careful.", {"content": "Bye.", "position": "after"}],
	"tools": [{"name": "todo", "guidance": "Keep the todo list current."}, {"name": "read", "guidance": "Read first."}]}`

func TestDiffWithoutTool(t *testing.T) {
	o, err := options.Parse([]byte(guidanceOpts), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := explainOpts(t, o)
	o.Tools[0].Active = false // todo
	b := explainOpts(t, o)
	d := Diff(a, b, "a", "b")

	if d.Identical {
		t.Fatal("prompts with and without a tool are identical")
	}
	var todo *FragmentDelta
	for i := range d.Fragments {
		if d.Fragments[i].ID == "tool:todo.guidance" {
			todo = &d.Fragments[i]
		} else if d.Fragments[i].Kind != manifest.Same {
			t.Errorf("%s: %s, want same", d.Fragments[i].ID, d.Fragments[i].Kind)
		}
	}
	if todo == nil || todo.Kind != manifest.Excluded || todo.A.Reason != "tool(s) present: todo" ||
		todo.B.Reason != "requires tool `todo` (not available)" {
		t.Fatalf("todo guidance delta = %+v", todo)
	}
	if want := seq.CommonPrefix(a.System, b.System); d.CommonPrefixBytes != want || want != len("You are careful.\n\n") {
		t.Errorf("common prefix = %d, want %d", d.CommonPrefixBytes, want)
	}
	if d.FirstChangedFragment == nil || *d.FirstChangedFragment != "tool:todo.guidance" {
		t.Errorf("first changed fragment = %v", d.FirstChangedFragment)
	}
	if d.ResendBytes != len(b.System)-d.CommonPrefixBytes {
		t.Errorf("resend bytes = %d", d.ResendBytes)
	}
	var removed []string
	for _, l := range strings.Split(d.Unified, "\n") {
		if strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---") {
			removed = append(removed, l)
		}
		if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") {
			t.Errorf("unified diff adds %q", l)
		}
	}
	if diff := cmp.Diff([]string{"-Keep the todo list current.", "-"}, removed); diff != "" {
		t.Errorf("unified diff removes (-want +got):\n%s\n%s", diff, d.Unified)
	}
}

func TestDiffWithItself(t *testing.T) {
	a := explainJSON(t, guidanceOpts)
	d := Diff(a, a, "a", "a")
	if !d.Identical || d.CommonPrefixBytes != len(a.System) || d.FirstChangedFragment != nil || d.Unified != "" || d.ResendBytes != 0 {
		t.Errorf("self diff: %+v", d)
	}
	for _, f := range d.Fragments {
		if f.Kind != manifest.Same {
			t.Errorf("%s: %s", f.ID, f.Kind)
		}
	}
}

func TestDiffClassifies(t *testing.T) {
	a := explainJSON(t, `{"system": ["one", "two", "three", {"content":"gone"}, "four"],
		"tools": [{"name": "t", "guidance": "guide"}]}`)
	ob, err := options.Parse([]byte(`{"system": ["one", "three", "two", "new", "four!"],
		"tools": [{"name": "t", "guidance": "guide"}, {"name": "u", "guidance": "fresh"}]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	ob.Tools[0].Active = false // t
	b := explainOpts(t, ob)
	d := Diff(a, b, "a", "b")
	var order []string
	changes := map[string]string{}
	for _, f := range d.Fragments {
		order = append(order, f.ID)
		changes[f.ID] = f.Kind
	}
	// system[1] holds "two" in A and "three" in B: ids match by position in
	// the list, so they read as changed bodies; the tool flips and arrives.
	wantChanges := map[string]string{
		"system[0]": manifest.Same, "system[1]": manifest.Changed, "system[2]": manifest.Changed, "system[3]": manifest.Changed,
		"system[4]": manifest.Changed, "tool:t.guidance": manifest.Excluded, "tool:u.guidance": manifest.Added,
	}
	if diff := cmp.Diff(wantChanges, changes); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"system[0]", "system[1]", "system[2]", "system[3]", "system[4]", "tool:t.guidance", "tool:u.guidance"}, order); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestDiffMovedAndRemoved(t *testing.T) {
	a := explainJSON(t, `{"_system_fragments": [{"id":"x","body":"X"},{"id":"y","body":"Y"},{"id":"z","body":"Z"},{"id":"gone","body":"G"}]}`)
	b := explainJSON(t, `{"_system_fragments": [{"id":"y","body":"Y"},{"id":"z","body":"Z"},{"id":"x","body":"X"}]}`)
	d := Diff(a, b, "a", "b")
	var got []string
	for _, f := range d.Fragments {
		got = append(got, f.ID+":"+string(f.Kind))
	}
	want := []string{"y:same", "z:same", "gone:removed", "x:moved"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if d.FirstChangedFragment == nil || *d.FirstChangedFragment != "x" {
		t.Errorf("first changed = %v", d.FirstChangedFragment)
	}
}

func TestUnifiedHunks(t *testing.T) {
	var a, b []string
	for i := range 20 {
		a = append(a, "line "+string(rune('a'+i)))
	}
	b = append(b, a...)
	b[2] = "line C"
	b[15] = "line P"
	hunks := lineHunks(strings.Join(a, "\n"), strings.Join(b, "\n"), 3)
	if len(hunks) != 2 {
		t.Fatalf("%d hunks, want 2: %s", len(hunks), renderUnified(hunks, "a", "b"))
	}
	u := renderUnified(hunks, "a", "b")
	if !strings.Contains(u, "@@ -1,6 +1,6 @@\n line a\n line b\n-line c\n+line C\n line d\n") ||
		!strings.Contains(u, "@@ -13,7 +13,7 @@\n") {
		t.Errorf("unified:\n%s", u)
	}
	// the changed character is marked inside the paired lines
	if got := hunks[0].Lines[3].Spans; len(got) != 2 || got[1] != (span{'+', "C"}) {
		t.Errorf("spans of the added line = %+v", got)
	}
}

// Long lines that differ throughout are bounded (Myers' diff would take
// seconds on 40 KB), and the spans of every pair still spell both lines.
func TestLongLinePairsAreBounded(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	letters := func(n int) string {
		b := make([]rune, n)
		for i := range b {
			b[i] = 'a' + rune(r.IntN(26))
			if i%7 == 0 {
				b[i] = 'é'
			}
		}
		return string(b)
	}
	long1, long2 := letters(40000), letters(40000)
	for name, pair := range map[string][2]string{
		"unrelated":      {"same start " + long1 + " same end", "same start " + long2 + " same end"},
		"one word apart": {long1 + " alpha " + long1, long1 + " beta " + long1},
	} {
		hunks := lineHunks(pair[0], pair[1], 3)
		if len(hunks) != 1 || len(hunks[0].Lines) != 2 {
			t.Fatalf("%s: %d hunks", name, len(hunks))
		}
		var a, b strings.Builder
		for _, s := range hunks[0].Lines[0].Spans {
			a.WriteString(s.Text)
		}
		for _, s := range hunks[0].Lines[1].Spans {
			b.WriteString(s.Text)
		}
		if a.String() != pair[0] || b.String() != pair[1] {
			t.Errorf("%s: spans do not spell the lines", name)
		}
		if name == "one word apart" && len(hunks[0].Lines[1].Spans) != 3 {
			t.Errorf("%s: spans %d, want equal, insertion, equal", name, len(hunks[0].Lines[1].Spans))
		}
	}
}
