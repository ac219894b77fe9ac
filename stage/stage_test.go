package stage

import (
	"context"
	"errors"
	"testing"

	"github.com/promptloom/promptloom"

	"github.com/google/go-cmp/cmp"
)

var ctx = context.Background()

func resolver(id, name string, value any) Stage {
	return Stage{ID: id, Capability: "test", Resolves: name, Resolve: func(context.Context, map[string]any) (any, string, error) {
		return value, "", nil
	}}
}

func appender(id, body string) Stage {
	return Stage{ID: id, Capability: "test", Compile: func(_ context.Context, _ map[string]any, frags []promptloom.Fragment) ([]promptloom.Fragment, error) {
		return append(frags, promptloom.Fragment{ID: id, Body: body}), nil
	}}
}

func nothing(context.Context, map[string]any, []promptloom.Fragment) ([]promptloom.Fragment, error) {
	return nil, nil
}

func ids(res *Result) []string {
	var out []string
	for _, tr := range res.Traces {
		out = append(out, tr.StageID)
	}
	return out
}

func TestResolutionRunsBeforeCompilationInDeclaredOrder(t *testing.T) {
	var seen []string
	res, err := Run(ctx, nil, []Stage{
		appender("c1", "one"),
		resolver("r1", "lang", "go"),
		{ID: "c2", Capability: "test", Compile: func(_ context.Context, snap map[string]any, frags []promptloom.Fragment) ([]promptloom.Fragment, error) {
			lang, _ := snap["lang"].(string)
			seen = append(seen, lang)
			return append(frags, promptloom.Fragment{ID: "c2", Body: "lang " + lang}), nil
		}},
		resolver("r2", "count", 0),
		{ID: "r3", Capability: "test", Resolves: "nothing", Resolve: func(context.Context, map[string]any) (any, string, error) { return nil, "", nil }},
		{ID: "r4", Capability: "test", Resolves: "why", Resolve: func(context.Context, map[string]any) (any, string, error) { return true, "asked", nil }},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Trace{
		{"r1", "test", "resolution", "applied", "resolved lang"},
		{"r2", "test", "resolution", "applied", "resolved count"},
		{"r3", "test", "resolution", "no_change", "nothing to resolve"},
		{"r4", "test", "resolution", "applied", "resolved why: asked"},
		{"c1", "test", "compilation", "applied", "0 fragment(s) in, 1 out"},
		{"c2", "test", "compilation", "applied", "1 fragment(s) in, 2 out"},
		{"kernel.prompt", "kernel", "compilation", "no_change", "no fragment changed"},
	}
	if diff := cmp.Diff(want, res.Traces); diff != "" {
		t.Errorf("traces (-want +got):\n%s", diff)
	}
	if len(res.Fragments) != 2 || res.Fragments[1].Body != "lang go" || seen[0] != "go" {
		t.Errorf("fragments %+v", res.Fragments)
	}
}

func TestFailuresBlameTheRightStage(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name    string
		stages  []Stage
		stageID string
		cause   error
	}{
		{"handler error", []Stage{appender("ok", "x"), {ID: "bad", Compile: func(context.Context, map[string]any, []promptloom.Fragment) ([]promptloom.Fragment, error) {
			return nil, boom
		}}}, "bad", boom},
		{"handler panic", []Stage{{ID: "panicky", Resolves: "x", Resolve: func(context.Context, map[string]any) (any, string, error) { panic("oops") }}}, "panicky", ErrPanicked},
		{"compilation panic", []Stage{{ID: "panicky", Compile: func(context.Context, map[string]any, []promptloom.Fragment) ([]promptloom.Fragment, error) {
			panic("oops")
		}}}, "panicky", ErrPanicked},
		{"resolution error", []Stage{{ID: "r-bad", Resolves: "x", Resolve: func(context.Context, map[string]any) (any, string, error) { return 1, "", boom }}}, "r-bad", boom},
		{"unfit for the reducer", []Stage{{ID: "anon", Compile: func(context.Context, map[string]any, []promptloom.Fragment) ([]promptloom.Fragment, error) {
			return []promptloom.Fragment{{Body: "no id"}}, nil
		}}}, "kernel.prompt", promptloom.ErrEmptyID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Run(ctx, nil, tt.stages)
			var se *Error
			if !errors.As(err, &se) || se.StageID != tt.stageID || !errors.Is(err, tt.cause) {
				t.Fatalf("Run = %v, want %v from %s", err, tt.cause, tt.stageID)
			}
			last := res.Traces[len(res.Traces)-1]
			if last.StageID != tt.stageID || last.Status != "failed" || last.Reason != se.Err.Error() {
				t.Errorf("last trace %+v", last)
			}
		})
	}
}

// A failing resolution stage fails the run before any compilation stage
// runs: the compilation stage that would have used its value is not blamed.
func TestFailedResolutionStopsBeforeCompilation(t *testing.T) {
	compiled := false
	_, err := Run(ctx, nil, []Stage{
		{ID: "needs-lang", Compile: func(_ context.Context, snap map[string]any, _ []promptloom.Fragment) ([]promptloom.Fragment, error) {
			compiled = true
			if _, ok := snap["lang"].(string); !ok {
				return nil, errors.New("no lang")
			}
			return nil, nil
		}},
		{ID: "lang", Resolves: "lang", Resolve: func(context.Context, map[string]any) (any, string, error) {
			return nil, "", errors.New("no go.mod")
		}},
	})
	var se *Error
	if !errors.As(err, &se) || se.StageID != "lang" || se.Status != "failed" {
		t.Errorf("Run = %v, want the resolution stage blamed", err)
	}
	if compiled {
		t.Error("a compilation stage ran after a malformed resolution stage")
	}
}

func TestCallerStagesAddNeverReplace(t *testing.T) {
	kernel := []Stage{appender("core.system", "x"), resolver("core.lang", "lang", "go")}
	for _, tt := range []struct {
		name  string
		stage Stage
	}{
		{"a caller kernel.prompt", appender("kernel.prompt", "mine")},
		{"a caller kernel.* id", appender("kernel.other", "mine")},
		{"a duplicate", appender("core.system", "mine")},
		{"no handler", Stage{ID: "x"}},
		{"two handlers", Stage{ID: "x", Resolves: "x", Resolve: func(context.Context, map[string]any) (any, string, error) { return nil, "", nil }, Compile: nothing}},
		{"no id", Stage{Compile: nothing}},
		{"a resolution stage with no name", Stage{ID: "r", Resolve: func(context.Context, map[string]any) (any, string, error) { return 1, "", nil }}},
		{"a compilation stage with a name", Stage{ID: "c", Resolves: "x", Compile: nothing}},
		{"a name the kernel resolves", resolver("r", "lang", "rust")},
	} {
		if _, err := Run(ctx, kernel, []Stage{tt.stage}); !errors.Is(err, ErrInvalidStage) {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
	// The kernel's reserved stages stay last, and a kernel.prompt of the
	// kernel's own is one too many.
	res, err := Run(ctx, []Stage{appender("core.system", "x"), {ID: "kernel.check", Compile: nothing}}, []Stage{appender("caller", "y")})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"core.system", "caller", "kernel.check", "kernel.prompt"}, ids(res)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if _, err := Run(ctx, []Stage{{ID: "kernel.prompt", Compile: nothing}}, nil); !errors.Is(err, ErrInvalidStage) {
		t.Errorf("a second kernel.prompt: %v", err)
	}
}

// A compilation stage gets a copy of the list: changing it in place does
// not change what the next stage sees. Nor does changing its snapshot.
func TestStagesReturnRatherThanMutate(t *testing.T) {
	res, err := Run(ctx, nil, []Stage{appender("a", "one"),
		resolver("r", "lang", "go"),
		{ID: "vandal", Compile: func(_ context.Context, snap map[string]any, frags []promptloom.Fragment) ([]promptloom.Fragment, error) {
			frags[0] = promptloom.Fragment{ID: "vandalised"}
			snap["lang"] = "cobol"
			return nil, nil
		}},
		{ID: "reader", Compile: func(_ context.Context, snap map[string]any, _ []promptloom.Fragment) ([]promptloom.Fragment, error) {
			if snap["lang"] != "go" {
				t.Errorf("a stage's change to its snapshot leaked: %v", snap["lang"])
			}
			return nil, nil
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Fragments[0].ID != "a" {
		t.Errorf("an in-place change leaked: %+v", res.Fragments)
	}
	if res.Snapshot["lang"] != "go" {
		t.Errorf("result snapshot %v", res.Snapshot)
	}
}

// A ReadOnly stage is handed the list itself, clipped: an append copies, so
// what it returns never changes what the previous stage produced, and the
// trace still sees the change.
func TestReadOnlyStageAppendsWithoutCopy(t *testing.T) {
	var seen, produced *promptloom.Fragment
	var previous []promptloom.Fragment
	res, err := Run(ctx, nil, []Stage{{ID: "a", Compile: func(_ context.Context, _ map[string]any, frags []promptloom.Fragment) ([]promptloom.Fragment, error) {
		out := append(frags, promptloom.Fragment{ID: "a", Body: "one"})
		produced = &out[0]
		return out, nil
	}},
		{ID: "peek", ReadOnly: true, Compile: func(_ context.Context, _ map[string]any, frags []promptloom.Fragment) ([]promptloom.Fragment, error) {
			seen, previous = &frags[0], frags
			if seen != produced {
				t.Error("a ReadOnly stage was handed a copy of the list, not the list")
			}
			if cap(frags) != len(frags) {
				t.Errorf("list not clipped: len %d cap %d", len(frags), cap(frags))
			}
			return append(frags, promptloom.Fragment{ID: "b"}), nil
		}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(previous) != 1 || previous[0].ID != "a" {
		t.Errorf("the appending stage changed its input: %+v", previous)
	}
	if len(res.Fragments) != 2 || &res.Fragments[0] == seen {
		t.Errorf("append did not copy: %+v", res.Fragments)
	}
	if got := res.Traces[1]; got.Status != "applied" || got.Reason != "1 fragment(s) in, 2 out" {
		t.Errorf("trace %+v", got)
	}
}
