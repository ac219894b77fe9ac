package cli

import (
	"github.com/promptloom/promptloom/assemble"
)

func init() {
	register("replay", "replay --transcript T --assemble [--window TOKENS] [--write DIR] [--format text|json]", runReplay)
}

// runReplay is replay --transcript T --assemble: each recorded call of a
// session assembled again from what it sent, beside the call as recorded.
// It is assemble --transcript under the name a reader of a recorded run
// looks for; --assemble says which replay is asked for, so a later one
// (the strict replay of an event log, say) can take the same command.
func runReplay(e *env, args []string) int {
	fs := newFlags("replay")
	transcript := fs.String("transcript", "", "the recorded run (a file, or postgres://…?session=NAME)")
	asm := fs.Bool("assemble", false, "assemble each call again from its turns (the one replay there is)")
	window := fs.Int("window", 0, "the context window to assemble each call to (0: 200000)")
	write := fs.String("write", "", "save each assembled body in this directory, as NNN-CALL.json, ready to send")
	format := fs.String("format", "text", "text or json")
	pos, err := parseInterleaved(fs, args)
	if err == nil {
		err = oneOf("format", *format, "text", "json")
	}
	if err != nil {
		return e.flagError(fs, "replay", err)
	}
	switch {
	case len(pos) > 0:
		return e.fail("replay: takes no FILE: give the run with --transcript")
	case *transcript == "":
		return e.fail("replay: give the recorded run with --transcript T")
	case !*asm:
		return e.fail("replay: say what to replay: --assemble (each call assembled again, beside it as recorded)")
	}
	return e.assembleRecorded(*transcript, *window, *write, *format, &assemble.Options{})
}
