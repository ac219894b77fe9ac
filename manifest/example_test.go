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
	var bad *manifest.RuleError
	fmt.Println(errors.Is(err, manifest.ErrInvalid), errors.As(err, &bad), bad.Rule)
	// Output:
	// <nil>
	// true true whole_prompt_digest
}

// Every broken rule is a *RuleError that names its rule; errors.Is asks
// for one rule by name.
func ExampleRuleError() {
	r, _ := promptloom.Reduce([]promptloom.Fragment{promptloom.Primary("alpha"), promptloom.SystemItem(0, "", "omega", promptloom.After)}, nil)
	m := manifest.New(r, "agent.main")
	err := manifest.Validate(m, "alpha\n\nOmega")
	var re *manifest.RuleError
	errors.As(err, &re)
	fmt.Println(re.Rule, errors.Is(err, manifest.Rule("whole_prompt_digest")))
	fmt.Println(re.Located.Rule, re.Located.ID, re.Located.Offset)
	// Output:
	// whole_prompt_digest true
	// segment_digest system[0] 7
}
