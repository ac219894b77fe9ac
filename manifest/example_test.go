package manifest_test

import (
	"errors"
	"fmt"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/manifest"
)

func ExampleValidate() {
	r, _ := promptloom.Reduce([]promptloom.Fragment{promptloom.Primary("You are careful.")}, nil)
	m := manifest.New(r, "agent.main")
	fmt.Println(manifest.Validate(m, r.System))

	// One byte changed on the way to the provider is caught.
	err := manifest.Validate(m, "You are Careful.")
	var bad *manifest.WholeDigestError
	fmt.Println(errors.Is(err, manifest.ErrInvalid), errors.As(err, &bad), bad.Rule())
	// Output:
	// <nil>
	// true true whole_prompt_digest
}
