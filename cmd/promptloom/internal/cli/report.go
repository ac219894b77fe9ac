package cli

import (
	"io"

	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/transcript"
	"github.com/promptloom/promptloom/transcript/report"
)

// maxCacheReportBytes bounds the transcript report keeps to predict the
// cache from; a larger one is reported without the predictions.
const maxCacheReportBytes = 256 << 20

// capped keeps what is written to it, up to limit bytes.
type capped struct {
	b     []byte
	limit int
	over  bool
}

func (c *capped) Write(p []byte) (int, error) {
	if !c.over && len(c.b)+len(p) <= c.limit {
		c.b = append(c.b, p...)
	} else {
		c.over, c.b = true, nil
	}
	return len(p), nil
}

func init() {
	register("report", "report --transcript FILE|URL|- ... [--key VERIFIER] [--prices FILE] [--format text|html|json]", runReport)
}

// runReport renders a transcript as a run a person can read: each call's
// fragments and verdict, and what changed between calls of one role. The
// exit code is verify's: 0 when the run verifies, 1 when it does not (the
// page is written either way, marking what failed). Over a fleet
// (several transcripts, or a store's every chain) each is reported so,
// then the fleet's cache summary (fleet.go), in text or JSON.
func runReport(e *env, args []string) int {
	fs := newFlags("report")
	var transcripts transcriptList
	fs.Var(&transcripts, "transcript", "the JSONL transcript to report, or a postgres:// URL of one session (?session=NAME); repeated, or a URL without ?session= (every chain of the store): each reported, then the fleet's cache figures added up")
	format := fs.String("format", "text", "text, html or json (the verifier's report, as verify --format json writes it)")
	key := fs.String("key", "", "hold the transcript to this verifier key (NAME.pub), as verify --key does, and show what its signature covers")
	pricesFile := fs.String("prices", "", "price the calls with this table (JSON, the shape of docs/caching.md's \"Prices\") instead of the built-in one")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return e.flagError(fs, "report", err)
	}
	if err := oneOf("format", *format, "text", "html", "json"); err != nil {
		return e.fail("report: %v", err)
	}
	if len(transcripts) == 0 || len(pos) > 0 {
		return e.fail("report: takes --transcript FILE and nothing else")
	}
	fleet := isFleet(transcripts)
	if fleet && *format == "html" {
		return e.fail("report: --format html is the page of one transcript: report a fleet in text or json, or name one with ?session=NAME")
	}
	// One pass: the page shows what Verify read and judged, never a
	// second reading of a transcript that may have changed meanwhile.
	o := &transcript.Options{MaxLineBytes: maxLineBytes}
	if *key != "" {
		if o.Verifier, err = e.verifier(*key); err != nil {
			return e.fail("report: %v", err)
		}
	}
	co := &cache.Options{}
	if *pricesFile != "" {
		data, err := e.readLimited(*pricesFile, 16<<20)
		if err == nil {
			co.Prices, err = cache.ReadPrices(data)
		}
		if err != nil {
			return e.fail("report: --prices %s: %v", shown(*pricesFile), err)
		}
	}
	if fleet {
		return e.reportFleet(transcripts, o, co, *format)
	}
	trArg := transcripts[0]
	// The bytes verified are kept (up to a bound) so that each call's
	// whole request can be held to its provider's cache rules from them.
	kept := &capped{limit: maxCacheReportBytes}
	name, rep, verr, err := e.readOne(trArg, func(r io.Reader) (*transcript.Report, error) {
		return transcript.Verify(io.TeeReader(r, kept), o)
	})
	if err != nil {
		return e.fail("report: %v", err)
	}
	ro := &report.Options{}
	if verr == nil && !kept.over {
		if rs, err := cache.FromTranscript(kept.b, rep); err == nil {
			// The same bytes give each proxied call's request text.
			ro.Requests = rs
			if calls := cache.Calls(rs); len(calls) > 0 {
				ro.Cache = cache.Run(calls, co)
			}
		}
	}
	switch *format {
	case "json":
		v := newVerdict(name, rep, verr)
		if err := writeJSON(e, v); err != nil {
			return e.fail("report: %v", err)
		}
		if !v.OK {
			return ExitFail
		}
		return ExitOK
	case "html":
		err = report.WriteHTML(e.stdout, name, rep, ro)
	default:
		err = report.WriteText(e.stdout, rep, ro)
	}
	if err != nil {
		return e.fail("report: %v", err)
	}
	// After a page, a FAIL line goes to stderr: the page stays HTML.
	w := e.stdout
	if *format == "html" {
		w = e.stderr
	}
	return verdict(w, rep, verr)
}
