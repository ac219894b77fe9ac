package stage_test

import (
	"context"
	"fmt"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/stage"
)

func ExamplePlan() {
	plan, _ := stage.NewPlan(stage.KernelPrompt())
	plan.Add(
		stage.Stage{ID: "greeting", Capability: "demo", Kind: stage.Compilation,
			Handler: func(_ context.Context, in stage.Input) (any, error) {
				name, _ := stage.Lookup[string](in.Snapshot, "name")
				return append(in.Fragments, promptloom.Fragment{ID: "hello", Body: "Hello, " + name}), nil
			}},
		stage.Stage{ID: "who", Capability: "demo", Kind: stage.Resolution,
			Handler: func(context.Context, stage.Input) (any, error) {
				return &stage.Resolved{Name: "name", Value: "Ada"}, nil
			}},
	)
	res, err := plan.Run(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Fragments[0].Body)
	for _, t := range res.Traces {
		fmt.Println(t.StageID, t.Kind, t.Status)
	}
	// Output:
	// Hello, Ada
	// who resolution applied
	// greeting compilation applied
	// kernel.prompt compilation no_change
}
