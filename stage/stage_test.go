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
	return Stage{ID: id, Capability: "test", Kind: Resolution, Handler: func(context.Context, Input) (any, error) {
		return &Resolved{Name: name, Value: value}, nil
	}}
}

func appender(id, body string) Stage {
	return Stage{ID: id, Capability: "test", Kind: Compilation, Handler: func(_ context.Context, in Input) (any, error) {
		return append(in.Fragments, promptloom.Fragment{ID: id, Body: body}), nil
	}}
}

func kernel() Stage {
	return Stage{ID: "kernel.prompt", Capability: "kernel", Kind: Compilation, Handler: func(context.Context, Input) (any, error) {
		return nil, nil
	}}
}

func TestResolutionRunsBeforeCompilationInDeclaredOrder(t *testing.T) {
	p, err := NewPlan(kernel())
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	err = p.Add(
		appender("c1", "one"),
		resolver("r1", "lang", "go"),
		Stage{ID: "c2", Capability: "test", Kind: Compilation, Handler: func(_ context.Context, in Input) (any, error) {
			lang, _ := Lookup[string](in.Snapshot, "lang")
			seen = append(seen, lang)
			return append(in.Fragments, promptloom.Fragment{ID: "c2", Body: "lang " + lang}), nil
		}},
		resolver("r2", "nothing", nil),
		Stage{ID: "r3", Capability: "test", Kind: Resolution, Handler: func(context.Context, Input) (any, error) { return nil, nil }},
	)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []Trace{
		{"r1", "test", Resolution, Applied, "resolved lang"},
		{"r2", "test", Resolution, Applied, "resolved nothing"},
		{"r3", "test", Resolution, NoChange, "nothing to resolve"},
		{"c1", "test", Compilation, Applied, "0 fragment(s) in, 1 out"},
		{"c2", "test", Compilation, Applied, "1 fragment(s) in, 2 out"},
		{"kernel.prompt", "kernel", Compilation, NoChange, "no fragment changed"},
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
		{"handler error", []Stage{appender("ok", "x"), {ID: "bad", Kind: Compilation, Handler: func(context.Context, Input) (any, error) { return nil, boom }}}, "bad", ErrStageFailed},
		{"handler panic", []Stage{{ID: "panicky", Kind: Resolution, Handler: func(context.Context, Input) (any, error) { panic("oops") }}}, "panicky", ErrPanicked},
		{"wrong type from compilation", []Stage{{ID: "typo", Kind: Compilation, Handler: func(context.Context, Input) (any, error) { return "a fragment", nil }}}, "typo", ErrMalformed},
		{"wrong type from resolution", []Stage{{ID: "r-bad", Kind: Resolution, Handler: func(context.Context, Input) (any, error) { return []promptloom.Fragment{}, nil }}}, "r-bad", ErrMalformed},
		{"name resolved twice", []Stage{resolver("r-a", "lang", "go"), resolver("r-b", "lang", "rust")}, "r-b", ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := NewPlan()
			if err := p.Add(tt.stages...); err != nil {
				t.Fatal(err)
			}
			res, err := p.Run(ctx)
			var se *Error
			if !errors.As(err, &se) || se.StageID != tt.stageID || !errors.Is(err, tt.cause) {
				t.Fatalf("Run = %v, want %v from %s", err, tt.cause, tt.stageID)
			}
			last := res.Traces[len(res.Traces)-1]
			if last.StageID != tt.stageID || last.Status != Failed {
				t.Errorf("last trace %+v", last)
			}
		})
	}
}

// A malformed resolution stage fails the run before any compilation stage
// runs: the compilation stage that would have used its value is not blamed.
func TestMalformedResolutionStopsBeforeCompilation(t *testing.T) {
	compiled := false
	p, _ := NewPlan()
	p.Add(
		Stage{ID: "needs-lang", Kind: Compilation, Handler: func(_ context.Context, in Input) (any, error) {
			compiled = true
			if _, ok := Lookup[string](in.Snapshot, "lang"); !ok {
				return nil, errors.New("no lang")
			}
			return nil, nil
		}},
		Stage{ID: "lang", Kind: Resolution, Handler: func(context.Context, Input) (any, error) { return 42, nil }},
	)
	_, err := p.Run(ctx)
	var se *Error
	if !errors.As(err, &se) || se.StageID != "lang" || !errors.Is(err, ErrMalformed) {
		t.Errorf("Run = %v, want the resolution stage blamed", err)
	}
	if compiled {
		t.Error("a compilation stage ran after a malformed resolution stage")
	}
}

func TestCallerStagesAddNeverReplace(t *testing.T) {
	p, _ := NewPlan(kernel(), appender("core.system", "x"))
	if err := p.Add(appender("kernel.prompt", "mine")); !errors.Is(err, ErrReservedStage) {
		t.Errorf("caller kernel.prompt: %v", err)
	}
	if err := p.Add(appender("core.system", "mine")); !errors.Is(err, ErrDuplicateStage) {
		t.Errorf("caller duplicate: %v", err)
	}
	if err := p.Add(Stage{ID: "x", Kind: "sideways", Handler: func(context.Context, Input) (any, error) { return nil, nil }}); !errors.Is(err, ErrInvalidStage) {
		t.Errorf("bad kind: %v", err)
	}
	// The kernel's reserved stage stays last.
	p.Add(appender("caller", "y"))
	var ids []string
	for _, s := range p.Stages() {
		ids = append(ids, s.ID)
	}
	if diff := cmp.Diff([]string{"core.system", "caller", "kernel.prompt"}, ids); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

// A compilation stage gets a copy of the list: changing it in place does
// not change what the next stage sees.
func TestStagesReturnRatherThanMutate(t *testing.T) {
	p, _ := NewPlan()
	p.Add(appender("a", "one"),
		Stage{ID: "vandal", Kind: Compilation, Handler: func(_ context.Context, in Input) (any, error) {
			in.Fragments[0] = promptloom.Fragment{ID: "vandalised"}
			return nil, nil
		}})
	res, err := p.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Fragments[0].ID != "a" {
		t.Errorf("an in-place change leaked: %+v", res.Fragments)
	}
}

// A ReadOnly stage is handed the list itself, clipped: an append copies, so
// what it returns never changes what the previous stage produced, and the
// trace still sees the change.
func TestReadOnlyStageAppendsWithoutCopy(t *testing.T) {
	p, _ := NewPlan()
	var seen, produced *promptloom.Fragment
	var previous []promptloom.Fragment
	p.Add(Stage{ID: "a", Kind: Compilation, Handler: func(_ context.Context, in Input) (any, error) {
		out := append(in.Fragments, promptloom.Fragment{ID: "a", Body: "one"})
		produced = &out[0]
		return out, nil
	}},
		Stage{ID: "peek", Kind: Compilation, ReadOnly: true, Handler: func(_ context.Context, in Input) (any, error) {
			seen, previous = &in.Fragments[0], in.Fragments
			if seen != produced {
				t.Error("a ReadOnly stage was handed a copy of the list, not the list")
			}
			if cap(in.Fragments) != len(in.Fragments) {
				t.Errorf("list not clipped: len %d cap %d", len(in.Fragments), cap(in.Fragments))
			}
			return append(in.Fragments, promptloom.Fragment{ID: "b"}), nil
		}})
	res, err := p.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(previous) != 1 || previous[0].ID != "a" {
		t.Errorf("the appending stage changed its input: %+v", previous)
	}
	if len(res.Fragments) != 2 || &res.Fragments[0] == seen {
		t.Errorf("append did not copy: %+v", res.Fragments)
	}
	if got := res.Traces[1]; got.Status != Applied || got.Reason != "1 fragment(s) in, 2 out" {
		t.Errorf("trace %+v", got)
	}
}
