package reminder_test

import (
	"fmt"

	"github.com/promptloom/promptloom/reminder"
)

func ExampleSet() {
	var s reminder.Set
	s.Inject(reminder.Reminder{Body: "The build is red.", DedupeKey: "build", TTLTurns: 1})
	removed, _ := s.Inject(reminder.Reminder{Body: "The build is red: fix it first.", DedupeKey: "build",
		Authority: reminder.Corrective, TTLTurns: 2})
	fmt.Println("replaced", removed)
	fmt.Println(reminder.Render(s.Pending()).Message)
	s.Turn()
	s.Turn()
	fmt.Println(len(s.Pending()), "pending after two turns")
	// Output:
	// replaced 1
	// <context-directives>
	// <directive authority="corrective" ttl_turns="2">The build is red: fix it first.</directive>
	// </context-directives>
	// 0 pending after two turns
}
