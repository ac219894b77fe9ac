package cli

import (
	"fmt"

	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/internal/textsafe"
)

func init() {
	register("cache", "cache --transcript FILE|URL ... [--call NAME] [--format text|json] [--strict] [--lint] [--prices FILE] [--min MODEL=N]", runCache)
}

// runCache is cache --transcript FILE: every recorded call's predicted
// cache read and write beside the provider's report, its cost and the
// blame and cost of each miss, and with --lint the session lint. Exit 0;
// 1 under --strict when a miss is blamed on a change. Over a fleet
// (several transcripts, or a store's every chain) each is written so,
// then the fleet's summary (fleet.go).
func runCache(e *env, args []string) int {
	fs := newFlags("cache")
	var transcripts transcriptList
	fs.Var(&transcripts, "transcript", "the transcript (a file, or a postgres:// URL of one session), verified first; repeated, or a URL without ?session= (every chain of the store): a fleet, each predicted on its own, then their figures added up")
	call := fs.String("call", "", "show this call only (NAME, or NAME@LINE); the prediction still follows every call before it")
	format := fs.String("format", "text", "text or json")
	strict := fs.Bool("strict", false, "exit 1 when a miss is blamed on a change (of a tool, fragment, binding, message or setting): for CI")
	lint := fs.Bool("lint", false, "hold each session's history to the caches' rules: what to change, and what it would have saved")
	pricesFile := fs.String("prices", "", "price the calls with this table (JSON, the shape of docs/caching.md's \"Prices\") instead of the built-in one")
	wf := addMinFlag(fs)
	pos, err := parseInterleaved(fs, args)
	if err == nil {
		err = oneOf("format", *format, "text", "json")
	}
	if err != nil {
		return e.flagError(fs, "cache", err)
	}
	if len(transcripts) == 0 || len(pos) > 0 {
		return e.fail("cache: give --transcript FILE, and no other file")
	}
	fleet := isFleet(transcripts)
	if fleet && *call != "" {
		return e.fail("cache: --call names a call of one transcript: give one --transcript (a file, or a URL with ?session=NAME)")
	}
	o := wf.cacheOptions()
	o.Lint = *lint
	if *pricesFile != "" {
		data, err := e.readLimited(*pricesFile, 16<<20)
		if err == nil {
			o.Prices, err = cache.ReadPrices(data)
		}
		if err != nil {
			return e.fail("cache: --prices %s: %v", shown(*pricesFile), err)
		}
	}
	if fleet {
		return e.cacheFleet(transcripts, o, *format, *strict)
	}
	transcript := transcripts[0]
	rs, err := e.recordedRequests(transcript)
	if err != nil {
		return e.fail("cache: %v", err)
	}
	calls := cache.Calls(rs) // a call that gave no body has nothing to predict from
	for _, r := range rs {
		if r.Err != nil {
			// Not predicted, and said so: the run's figures leave it out.
			fmt.Fprintf(e.stderr, "promptloom: cache: call %s (line %d) is not predicted: its request body, as the transcript kept it: %v\n", textsafe.Line(r.Report.Call), r.Report.Line, textsafe.Line(r.Err.Error()))
		}
	}
	if len(calls) == 0 {
		return e.fail("cache: %s: no call gave its request body (recorded through the transport or the proxy), so there is nothing to predict", shown(transcript))
	}
	an := cache.Run(calls, o)
	if *call != "" {
		ref := parseCallRef(*call)
		var keep []cache.Verdict
		for _, v := range an.Verdicts {
			if ref.matches(v.Call, v.Line) {
				keep = append(keep, v)
			}
		}
		if len(keep) == 0 {
			return e.fail("cache: %s: no call %q with a request body", shown(transcript), *call)
		}
		an.Verdicts = keep
	}
	if *format == "json" {
		err = an.WriteJSON(e.stdout)
	} else {
		err = an.WriteText(e.stdout, shown(transcript))
	}
	if err != nil {
		return e.fail("cache: %v", err)
	}
	if *strict && an.Summary.Changes > 0 { // a miss blamed on a change
		fmt.Fprintf(e.stderr, "promptloom: cache: %d miss(es) blamed on a change under --strict\n", an.Summary.Changes)
		return ExitFail
	}
	return ExitOK
}
