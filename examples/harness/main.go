// Command harness shows how a harness plugs into promptloom: it registers a
// resolution stage (the user's locale, as a capability) and a compilation
// stage (a fragment gated on it), injects a reminder, and prints the
// explanation, the trailing reminder message and the traces of every stage.
//
//	go run ./examples/harness
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/stage"
)

const options = `{
  "system": [{"title": "Role", "content": "You are the harness's coding agent."}],
  "tools": [{"name": "todo", "guidance": "Keep the todo list current."}],
  "reminders": [
    {"body": "The build is red: fix it before anything else.", "authority": "corrective", "ttl_turns": 2, "dedupe_key": "build"},
    {"body": "Never push to main.", "authority": "contract", "preserve_on_compact": true}
  ],
  "call_role": "agent.main"
}`

// locale resolves the user's locale as a capability: values resolved under
// "caps." join the active set.
var locale = stage.Stage{
	ID: "harness.locale", Capability: "harness", Resolves: explain.CapsPrefix + "locale",
	Resolve: func(context.Context, map[string]any) (any, string, error) {
		return []string{"locale.en-GB"}, "en-GB", nil
	},
}

// spelling appends a fragment gated on that capability. It returns the
// successor list; it never changes the list it was given.
var spelling = stage.Stage{
	ID: "harness.spelling", Capability: "harness",
	Compile: func(_ context.Context, _ map[string]any, frags []promptloom.Fragment) ([]promptloom.Fragment, error) {
		return append(frags, promptloom.Fragment{
			ID: "harness:spelling", Source: "harness", Bucket: promptloom.After,
			Body: "Write British English.", RequiresCaps: []string{"locale.en-GB"},
		}), nil
	},
}

func run(w io.Writer) error {
	e, err := explain.Explain([]byte(options), &explain.Options{Stages: []stage.Stage{locale, spelling}})
	if err != nil {
		return err
	}
	if err := e.WriteText(w); err != nil {
		return err
	}
	fmt.Fprintf(w, "\ntrailing user message (%d reminder(s), outside the system string):\n%s\n\n",
		len(e.Reminders.Rows), e.Reminders.Message)
	return e.WriteTraces(w)
}

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		os.Exit(1)
	}
}
