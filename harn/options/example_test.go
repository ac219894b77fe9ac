package options_test

import (
	"errors"
	"fmt"

	"github.com/promptloom/promptloom/harn/options"
)

func ExampleParse() {
	o, err := options.Parse([]byte(`{"system": ["base"], "tools": [{"name": "todo", "guidance": "g"}]}`), nil)
	if err != nil {
		panic(err)
	}
	for _, f := range o.Fragments() {
		fmt.Println(f.ID)
	}

	_, err = options.Parse([]byte(`{"system": [{"text": "x"}]}`), nil)
	fmt.Println(err)
	fmt.Println(errors.Is(err, options.ErrInvalid))
	// Output:
	// system[0]
	// tool:todo.guidance
	// options: system[0]: `text` was removed; use `content` (a fragment is {content: string, title?: string, position?: "before"|"after", enabled?: bool})
	// true
}
