package draft_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/promptloom/promptloom/eventlog/internal/draft"
)

// entry has eventlog.Draft's fields, as Marshal requires of its argument.
type entry struct {
	Kind     string
	Actor    string
	Audience []string
	Payload  any
}

// A batch is checked whole before a store writes any of it: one bad draft
// refuses every draft of the batch.
func ExampleMarshal() {
	payloads, err := draft.Marshal([]entry{
		{Kind: "offer", Payload: map[string]int{"share": 60}},
		{Kind: "raw", Payload: json.RawMessage(`{ "kept" : "as it is" }`)},
	})
	fmt.Printf("%s %s %v\n", payloads[0], payloads[1], err)

	_, err = draft.Marshal([]entry{{Kind: "offer", Payload: 1}, {Payload: 2}})
	fmt.Println(err, errors.Is(err, draft.ErrInvalid))
	// Output:
	// {"share":60} { "kept" : "as it is" } <nil>
	// draft 1: invalid event draft: the kind is empty true
}
