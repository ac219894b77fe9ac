package explain

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/harn/options"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/stage"

	"github.com/google/go-cmp/cmp"
)

// direct explains options the way explain did before contributors became
// stages: every fragment at once, straight into the reducer.
func direct(t *testing.T, o *options.Options) []byte {
	t.Helper()
	r, err := promptloom.Reduce(o.Fragments(), &promptloom.Options{Tools: o.ActiveTools(), Capabilities: o.Capabilities})
	if err != nil {
		t.Fatal(err)
	}
	m := manifest.New(r, o.CallRole)
	if o.ActorChain != nil {
		m.ActorChain = o.ActorChain
	}
	e, err := fromReduction(r, m)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	e.WriteJSON(&buf)
	return buf.Bytes()
}

func withoutTraces(t *testing.T, e *Explanation) []byte {
	t.Helper()
	c := *e
	c.Traces = nil
	var buf bytes.Buffer
	c.WriteJSON(&buf)
	return buf.Bytes()
}

// TestStagesChangeNoByte: on every vector and on random options, the
// explanation built through stages is byte-identical to the one built
// directly, but for its traces; and every stage left one.
func TestStagesChangeNoByte(t *testing.T) {
	var inputs [][]byte
	for _, file := range vectorFiles(t) {
		data, _ := os.ReadFile(file)
		var v vector
		json.Unmarshal(data, &v)
		if v.ErrorNames == "" {
			inputs = append(inputs, v.Options)
		}
	}
	r := rand.New(rand.NewPCG(21, 22))
	for range 1000 {
		data, _ := json.Marshal(randOptions(r))
		inputs = append(inputs, data)
	}
	for _, data := range inputs {
		o, err := options.Parse(data, nil)
		if err != nil {
			t.Fatal(err)
		}
		e, err := FromOptions(o, nil)
		if err != nil {
			continue // duplicates: both paths refuse them
		}
		if diff := cmp.Diff(string(direct(t, o)), string(withoutTraces(t, e))); diff != "" {
			t.Fatalf("options %s: staged explanation differs:\n%s", data, diff)
		}
		var ids []string
		for _, tr := range e.Traces {
			ids = append(ids, tr.StageID)
		}
		want := []string{"core.tools", "core.capabilities", "core.system", "core.primary", "core.profile", "core.guidance", "kernel.prompt"}
		if diff := cmp.Diff(want, ids); diff != "" {
			t.Fatalf("traces (-want +got):\n%s", diff)
		}
	}
}

func TestCallerStages(t *testing.T) {
	branch := stage.Stage{ID: "harness.branch", Capability: "harness", Resolves: CapsPrefix + "harness",
		Resolve: func(context.Context, map[string]any) (any, string, error) {
			return []string{"vcs.branch"}, "", nil
		}}
	note := stage.Stage{ID: "harness.note", Capability: "harness",
		Compile: func(_ context.Context, _ map[string]any, frags []promptloom.Fragment) ([]promptloom.Fragment, error) {
			return append(frags, promptloom.Fragment{ID: "harness:branch", Source: "harness",
				Body: "You are on a feature branch.", RequiresCaps: []string{"vcs.branch"}}), nil
		}}
	e, err := Explain([]byte(`{"system": "base"}`), &Options{Stages: []stage.Stage{branch, note}})
	if err != nil {
		t.Fatal(err)
	}
	if e.System != "base\n\nYou are on a feature branch." || e.Fragments[1].Reason != "capabilit(ies) present: vcs.branch" {
		t.Errorf("caller stages: %q %+v", e.System, e.Fragments)
	}
	var last stage.Trace
	for _, tr := range e.Traces {
		if tr.StageID == "harness.note" {
			last = tr
		}
	}
	if last.Status != "applied" || e.Traces[len(e.Traces)-1].StageID != "kernel.prompt" {
		t.Errorf("traces %+v", e.Traces)
	}
	nothing := func(context.Context, map[string]any, []promptloom.Fragment) ([]promptloom.Fragment, error) {
		return nil, nil
	}
	if _, err := Explain([]byte(`{}`), &Options{Stages: []stage.Stage{{ID: "kernel.prompt", Compile: nothing}}}); !errors.Is(err, stage.ErrInvalidStage) {
		t.Errorf("a caller kernel.prompt: %v", err)
	}
	if _, err := Explain([]byte(`{}`), &Options{Stages: []stage.Stage{{ID: "core.system", Compile: nothing}}}); !errors.Is(err, stage.ErrInvalidStage) {
		t.Errorf("a caller stage replacing core.system: %v", err)
	}
}

// Reminders render outside the system string: the system prompt and its
// manifest are byte-identical whatever the reminders.
func TestRemindersLeaveTheSystemStringAlone(t *testing.T) {
	base := `{"system": ["You are careful."], "tools": [{"name": "todo", "guidance": "Track the plan."}]`
	sets := []string{
		``,
		`, "reminders": [{"body": "Tests are failing: fix them first.", "authority": "corrective", "ttl_turns": 2}]`,
		`, "reminders": [{"body": "Prefer tabs.", "dedupe_key": "style"}, {"body": "Prefer spaces <&>.", "dedupe_key": "style", "authority": "contract"}]`,
	}
	asset, err := os.ReadFile("../harn/reminder/testdata/directive_envelope_instructions.harn.prompt")
	if err != nil {
		t.Fatal(err)
	}
	instructions := strings.TrimRight(string(asset), " \t\r\n")
	var first []byte
	for i, extra := range sets {
		e, err := Explain([]byte(base+extra+"}"), nil)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := e.Manifest.Canonical()
		got := append([]byte(e.System+"\x00"), m...)
		if i == 0 {
			first = got
			if e.Reminders != nil {
				t.Error("reminders rendered with none given")
			}
			continue
		}
		if !bytes.Equal(first, got) {
			t.Errorf("reminder set %d changed the system string or its manifest", i)
		}
		if !strings.HasPrefix(e.Reminders.Message, "<context-directives>\n"+instructions+"\n<directive authority=") {
			t.Errorf("message %q", e.Reminders.Message)
		}
	}
	e, _ := Explain([]byte(base+sets[2]+"}"), nil)
	if e.Reminders.Removed != 1 || len(e.Reminders.Rows) != 1 ||
		e.Reminders.Message != "<context-directives>\n"+instructions+"\n<directive authority=\"contract\">\nPrefer spaces &lt;&amp;&gt;.\n</directive>\n</context-directives>" {
		t.Errorf("dedupe: %+v", e.Reminders)
	}
}

func TestProjectProfile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/tool\n\ngo 1.26\n"), 0o644)
	e, err := Explain([]byte(`{"system": "base"}`), &Options{Project: dir, EnvHas: func(string) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Fragments) != 2 || e.Fragments[1].ID != "profile:go" || e.Fragments[1].Reason != "capabilit(ies) present: language.go" {
		t.Errorf("fragments %+v", e.Fragments)
	}
}

// A caller stage that leaves the fragments unfit for the reducer fails at
// kernel.prompt, naming it, with the reducer's own errors.
func TestKernelPromptRefusesWithTheReducersErrors(t *testing.T) {
	add := func(f promptloom.Fragment) stage.Stage {
		return stage.Stage{ID: "caller.add", Capability: "test",
			Compile: func(_ context.Context, _ map[string]any, frags []promptloom.Fragment) ([]promptloom.Fragment, error) {
				return append(frags, f), nil
			}}
	}
	for _, tc := range []struct {
		f    promptloom.Fragment
		want error
	}{
		{promptloom.Fragment{Source: "caller", Body: "no id"}, promptloom.ErrEmptyID},
		{promptloom.Replacement("only me"), promptloom.ErrReplacementNotAlone},
	} {
		_, err := Explain([]byte(`{"system": "base"}`), &Options{Stages: []stage.Stage{add(tc.f)}})
		var se *stage.Error
		if !errors.Is(err, tc.want) || !errors.As(err, &se) || se.StageID != "kernel.prompt" {
			t.Errorf("got %v, want %v from kernel.prompt", err, tc.want)
		}
	}
}
