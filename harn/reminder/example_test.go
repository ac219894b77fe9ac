package reminder_test

import (
	"fmt"

	"github.com/promptloom/promptloom/harn/reminder"
)

func ExampleSet() {
	var s reminder.Set
	s.Inject(reminder.Reminder{Body: "The build is red.", DedupeKey: "build", TTLTurns: 1})
	removed, _ := s.Inject(reminder.Reminder{Body: "The build is red: fix it first.", DedupeKey: "build",
		Authority: reminder.Corrective, TTLTurns: 2})
	s.Inject(reminder.Reminder{Body: "Never push to main."}) // contract by default
	fmt.Println("replaced", removed)
	r := reminder.Render(s.Pending())
	for _, d := range r.Directives {
		fmt.Println(d)
	}
	// The first request carries the envelope; on the next one the same
	// directives are already in history and are not issued again.
	history := []string{"fix the tests", r.Message}
	fmt.Println(len(reminder.Uncommitted(history, r.Directives)), "to re-issue")
	s.Turn()
	s.Turn()
	fmt.Println(len(s.Pending()), "pending after two turns")
	// Output:
	// replaced 1
	// <directive authority="contract">
	// Never push to main.
	// </directive>
	// <directive authority="corrective" ttl_turns="2">
	// The build is red: fix it first.
	// </directive>
	// 0 to re-issue
	// 1 pending after two turns
}

func ExampleEnvelope() {
	msg, _ := reminder.Envelope([]string{reminder.Directive(reminder.Reminder{Body: "a < b", Authority: reminder.Advisory})})
	fmt.Println(msg[:len("<context-directives>\nFollow each directive")])
	fmt.Println(msg[len("<context-directives>\n")+len(reminder.Instructions):])
	// Output:
	// <context-directives>
	// Follow each directive
	//
	// <directive authority="advisory">
	// a &lt; b
	// </directive>
	// </context-directives>
}
