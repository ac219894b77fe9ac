package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/promptloom/promptloom/cmd/promptloom/internal/demo"
	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/journal/replay"
)

func init() {
	register("demo", "demo prompt-guidance [--format text|json|html] | demo negotiation [--db LOG | --record LOG | --replay LOG] [--transcript FILE] [--sign KEY [--witness URL ...]] [--rank SLOT=N] [--format text|json]", runDemo)
}

func runDemo(e *env, args []string) int {
	if len(args) == 0 {
		return e.fail("demo: name a scenario (have: prompt-guidance, negotiation)")
	}
	if isHelp(args[0]) {
		return demoHelp(e)
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
	fs := newFlags("demo prompt-guidance")
	format := fs.String("format", "text", "text, json or html")
	pos, err := parseInterleaved(fs, args)
	if err == nil {
		err = oneOf("format", *format, "text", "json", "html")
	}
	if err != nil {
		return e.flagError(fs, "demo", err)
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
	fs := newFlags("demo negotiation")
	format := fs.String("format", "text", "text or json")
	db := fs.String("db", "", "keep the event log in LOG (new or empty): a SQLite file, or a postgres:// URL; in memory when not given")
	record := fs.String("record", "", "record the run: the log (with pinned answers) in LOG, the transcript in LOG.jsonl or --transcript")
	replay := fs.String("replay", "", "rerun a recorded run from LOG and its transcript with no model call")
	transcript := fs.String("transcript", "", "the transcript of --record or --replay: a file (LOG.jsonl when not given; needed when LOG is a URL), or a postgres:// URL (?session=NAME; negotiation when not given)")
	sign := fs.String("sign", "", "with --record: sign the transcript with the signer key KEY (promptloom keygen's NAME.key)")
	witnesses := witnessURLs(fs)
	ranks := map[string]int{}
	fs.Func("rank", "SLOT=N: give the parts in SLOT rank N (repeatable)", func(v string) error {
		slot, n, ok := strings.Cut(v, "=")
		r, err := strconv.Atoi(n)
		if !ok || slot == "" || err != nil {
			return fmt.Errorf("want SLOT=N, got %q", v)
		}
		ranks[slot] = r
		return nil
	})
	pos, err := parseInterleaved(fs, args)
	if err == nil {
		err = oneOf("format", *format, "text", "json")
	}
	if err != nil {
		return e.flagError(fs, "demo", err)
	}
	if len(pos) > 0 {
		return e.fail("demo negotiation: takes no arguments, got %q", pos[0])
	}
	given := 0
	for _, f := range []string{*db, *record, *replay} {
		if f != "" {
			given++
		}
	}
	if given > 1 {
		return e.fail("demo negotiation: give at most one of --db, --record, --replay")
	}
	if *transcript != "" && *record == "" && *replay == "" {
		return e.fail("demo negotiation: --transcript goes with --record or --replay")
	}
	if len(*witnesses) > 0 && *sign == "" {
		return e.fail("demo negotiation: --witness goes with --sign")
	}
	if *sign != "" && *record == "" {
		return e.fail("demo negotiation: --sign goes with --record")
	}
	if log := *record + *replay; log != "" && *transcript == "" {
		if demo.IsURL(log) {
			return e.fail("demo negotiation: the log is a URL: give the transcript's file with --transcript")
		}
		*transcript = log + ".jsonl"
	}
	ctx := context.Background()
	set := demo.Settings{Ranks: ranks}
	if *replay != "" {
		return e.replayNegotiation(ctx, *replay, *transcript, set)
	}

	var store eventlog.Store = eventlog.NewMemory(&eventlog.Options{Clock: demo.NegotiationClock()})
	if log := *db + *record; log != "" {
		s, err := demo.OpenLog(ctx, log, demo.NegotiationClock(), true)
		if err != nil {
			return e.fail("demo negotiation: %v", err)
		}
		store = s
	}
	defer store.Close()
	var n *demo.Negotiation
	if *record != "" {
		o := &journal.Options{Clock: demo.NegotiationClock(), Session: "negotiation", Witnesses: *witnesses}
		if *sign != "" {
			if o.Signer, err = e.signer(*sign); err != nil {
				return e.fail("demo negotiation: %v", err)
			}
		}
		if !demo.IsURL(*transcript) {
			if _, err := os.Stat(*transcript); err == nil {
				return e.fail("demo negotiation: %s exists; record into a new transcript", *transcript)
			}
		}
		// Refuse a used log before the transcript is created: a failed
		// record leaves nothing behind to block its retry.
		if err := demo.NeedEmpty(ctx, store); err != nil {
			return e.fail("demo negotiation: %v", err)
		}
		j, undo, err := openJournal(ctx, *transcript, o)
		if err != nil {
			return e.fail("demo negotiation: %v", err)
		}
		n, err = demo.RecordNegotiation(ctx, store, j, set)
		cerr := j.Close()
		if err == nil && errors.Is(cerr, journal.ErrNotCosigned) {
			// Recorded whole and signed: kept, and the command fails.
			return e.fail("demo negotiation: recorded into %s, but %v", shown(*transcript), cerr)
		}
		if err == nil {
			err = cerr
		}
		if err != nil {
			undo()
			return e.fail("demo negotiation: %v", err)
		}
	} else {
		n, err = demo.RunNegotiation(ctx, store, &demo.ScriptedModel{}, set)
		if err != nil {
			return e.fail("demo negotiation: %v", err)
		}
	}
	if *format == "json" {
		err = n.WriteJSON(e.stdout)
	} else {
		err = n.WriteText(e.stdout)
	}
	if err != nil {
		return e.fail("demo negotiation: %v", err)
	}
	if *record != "" && *format == "text" {
		fmt.Fprintf(e.stdout, "\nrecorded %d calls: the log and its pins in %s, the transcript in %s\n", len(n.Calls), shown(*record), shown(*transcript))
	}
	return ExitOK
}

// replayNegotiation reruns a recorded negotiation: exit 0 when every
// manifest is the recorded one and the model was never called, 1 when a
// call was not pinned or a manifest differs.
func (e *env) replayNegotiation(ctx context.Context, log, transcriptFile string, set demo.Settings) int {
	transcript, err := e.readTranscript(ctx, transcriptFile, maxTranscriptBytes)
	if err != nil {
		return e.fail("demo negotiation: --replay: %v", err)
	}
	if !demo.IsURL(log) {
		if _, err := os.Stat(log); err != nil {
			return e.fail("demo negotiation: --replay: %v", err)
		}
	}
	recorded, err := demo.OpenLog(ctx, log, nil, false)
	if err != nil {
		return e.fail("demo negotiation: --replay: %v", err)
	}
	defer recorded.Close()
	r, err := demo.ReplayNegotiation(ctx, recorded, transcript, set)
	if err != nil && !errors.Is(err, replay.ErrPinMiss) {
		return e.fail("demo negotiation: --replay: %v", err)
	}
	if werr := r.WriteText(e.stdout); werr != nil {
		return e.fail("demo negotiation: %v", werr)
	}
	if err != nil {
		fmt.Fprintf(e.stdout, "FAIL %v\n", err)
		return ExitFail
	}
	if !r.Identical() {
		return ExitFail
	}
	return ExitOK
}
