package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/assemble"
	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/internal/textsafe"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/request"
)

func init() {
	register("assemble", "assemble [--format text|json|html|body] [--strategy priced|when-full] [--expected-turns N] [--keep TOKENS] FILE | assemble --transcript T [--window TOKENS] [--write DIR] [--format text|json]", runAssemble)
}

// runAssemble is assemble FILE: the conversation in FILE (docs/assemble.md)
// assembled into its latest call's request body, and every part and
// breakpoint accounted for: text (a line a part), json (the manifest), or
// body (the request body to send). With --transcript, each recorded call
// is assembled again from what it sent, and shown beside the call as
// recorded.
func runAssemble(e *env, args []string) int {
	fs := newFlags("assemble")
	format := fs.String("format", "text", "text, json (the manifest), html (the assembled request as explain --request shows it) or body (the request body)")
	strategy := fs.String("strategy", "priced", "when to compact: priced (when a cut pays for itself, or the turns do not fit) or when-full")
	expected := fs.Int("expected-turns", 0, "further calls a cut is expected to serve (0: 20)")
	keep := fs.Int("keep", 0, "tokens of the latest turns a compaction leaves whole (0: a quarter of the input budget)")
	transcript := fs.String("transcript", "", "assemble each recorded call of this transcript again, and show it beside the call as recorded (Anthropic calls)")
	window := fs.Int("window", 0, "with --transcript: the context window to assemble each call to (0: 200000)")
	write := fs.String("write", "", "with --transcript: save each assembled body in this directory, as NNN-CALL.json")
	pos, err := parseInterleaved(fs, args)
	if err == nil {
		err = oneOf("format", *format, "text", "json", "html", "body")
	}
	if err == nil {
		err = oneOf("strategy", *strategy, "priced", "when-full")
	}
	if err != nil {
		return e.flagError(fs, "assemble", err)
	}
	o := &assemble.Options{ExpectedTurns: *expected, KeepRecent: *keep, WhenFull: *strategy == "when-full"}
	if *transcript != "" {
		if len(pos) > 0 || *format == "body" || *format == "html" {
			return e.fail("assemble: --transcript takes no FILE, and --format text or json")
		}
		return e.assembleRecorded(*transcript, *window, *write, *format, o)
	}
	if *window != 0 || *write != "" {
		return e.fail("assemble: --window and --write go with --transcript; a FILE gives its own window")
	}
	if len(pos) != 1 {
		return e.fail("assemble: give one conversation FILE (or - for stdin)")
	}
	data, err := e.readLimited(pos[0], promptloom.DefaultMaxBytes)
	if err != nil {
		return e.fail("assemble: %v", err)
	}
	c, err := assemble.Read(data)
	if err != nil {
		return e.fail("assemble: %s: %v", shown(pos[0]), err)
	}
	body, am, err := assemble.Assemble(c, o)
	if err != nil {
		return e.fail("assemble: %s: %v", shown(pos[0]), err)
	}
	switch *format {
	case "html":
		var m *request.Manifest
		if m, err = newManifest(body, c.Provider, &request.Options{Model: c.Model}); err == nil {
			x := cache.Explain(m, nil, nil, true)
			x.Body = body
			err = x.WriteHTML(e.stdout, shown(pos[0]))
		}
	case "body":
		_, err = e.stdout.Write(append(body, '\n'))
	case "json":
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(am)
	default:
		err = writeAssembly(e, am)
	}
	if err != nil {
		return e.fail("assemble: %v", err)
	}
	return ExitOK
}

// writeAssembly prints a manifest for a person: the totals, a line a
// part, the breakpoints and the compactions.
func writeAssembly(e *env, m *assemble.Manifest) error {
	counts := map[string]int{}
	for _, p := range m.Parts {
		counts[p.Status]++
	}
	fmt.Fprintf(e.stdout, "%s %s: %d input tokens (%s) of %d (window %d, output reserve %d); %d included, %d cleared, %d summarised, %d dropped\n",
		textsafe.Line(m.Provider), textsafe.Line(m.Model), m.Tokens, m.Counter, m.Window-m.OutputReserve, m.Window, m.OutputReserve,
		counts[assemble.Included], counts[assemble.Cleared], counts[assemble.Summarised], counts[assemble.Dropped])
	fmt.Fprintf(e.stdout, "priced at: %s\n", textsafe.Line(m.Prices))
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "status\tid\tkind\ttokens\tpath\treason")
	for _, p := range m.Parts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", p.Status, textsafe.Line(p.ID), p.Kind, p.Tokens, p.Path, textsafe.Line(p.Reason))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, b := range m.Breakpoints {
		where := b.Path
		if where == "" {
			where = "(implicit)"
		}
		fmt.Fprintf(e.stdout, "breakpoint %s %s (%d tokens): %s\n", where, b.TTL, b.Tokens, textsafe.Line(b.Reason))
	}
	for i, c := range m.Compactions {
		fmt.Fprintf(e.stdout, "compaction %d, at %s: %d cleared, %d summarised, %d dropped, %d tokens saved, %d rewritten: %s\n",
			i+1, textsafe.Line(c.At), c.Cleared, c.Summarised, c.Dropped, c.Saved, c.Rewrite, textsafe.Line(c.Reason))
	}
	_, err := fmt.Fprintf(e.stdout, "body %s\n", m.BodyDigest)
	return err
}

// replayed is one recorded call beside the same call assembled.
type replayed struct {
	Call      string `json:"call"`
	Line      int    `json:"line"`
	Recorded  side   `json:"recorded"`
	Assembled side   `json:"assembled"`
	// Compactions counts the assembled call's compactions so far.
	Compactions int `json:"compactions"`
}

// side is a call's input and cache, as package cache predicts it (and,
// for the call as recorded, the provider's report where there is one).
type side struct {
	Tokens int   `json:"input_tokens"`
	Read   int   `json:"read_tokens"`
	Write  int   `json:"write_tokens"`
	Cost   int64 `json:"cost_micro_usd"`
}

// assembleRecorded is assemble --transcript T: each Anthropic call of the
// transcript read back into a conversation (assemble.FromRequest),
// assembled to the window, and predicted by package cache as a session
// beside the calls as they were sent.
func (e *env) assembleRecorded(transcript string, window int, dir, format string, o *assemble.Options) int {
	if window <= 0 {
		window = 200000
	}
	rs, err := e.recordedRequests(transcript)
	if err != nil {
		return e.fail("assemble: %v", err)
	}
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return e.fail("assemble: %v", err)
		}
	}
	var rec, asm []cache.Call
	var comps []int
	for _, r := range rs {
		if r.Request == nil || r.Provider != payload.Anthropic {
			fmt.Fprintf(e.stderr, "promptloom: assemble: call %s (line %d) is left out: only Anthropic calls that gave their body are assembled\n", textsafe.Line(r.Report.Call), r.Report.Line)
			continue
		}
		c, err := assemble.FromRequest(r.Body)
		if err == nil {
			c.Window = window
			if c.OutputReserve >= window {
				err = fmt.Errorf("max_tokens %d is not below the window %d", c.OutputReserve, window)
			}
		}
		var body []byte
		var am *assemble.Manifest
		if err == nil {
			body, am, err = assemble.Assemble(c, o)
		}
		var m *request.Manifest
		if err == nil {
			m, err = newManifest(body, payload.Anthropic, nil)
		}
		if err != nil {
			return e.fail("assemble: %s: call %s (line %d): %v", shown(transcript), r.Report.Call, r.Report.Line, err)
		}
		call := cache.Call{Name: r.Report.Call, Line: r.Report.Line, Session: r.Session, At: r.At, Began: r.Answered, Request: r.Request, Reported: r.Report.Usage}
		rec = append(rec, call)
		call.Request, call.Reported = m, nil
		asm = append(asm, call)
		comps = append(comps, len(am.Compactions))
		if dir != "" {
			name := fmt.Sprintf("%03d-%s.json", len(asm), fileSafe(r.Report.Call))
			if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
				return e.fail("assemble: %v", err)
			}
		}
	}
	if len(rec) == 0 {
		return e.fail("assemble: %s: no Anthropic call gave its request body, so there is nothing to assemble", shown(transcript))
	}
	ra, aa := cache.Run(rec, nil), cache.Run(asm, nil)
	out := make([]replayed, len(rec))
	for i := range rec {
		rv, av := ra.Verdicts[i], aa.Verdicts[i]
		out[i] = replayed{Call: rv.Call, Line: rv.Line, Compactions: comps[i],
			Recorded:  side{Tokens: rv.InputTokens, Read: rv.Predicted.Read, Write: rv.Predicted.Write, Cost: rv.Cost},
			Assembled: side{Tokens: av.InputTokens, Read: av.Predicted.Read, Write: av.Predicted.Write, Cost: av.Cost}}
		if r := rv.Reported; r != nil {
			out[i].Recorded.Read, out[i].Recorded.Write = r.Read, r.Write
		}
	}
	total := func(a *cache.Analysis) map[string]any {
		return map[string]any{"calls": a.Summary.Calls, "predicted_hit_rate": a.Summary.PredictedHitRate,
			"cost_micro_usd": a.Summary.Cost, "unpriced": a.Summary.Unpriced}
	}
	if format == "json" {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(map[string]any{"window": window, "calls": out,
			"summary": map[string]any{"recorded": total(ra), "assembled": total(aa)}})
	} else {
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "call\trecorded in\tread\twrite\t$\tassembled in\tread\twrite\t$\tcompactions\t")
		for _, x := range out {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%d\t%d\t%d\t%s\t%d\t\n", textsafe.Line(x.Call), x.Recorded.Tokens, x.Recorded.Read, x.Recorded.Write, dollars(x.Recorded.Cost),
				x.Assembled.Tokens, x.Assembled.Read, x.Assembled.Write, dollars(x.Assembled.Cost), x.Compactions)
		}
		tw.Flush()
		_, err = fmt.Fprintf(e.stdout, "%d call(s), window %d: as recorded, hit rate %.3f, %s; as assembled, hit rate %.3f, %s (reads and writes as recorded are the provider's where it reported them; costs are package cache's predictions)\n",
			len(out), window, ra.Summary.PredictedHitRate, dollars(ra.Summary.Cost), aa.Summary.PredictedHitRate, dollars(aa.Summary.Cost))
	}
	if err != nil {
		return e.fail("assemble: %v", err)
	}
	return ExitOK
}

// dollars writes micro-dollars as dollars.
func dollars(micros int64) string { return fmt.Sprintf("$%.4f", float64(micros)/1e6) }

// fileSafe keeps a call's name to letters, digits, '.', '-' and '_'.
func fileSafe(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}
