package cli

import (
	"context"

	"github.com/promptloom/promptloom/demo"
	"github.com/promptloom/promptloom/provenance/eventlog"
)

func init() {
	register("demo", "demo prompt-guidance [--format text|json|html] | demo negotiation [--db FILE] [--format text|json]", runDemo)
}

func runDemo(e *env, args []string) int {
	if len(args) == 0 {
		return e.fail("demo: name a scenario: prompt-guidance")
	}
	switch args[0] {
	case "prompt-guidance":
		return runPromptGuidance(e, args[1:])
	case "negotiation":
		return runNegotiation(e, args[1:])
	}
	return e.fail("demo: unknown scenario %q (have: prompt-guidance, negotiation)", args[0])
}

func runPromptGuidance(e *env, args []string) int {
	fs := newFlags(e, "demo")
	format := fs.String("format", "text", "text, json or html")
	pos, err := parseInterleaved(fs, args)
	if err == nil {
		err = oneOf("format", *format, "text", "json", "html")
	}
	if err != nil {
		return e.flagError("demo", err)
	}
	if len(pos) > 0 {
		return e.fail("demo prompt-guidance: takes no arguments, got %q", pos[0])
	}
	p, err := demo.RunPromptGuidance()
	if err != nil {
		return e.fail("demo: %v", err)
	}
	switch *format {
	case "json":
		err = p.WriteJSON(e.stdout)
	case "html":
		err = p.WriteHTML(e.stdout)
	default:
		err = p.WriteText(e.stdout)
	}
	if err != nil {
		return e.fail("demo: %v", err)
	}
	return ExitOK
}

func runNegotiation(e *env, args []string) int {
	fs := newFlags(e, "demo")
	format := fs.String("format", "text", "text or json")
	db := fs.String("db", "", "keep the event log in this SQLite file (new or empty); in memory when not given")
	pos, err := parseInterleaved(fs, args)
	if err == nil {
		err = oneOf("format", *format, "text", "json")
	}
	if err != nil {
		return e.flagError("demo", err)
	}
	if len(pos) > 0 {
		return e.fail("demo negotiation: takes no arguments, got %q", pos[0])
	}
	var store eventlog.Store = eventlog.NewMemory(eventlog.WithClock(demo.NegotiationClock()))
	if *db != "" {
		s, err := eventlog.OpenSQLite(*db, eventlog.WithClock(demo.NegotiationClock()))
		if err != nil {
			return e.fail("demo negotiation: %v", err)
		}
		store = s
	}
	defer store.Close()
	n, err := demo.RunNegotiation(context.Background(), store, &demo.ScriptedModel{})
	if err != nil {
		return e.fail("demo negotiation: %v", err)
	}
	if *format == "json" {
		err = n.WriteJSON(e.stdout)
	} else {
		err = n.WriteText(e.stdout)
	}
	if err != nil {
		return e.fail("demo negotiation: %v", err)
	}
	return ExitOK
}
