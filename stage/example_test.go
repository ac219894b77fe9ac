package stage_test

import (
	"context"
	"fmt"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/stage"
)

func ExampleRun() {
	greeting := stage.Stage{ID: "greeting", Capability: "demo",
		Compile: func(_ context.Context, snap map[string]any, frags []promptloom.Fragment) ([]promptloom.Fragment, error) {
			name, _ := snap["name"].(string)
			return append(frags, promptloom.Fragment{ID: "hello", Body: "Hello, " + name}), nil
		}}
	who := stage.Stage{ID: "who", Capability: "demo", Resolves: "name",
		Resolve: func(context.Context, map[string]any) (any, string, error) {
			return "Ada", "the user's name", nil
		}}
	res, err := stage.Run(context.Background(), nil, []stage.Stage{greeting, who})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Fragments[0].Body)
	for _, t := range res.Traces {
		fmt.Println(t.StageID, t.Kind, t.Status+":", t.Reason)
	}
	// Output:
	// Hello, Ada
	// who resolution applied: resolved name: the user's name
	// greeting compilation applied: 0 fragment(s) in, 1 out
	// kernel.prompt compilation no_change: no fragment changed
}
