package payload_test

import (
	"errors"
	"fmt"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/payload"
)

// A harness builds Anthropic's system field from a reduction, sends it, and
// holds the body to the manifest at send time; the payload-side digest is
// what its transcript records beside the prompt's.
func Example() {
	r, _ := promptloom.Reduce([]promptloom.Fragment{
		promptloom.SystemItem(0, "", "You are careful.", promptloom.Before),
		promptloom.ToolGuidance("grep", "Use grep before guessing."),
	}, &promptloom.Options{Tools: []string{"grep"}})
	m := manifest.New(r, "agent.main")

	field, place, _ := payload.Field(r, payload.Anthropic, nil)
	fmt.Println(string(field))
	for _, b := range place.Breakpoints {
		fmt.Printf("breakpoint after %s at byte %d (%s)\n", b.After, b.Offset, b.Kind)
	}

	body := []byte(`{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[{"role":"user","content":"hi"}],` + string(field[1:]))
	req, _ := payload.Read(body, payload.Auto)
	egress, err := req.Verify(m)
	fmt.Println(err, req.Provider, egress.Boundary)
	c, _ := req.System()
	fmt.Println(digest.Of(c.Text) == m.WholePromptDigest, len(c.Text))

	// One character changed on the way out is caught, with where.
	req, _ = payload.Read([]byte(`{"system":"You are careless.\n\nUse grep before guessing."}`), payload.Auto)
	_, err = req.Verify(m)
	var mm *payload.Error
	fmt.Println(errors.As(err, &mm), mm.Fragment, mm.Offset)
	// Output:
	// {"system":[{"type":"text","text":"You are careful.","cache_control":{"type":"ephemeral"}},{"type":"text","text":"\n\nUse grep before guessing."}]}
	// breakpoint after system[0] at byte 16 (unconditional-prefix)
	// <nil> anthropic llm_request_payload_egress
	// true 43
	// true system[0] 0
}

// A Gemini body names no model: its URL does. Route reads it, for
// request.Options.Model when the request manifest is made.
func ExampleRoute() {
	shape, model, stream, ok := payload.Route("/v1beta/models/gemini-3-pro:streamGenerateContent")
	fmt.Println(shape, model, stream, ok)
	// Output: gemini gemini-3-pro true true
}
