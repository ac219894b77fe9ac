package reminder_test

import (
	"fmt"
	"strings"

	"github.com/promptloom/promptloom/harn/reminder"
)

func ExampleSet() {
	var s reminder.Set
	s.Inject(reminder.Reminder{Body: "The build is red.", DedupeKey: "build", TTLTurns: 1})
	removed, _ := s.Inject(reminder.Reminder{Body: "The build is red: fix it first.", DedupeKey: "build",
		Authority: "corrective", TTLTurns: 2})
	s.Inject(reminder.Reminder{Body: "Never push to <main>."}) // contract by default
	fmt.Println("replaced", removed)
	r := s.Render(nil)
	fmt.Println(r.Message[strings.Index(r.Message, "<directive "):]) // after Harn's instructions

	// The first request carries the envelope as a trailing user message; on
	// the next one the same directives are already in history and are not
	// issued again.
	history := []string{"fix the tests", r.Message}
	fmt.Printf("%q to re-issue\n", s.Render(history).Message)
	s.Turn()
	s.Turn()
	fmt.Println(len(s.Render(nil).Rows), "pending after two turns")
	// Output:
	// replaced 1
	// <directive authority="contract">
	// Never push to &lt;main&gt;.
	// </directive>
	// <directive authority="corrective" ttl_turns="2">
	// The build is red: fix it first.
	// </directive>
	// </context-directives>
	// "" to re-issue
	// 1 pending after two turns
}

func ExampleSet_Render() {
	var s reminder.Set
	s.Inject(reminder.Reminder{Body: "Context is 82% full; wrap up.", Authority: "advisory"})
	r := s.Render(nil)
	fmt.Println(r.Message[:len("<context-directives>\nFollow each directive")])
	row := r.Rows[0]
	fmt.Println(row.ID, row.Authority, r.Message[row.Offset:row.Offset+row.Bytes])
	// Output:
	// <context-directives>
	// Follow each directive
	// r1 advisory Context is 82% full; wrap up.
}
