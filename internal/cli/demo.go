package cli

import (
	"github.com/promptloom/promptloom/demo"
)

func init() {
	register("demo", "demo prompt-guidance [--format text|json|html]", runDemo)
}

func runDemo(e *env, args []string) int {
	if len(args) == 0 {
		return e.fail("demo: name a scenario: prompt-guidance")
	}
	switch args[0] {
	case "prompt-guidance":
		return runPromptGuidance(e, args[1:])
	}
	return e.fail("demo: unknown scenario %q (have: prompt-guidance)", args[0])
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
