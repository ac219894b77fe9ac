package cli

import (
	"fmt"
	"io"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/internal/textsafe"
	"github.com/promptloom/promptloom/manifest"
)

func init() {
	register("explain", "explain [--format text|json|html|raw|payload:PROVIDER] [--since OLD] [--max-breakpoints N] [--lint] [--strict] [--traces] [--project DIR] [--budget N] [--counter NAME] [--bindings FILE] [--max-bytes N] [FILE|-] | explain --transcript FILE --call NAME [--format text|json|html|raw] | explain --request [--provider P] [--model NAME] [--lint [--since PREVIOUS_BODY]] [--strict] [--min MODEL=N] [--format text|json|html] BODY.json [OPTIONS.json] | explain --request --transcript FILE --call NAME [--format text|json|html|raw]", runExplain)
	register("manifest", "manifest [--hash] [--project DIR] [--budget N] [--counter NAME] [--bindings FILE] [--max-bytes N] [FILE|-]", runManifest)
}

// explainFile reads options from a file (or stdin) and explains them.
func (e *env) explainFile(name string, pl pipeline) (*explain.Explanation, error) {
	if err := e.loadBindings(&pl); err != nil {
		return nil, err
	}
	data, err := e.readLimited(name, pl.maxBytes)
	if err != nil {
		return nil, err
	}
	e.boundHeap(len(data))
	files, done := optionsDir(name)
	defer done()
	pl.explain.Files = files
	return explain.Explain(data, &pl.explain)
}

// onePath returns the single optional positional argument, "-" by default.
func onePath(pos []string) (string, bool) {
	switch len(pos) {
	case 0:
		return "-", true
	case 1:
		return pos[0], true
	}
	return "", false
}

func runExplain(e *env, args []string) int {
	fs := newFlags("explain")
	format := fs.String("format", "text", "text, json, html, raw (the prompt's exact bytes), or payload:PROVIDER (the provider's system field; docs/payload.md)")
	lint := fs.Bool("lint", false, "warn on stderr about gated fragments that split the prompt cache and options Harn accepts but are likely mistakes; with --request, hold the request to its provider's cache rules (the findings end the text on stdout, and go to stderr with the other formats)")
	strict := fs.Bool("strict", false, "with --lint (implied), exit 1 when there is any warning: for CI")
	traces := fs.Bool("traces", false, "with --format text, list every stage of the run")
	pipelineOpts := pipelineFlags(fs)
	pf := addPlaceFlags(fs)
	transcript := fs.String("transcript", "", "explain a recorded call instead, from its transcript (a file, or a postgres:// URL of one session), verified first; with --call")
	call := fs.String("call", "", "with --transcript, the call to explain, by its name")
	whole := fs.Bool("request", false, "explain a whole provider request instead: explain --request BODY.json [OPTIONS.json], or a recorded call's with --transcript FILE --call NAME (tools, system and messages in the cache's order; docs/caching.md)")
	wf := addWholeFlags(fs)
	pos, err := parseInterleaved(fs, args)
	if err == nil && *whole {
		pl, err := pipelineOpts()
		if err != nil {
			return e.flagError(fs, "explain", err)
		}
		return e.explainRequest(pos, wf, *format, *lint, *strict, *pf.since, *transcript, *call, pl)
	}
	if err == nil && (*transcript != "" || *call != "") {
		return e.explainRecorded(fs, pos, *transcript, *call, *format)
	}
	if err == nil {
		err = oneOf("format", *format, append([]string{"text", "json", "html", "raw"}, payloadFormats()...)...)
	}
	var pl pipeline
	if err == nil {
		pl, err = pipelineOpts()
	}
	if err != nil {
		return e.flagError(fs, "explain", err)
	}
	path, ok := onePath(pos)
	if !ok {
		return e.fail("explain: takes one options file, got %d", len(pos))
	}
	if err := e.loadBindings(&pl); err != nil {
		return e.fail("%v", err)
	}
	x, err := e.explainFile(path, pl)
	if err != nil {
		return e.fail("%v", named(path, err))
	}
	if *lint || *strict {
		var since *manifest.Manifest
		if *pf.since != "" {
			if since, err = e.readSince(*pf.since, path, pl); err != nil {
				return e.fail("explain: --since: %v", err)
			}
		}
		x.Lint = explain.Lint(x, since)
		for _, w := range x.Lint {
			fmt.Fprintln(e.stderr, "promptloom: lint: "+textsafe.Line(w.Message))
		}
	}
	// --since serves --lint, or a payload's breakpoints.
	lintSince := (*lint || *strict) && *pf.max < 0
	if p, ok := payloadFormat(*format); ok || (pf.set() && !lintSince) {
		return e.writePayload(x, p, pf)
	}
	switch *format {
	case "json":
		err = x.WriteJSON(e.stdout)
	case "html":
		err = x.WriteHTML(e.stdout, path)
	case "raw":
		_, err = io.WriteString(e.stdout, x.System)
	default:
		err = x.WriteText(e.stdout)
		if err == nil && *traces {
			err = x.WriteTraces(e.stdout)
		}
	}
	if err != nil {
		return e.fail("explain: %v", err)
	}
	if *strict && len(x.Lint) > 0 {
		fmt.Fprintf(e.stderr, "promptloom: lint: %d warning(s) under --strict\n", len(x.Lint))
		return ExitFail
	}
	return ExitOK
}

func runManifest(e *env, args []string) int {
	fs := newFlags("manifest")
	hash := fs.Bool("hash", false, "print the content hash alone")
	pipelineOpts := pipelineFlags(fs)
	pos, err := parseInterleaved(fs, args)
	var pl pipeline
	if err == nil {
		pl, err = pipelineOpts()
	}
	if err != nil {
		return e.flagError(fs, "manifest", err)
	}
	path, ok := onePath(pos)
	if !ok {
		return e.fail("manifest: takes one options file, got %d", len(pos))
	}
	if err := e.loadBindings(&pl); err != nil {
		return e.fail("%v", err)
	}
	x, err := e.explainFile(path, pl)
	if err != nil {
		return e.fail("%v", named(path, err))
	}
	return e.printManifest(x.Manifest, *hash)
}

func (e *env) printManifest(m *manifest.Manifest, hashOnly bool) int {
	b, err := m.Canonical()
	if err != nil {
		return e.fail("manifest: %v", err)
	}
	if hashOnly {
		b = []byte(digest.Bytes(b).String())
	}
	e.stdout.Write(append(b, '\n'))
	return ExitOK
}
