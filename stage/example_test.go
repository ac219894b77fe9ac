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
	who := stage.Stage{ID: "who", Capability: "demo",
		Resolve: func(context.Context, map[string]any) (*stage.Resolved, error) {
			return &stage.Resolved{Name: "name", Value: "Ada"}, nil
		}}
	res, err := stage.Run(context.Background(), nil, []stage.Stage{greeting, who})
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
