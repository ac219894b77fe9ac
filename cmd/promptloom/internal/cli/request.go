package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/internal/textsafe"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/request"
	"github.com/promptloom/promptloom/transcript"
)

// The whole request: explain --request, diff --request and cache. A body
// is read once by payload, accounted for by request, and held to its
// provider's cache rules by cache; nothing here knows a provider's wire.

// wholeFlags are the flags the whole-request forms share.
type wholeFlags struct {
	provider, model *string
	minimums        map[string]int
}

func addWholeFlags(fs *flag.FlagSet) *wholeFlags {
	w := addMinFlag(fs)
	w.provider = fs.String("provider", "auto", "with --request, the body's shape: auto, anthropic, openai-chat, openai-responses or gemini")
	w.model = fs.String("model", "", "with --request, the model, when the body names none (a Gemini body's is in its URL), for the cache's minimum and lifetime")
	return w
}

// addMinFlag adds --min alone (cache reads its providers from the
// transcript).
func addMinFlag(fs *flag.FlagSet) *wholeFlags {
	w := &wholeFlags{minimums: map[string]int{}}
	fs.Func("min", "with --request or cache, a model's minimum cacheable prefix, MODEL=TOKENS (repeatable; overrides docs/caching.md's table)", func(v string) error {
		model, n, ok := strings.Cut(v, "=")
		var tokens int
		if _, err := fmt.Sscan(n, &tokens); !ok || err != nil || model == "" || tokens < 0 {
			return fmt.Errorf("want MODEL=TOKENS, got %q", v)
		}
		w.minimums[model] = tokens
		return nil
	})
	return w
}

func (w *wholeFlags) cacheOptions() *cache.Options {
	return &cache.Options{Minimums: w.minimums}
}

// loadRequest reads a body file and builds its manifest; optionsPath, when
// given, attributes its system channel to the options' fragments.
func (e *env) loadRequest(path string, w *wholeFlags, optionsPath string, pl pipeline) (*request.Manifest, []byte, error) {
	p, err := payload.ParseProvider(*w.provider)
	if err != nil {
		return nil, nil, fmt.Errorf("--provider: %w", err)
	}
	body, err := e.readLimited(path, pl.maxBytes)
	if err != nil {
		return nil, nil, err
	}
	e.boundHeap(len(body))
	o := &request.Options{}
	if w.model != nil {
		o.Model = *w.model
	}
	if optionsPath != "" {
		x, err := e.explainFile(optionsPath, pl)
		if err != nil {
			return nil, nil, named(optionsPath, err)
		}
		o.System = x.Manifest
	}
	m, err := newManifest(body, p, o)
	if err != nil {
		return nil, nil, named(path, err)
	}
	return m, body, nil
}

// newManifest reads body as provider p and builds its request manifest.
func newManifest(body []byte, p payload.Provider, o *request.Options) (*request.Manifest, error) {
	r, err := payload.Read(body, p)
	if err != nil {
		return nil, err
	}
	return request.FromPayload(r, o)
}

// recordedRequests verifies a transcript and rebuilds every call's whole
// request (cache.FromTranscript). A run still being written is read as far
// as it holds, and said to be open.
func (e *env) recordedRequests(arg string) ([]cache.Recorded, error) {
	data, err := e.readTranscript(context.Background(), arg, maxTranscriptBytes)
	if err != nil {
		return nil, err
	}
	rep, err := transcript.Verify(bytes.NewReader(data), &transcript.Options{MaxLineBytes: maxLineBytes})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", shown(arg), err)
	}
	if !rep.Holds() {
		return nil, fmt.Errorf("%s: the transcript does not verify (promptloom verify --transcript says why)", shown(arg))
	}
	e.noteOpen(arg, rep)
	rs, err := cache.FromTranscript(data, rep)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", shown(arg), err)
	}
	return rs, nil
}

// pickCall finds one call by name (NAME@LINE for a name used twice),
// with its request manifest.
func pickCall(rs []cache.Recorded, call string) (*cache.Recorded, error) {
	r, err := findRecorded(rs, call)
	if err != nil {
		return nil, err
	}
	switch {
	case r.Err != nil:
		return nil, fmt.Errorf("call %s (line %d): its request body, as the transcript kept it: %w", call, r.Report.Line, r.Err)
	case r.Request == nil:
		return nil, fmt.Errorf("call %s (line %d) did not give its request body: nothing says what it sent beyond its messages", call, r.Report.Line)
	}
	return r, nil
}

// findRecorded finds one call by name, whatever its body.
func findRecorded(rs []cache.Recorded, call string) (*cache.Recorded, error) {
	rep := &transcript.Report{}
	for _, r := range rs {
		rep.Calls = append(rep.Calls, *r.Report)
	}
	c, err := verifiedCallAny(rep, call)
	if err != nil {
		return nil, err
	}
	for i := range rs {
		if rs[i].Report.Line == c.Line {
			return &rs[i], nil
		}
	}
	return nil, fmt.Errorf("no call %q", call)
}

// writeRecordedBody is explain --request --format raw on a recorded call:
// its body as the transcript keeps it (redacted), byte for byte, nothing
// added. A call a manifest accounts for keeps its body in parts (its
// messages, tools, parameters and system channel): it is written as
// request rebuilds it, and stderr says so.
func (e *env) writeRecordedBody(tr, call string) int {
	rs, err := e.recordedRequests(tr)
	if err != nil {
		return e.fail("explain: %v", err)
	}
	r, err := findRecorded(rs, call)
	if err != nil {
		return e.fail("explain: %s: %v", shown(tr), err)
	}
	if r.Body == nil {
		return e.fail("explain: %s: call %s (line %d) did not give its request body: there is none to write", shown(tr), call, r.Report.Line)
	}
	if !r.Report.Unattributed {
		fmt.Fprintf(e.stderr, "promptloom: call %s (line %d) has a manifest, so its transcript keeps its body in parts: written as rebuilt from them (its keys in another order than sent)\n", textsafe.Line(call), r.Report.Line)
	}
	if _, err := e.stdout.Write(r.Body); err != nil {
		return e.fail("explain: %v", err)
	}
	return ExitOK
}

// explainRequest is explain --request BODY [OPTIONS] (or --transcript
// FILE --call NAME --request).
func (e *env) explainRequest(pos []string, w *wholeFlags, format string, lint, strict bool, since, tr, call string, pl pipeline) int {
	if format == "raw" {
		// The exact bytes are the transcript's to give: a body file
		// given here is already its own raw form.
		switch {
		case tr == "":
			return e.fail("explain: --request --format raw writes a recorded call's body as its transcript keeps it: give --transcript FILE --call NAME (a body file is its own raw form)")
		case call == "" || len(pos) > 0:
			return e.fail("explain: --transcript FILE --call NAME --request explains a recorded call's whole request: give --call NAME and no file")
		case lint || strict || since != "":
			return e.fail("explain: --request --format raw writes the body as recorded: --lint, --strict and --since do not apply")
		}
		return e.writeRecordedBody(tr, call)
	}
	if err := oneOf("format", format, "text", "json", "html", "raw"); err != nil {
		return e.fail("explain: --request: %v", err)
	}
	var (
		m, prev *request.Manifest
		body    []byte
		run     *cache.Verdict // the call's verdict in its run, for a recorded call
		name    string
		err     error
	)
	if tr != "" {
		if call == "" || len(pos) > 0 {
			return e.fail("explain: --transcript FILE --call NAME --request explains a recorded call's whole request: give --call NAME and no file")
		}
		rs, err := e.recordedRequests(tr)
		if err != nil {
			return e.fail("explain: %v", err)
		}
		r, err := pickCall(rs, call)
		if err != nil {
			return e.fail("explain: %s: %v", shown(tr), err)
		}
		m, body = r.Request, r.Body
		name = fmt.Sprintf("call %s (line %d of %s)", call, r.Report.Line, shown(tr))
		// The call's figures are the ones cache gives it in its run, not
		// a prediction of the request alone: one figure for one call.
		for _, v := range cache.Run(cache.Calls(rs), w.cacheOptions()).Verdicts {
			if v.Line == r.Report.Line {
				run = &v
			}
		}
	} else {
		if len(pos) == 0 || len(pos) > 2 {
			return e.fail("explain: --request takes the body, and optionally the options file its system prompt was built from, got %d files", len(pos))
		}
		opts := ""
		if len(pos) == 2 {
			opts = pos[1]
		}
		if m, body, err = e.loadRequest(pos[0], w, opts, pl); err != nil {
			return e.fail("explain: %v", err)
		}
		name = pos[0]
	}
	if since != "" {
		if prev, _, err = e.loadRequest(since, w, "", pl); err != nil {
			return e.fail("explain: --since: %v", err)
		}
	}
	v := cache.Explain(m, prev, w.cacheOptions(), lint || strict)
	v.Body = body
	if run != nil && prev == nil {
		v.Verdict = run
	}
	if format != "text" {
		// The text puts the findings on stdout with the rest; JSON and
		// HTML carry them too, and a terminal still sees them.
		for _, f := range v.Lint {
			fmt.Fprintln(e.stderr, "promptloom: lint: "+textsafe.Line(f.String()))
		}
	}
	switch format {
	case "json":
		err = v.WriteJSON(e.stdout)
	case "html":
		err = v.WriteHTML(e.stdout, name)
	default:
		err = v.WriteText(e.stdout, name)
	}
	if err != nil {
		return e.fail("explain: %v", err)
	}
	errs := 0
	for _, f := range v.Lint {
		if f.Severity == "error" {
			errs++
		}
	}
	switch {
	case strict && len(v.Lint) > 0:
		fmt.Fprintf(e.stderr, "promptloom: lint: %d finding(s) under --strict\n", len(v.Lint))
		return ExitFail
	case errs > 0:
		// An error is a request the provider refuses: no CI flag needed.
		fmt.Fprintf(e.stderr, "promptloom: lint: %d error(s): the provider refuses this request\n", errs)
		return ExitFail
	}
	return ExitOK
}

// diffRequest is diff --request A B: where body B leaves body A's prefix,
// and what that costs under the provider's cache (two recorded calls are
// diffRecordedRequests'). Exit 0 when B keeps A's whole prefix, 1 when it
// leaves it.
func (e *env) diffRequest(pos []string, w *wholeFlags, format string, pl pipeline) int {
	if err := oneOf("format", format, "text", "json"); err != nil {
		return e.fail("diff: --request: %v", err)
	}
	if len(pos) != 2 {
		return e.fail("diff: --request takes two bodies, A then B, got %d", len(pos))
	}
	a, _, err := e.loadRequest(pos[0], w, "", pl)
	var b *request.Manifest
	if err == nil {
		b, _, err = e.loadRequest(pos[1], w, "", pl)
	}
	if err != nil {
		return e.fail("diff: %v", err)
	}
	an, bn := pos[0], pos[1]
	c := cache.Compare(cache.Call{Name: an, Request: a}, cache.Call{Name: bn, Request: b}, w.cacheOptions())
	if format == "json" {
		err = c.WriteJSON(e.stdout)
	} else {
		err = c.WriteText(e.stdout)
	}
	if err != nil {
		return e.fail("diff: %v", err)
	}
	if c.KeepsPrefix {
		return ExitOK
	}
	return ExitFail
}
