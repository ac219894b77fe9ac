package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/cmd/promptloom/internal/demo"
	"github.com/promptloom/promptloom/internal/textsafe"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/transcript"
	"github.com/promptloom/promptloom/transcript/report"
)

// A fleet is what cache and report read when given several transcripts
// (--transcript repeated) or a store without ?session= (every chain of
// it): each transcript is verified and predicted on its own, as the
// command does one, and written as it would write one; then one summary
// adds their figures up, per session, per model and overall. Only one
// transcript is held at a time: the summary keeps totals, never a call,
// so a store of any size costs its largest chain plus the totals. A
// transcript that does not verify is named, left out of the figures, and
// makes the exit 1.

// transcriptList is a repeatable --transcript.
type transcriptList []string

func (l *transcriptList) String() string { return strings.Join(*l, ", ") }

func (l *transcriptList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// isFleet reports whether the --transcript values name a fleet: more than
// one, or a store without ?session= (however many chains it holds, so the
// output's shape does not depend on how full the store is).
func isFleet(args []string) bool {
	if len(args) != 1 {
		return len(args) > 1
	}
	if !demo.IsURL(args[0]) {
		return false
	}
	_, session, err := splitURL(args[0])
	return err == nil && session == "" // a URL that does not parse is refused as one
}

// fleetSource is one transcript of a fleet: a file, or a chain of a store.
type fleetSource struct {
	source
	store string // the store's URL as shown, for a chain; "" for a file
}

// label is the transcript as the output names it.
func (s fleetSource) label() string {
	if s.store != "" {
		return "chain " + s.name
	}
	return s.name
}

// fleetSources lists the transcripts the args name, every store's chains
// in its order, before any is read: a store that cannot be opened, or a
// transcript given twice, stops the command before it writes anything.
func (e *env) fleetSources(args []string) ([]fleetSource, func(), error) {
	var closers []func()
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	seen := map[string]bool{}
	var out []fleetSource
	for _, arg := range args {
		if seen[arg] {
			closeAll()
			return nil, nil, fmt.Errorf("--transcript %s is given twice: a fleet counts each transcript once", shown(arg))
		}
		seen[arg] = true
		srcs, close, err := e.transcripts(context.Background(), arg)
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("%s: %w", shown(arg), err)
		}
		closers = append(closers, close)
		for _, s := range srcs {
			fs := fleetSource{source: s}
			if demo.IsURL(arg) {
				fs.store = shown(arg)
			}
			out = append(out, fs)
		}
	}
	return out, closeAll, nil
}

// readRecorded reads one transcript of a fleet whole (at most
// maxTranscriptBytes), verifies it, and rebuilds its calls' requests, as
// cache does one transcript. An error says why it is left out; rep is
// what was verified, when anything was.
func (e *env) readRecorded(src source) (*transcript.Report, []cache.Recorded, error) {
	r, err := src.open()
	if err != nil {
		return nil, nil, err
	}
	data, err := readAll(newLimitedReader(r, src.name, maxTranscriptBytes), sizeHint(r, maxTranscriptBytes))
	r.Close()
	if err != nil {
		return nil, nil, err
	}
	rep, err := transcript.Verify(bytes.NewReader(data), &transcript.Options{MaxLineBytes: maxLineBytes})
	if err != nil || !rep.Holds() {
		return rep, nil, fmt.Errorf("the transcript does not verify: %s", strings.TrimPrefix(liveState(rep, err), "FAIL: "))
	}
	rs, err := cache.FromTranscript(data, rep)
	if err != nil {
		return rep, nil, err
	}
	return rep, rs, nil
}

// cacheFleet is cache over a fleet: each transcript's analysis as cache
// writes one, then the fleet's summary. Exit 1 when a transcript was left
// out, or under --strict when a miss is blamed on a change.
func (e *env) cacheFleet(args []string, o *cache.Options, format string, strict bool) int {
	srcs, closeAll, err := e.fleetSources(args)
	if err != nil {
		return e.fail("cache: %v", err)
	}
	defer closeAll()
	f := newFleet()
	js := &jsonStream{w: e.stdout}
	if format == "json" {
		js.begin("transcripts")
	}
	for _, src := range srcs {
		name := src.label()
		rep, rs, err := e.readRecorded(src.source)
		item := fleetItem{Name: src.name, Store: src.store}
		if rep != nil {
			item.State = liveState(rep, nil)
		}
		var calls []cache.Call
		if err == nil {
			calls = cache.Calls(rs)
			for _, r := range rs {
				if r.Err != nil {
					fmt.Fprintf(e.stderr, "promptloom: cache: %s: call %s (line %d) is not predicted: its request body, as the transcript kept it: %v\n", textsafe.Line(name), textsafe.Line(r.Report.Call), r.Report.Line, textsafe.Line(r.Err.Error()))
				}
			}
		}
		var an *cache.Analysis
		switch {
		case err != nil:
			f.leaveOut(name, err.Error())
			item.LeftOut = err.Error()
			fmt.Fprintf(e.stderr, "promptloom: cache: %s: left out of the fleet's figures: %s\n", textsafe.Line(name), textsafe.Line(err.Error()))
		case len(calls) == 0:
			why := "no call gave its request body (recorded through the transport or the proxy), so there is nothing to predict"
			f.unpredicted(name, why)
			item.OK, item.Unpredicted = true, why
		default:
			item.OK = true
			an = cache.Run(calls, o)
			f.add(name, calls, an)
			item.Analysis = an
		}
		if rep != nil && err == nil {
			f.noteOpen(name, rep)
			e.noteOpen(name, rep)
		}
		if format == "json" {
			js.item(item)
			continue
		}
		switch {
		case an != nil:
			err = an.WriteText(e.stdout, name)
		case item.LeftOut != "":
			_, err = fmt.Fprintf(e.stdout, "cache %s: left out of the fleet's figures: %s\n", textsafe.Line(name), textsafe.Line(item.LeftOut))
		default:
			_, err = fmt.Fprintf(e.stdout, "cache %s: %s\n", textsafe.Line(name), textsafe.Line(item.Unpredicted))
		}
		if err == nil {
			_, err = fmt.Fprintln(e.stdout)
		}
		if err != nil {
			return e.fail("cache: %v", err)
		}
	}
	f.finish()
	if f.Calls == 0 {
		if format == "json" {
			js.end(map[string]any{"fleet": f})
		}
		return e.fail("cache: no transcript of the %d given has a call with its request body that verifies, so there is nothing to predict", len(srcs))
	}
	if format == "json" {
		err = js.end(map[string]any{"fleet": f})
	} else {
		err = f.writeText(e.stdout)
	}
	if err != nil {
		return e.fail("cache: %v", err)
	}
	if strict && f.Changes > 0 {
		fmt.Fprintf(e.stderr, "promptloom: cache: %d miss(es) blamed on a change under --strict\n", f.Changes)
		return ExitFail
	}
	if len(f.LeftOut) > 0 {
		return ExitFail
	}
	return ExitOK
}

// reportFleet is report over a fleet, in text or JSON: each transcript's
// report as report writes one (a transcript that does not verify is
// reported, marking what failed, and left out of the figures), then the
// fleet's cache summary. Exit 1 when a transcript does not verify.
func (e *env) reportFleet(args []string, o *transcript.Options, co *cache.Options, format string) int {
	srcs, closeAll, err := e.fleetSources(args)
	if err != nil {
		return e.fail("report: %v", err)
	}
	defer closeAll()
	f := newFleet()
	js := &jsonStream{w: e.stdout}
	if format == "json" {
		js.begin("transcripts")
	}
	for _, src := range srcs {
		name := src.label()
		r, err := src.open()
		if err != nil {
			f.leaveOut(name, err.Error())
			fmt.Fprintf(e.stderr, "promptloom: report: %s: left out of the fleet's figures: %s\n", textsafe.Line(name), textsafe.Line(err.Error()))
			if format == "json" {
				js.item(transcriptVerdict{Name: src.name, State: "FAIL: " + textsafe.Line(err.Error()), Error: err.Error()})
			} else {
				fmt.Fprintf(e.stdout, "report %s:\nFAIL %s\n\n", textsafe.Line(name), textsafe.Line(err.Error()))
			}
			continue
		}
		kept := &capped{limit: maxCacheReportBytes}
		rep, verr := transcript.Verify(io.TeeReader(r, kept), o)
		r.Close()
		ro := &report.Options{}
		switch {
		case verr != nil || !rep.Holds():
			why := "the transcript does not verify: " + strings.TrimPrefix(liveState(rep, verr), "FAIL: ")
			f.leaveOut(name, why)
			fmt.Fprintf(e.stderr, "promptloom: report: %s: left out of the fleet's figures: %s\n", textsafe.Line(name), textsafe.Line(why))
		case kept.over:
			f.unpredicted(name, fmt.Sprintf("over %d bytes, it is reported without the cache's predictions", maxCacheReportBytes))
		default:
			rs, err := cache.FromTranscript(kept.b, rep)
			if err != nil {
				f.unpredicted(name, err.Error())
				break
			}
			ro.Requests = rs
			if calls := cache.Calls(rs); len(calls) > 0 {
				ro.Cache = cache.Run(calls, co)
				f.add(name, calls, ro.Cache)
			} else {
				f.unpredicted(name, "no call gave its request body (recorded through the transport or the proxy), so there is nothing to predict")
			}
		}
		kept.b = nil // the next transcript's bytes, not both
		if verr == nil && rep.Holds() {
			f.noteOpen(name, rep)
		}
		if format == "json" {
			js.item(newVerdict(src.name, rep, verr))
			continue
		}
		fmt.Fprintf(e.stdout, "report %s:\n", textsafe.Line(name))
		if err := report.WriteText(e.stdout, rep, ro); err != nil {
			return e.fail("report: %v", err)
		}
		verdict(e.stdout, rep, verr)
		fmt.Fprintln(e.stdout)
	}
	f.finish()
	if format == "json" {
		err = js.end(map[string]any{"fleet": f, "ok": len(f.LeftOut) == 0})
	} else {
		err = f.writeText(e.stdout)
	}
	if err != nil {
		return e.fail("report: %v", err)
	}
	if len(f.LeftOut) > 0 {
		return ExitFail
	}
	return ExitOK
}

// fleetItem is one transcript of cache's fleet, as --format json writes
// it: where it is, its verdict in one line, and its analysis, or why it
// has none.
type fleetItem struct {
	Name        string          `json:"name"`
	Store       string          `json:"store,omitempty"`
	OK          bool            `json:"ok"`
	State       string          `json:"state,omitempty"`
	LeftOut     string          `json:"left_out,omitempty"`
	Unpredicted string          `json:"unpredicted,omitempty"`
	Analysis    *cache.Analysis `json:"analysis,omitempty"`
}

// fleetNote is a transcript of the fleet not in its figures, and why.
type fleetNote struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// hits are the tokens a hit rate is made of, as cache.Summary counts
// them: the predicted reads over the input as counted, and the reported
// reads over the prompts the providers reported (calls with a report).
type hits struct{ predRead, predIn, repRead, repIn int }

func (h *hits) add(o hits) {
	h.predRead += o.predRead
	h.predIn += o.predIn
	h.repRead += o.repRead
	h.repIn += o.repIn
}

func (h hits) rates() (predicted, reported float64) {
	if h.predIn > 0 {
		predicted = float64(h.predRead) / float64(h.predIn)
	}
	if h.repIn > 0 {
		reported = float64(h.repRead) / float64(h.repIn)
	}
	return predicted, reported
}

// fleetTotal is a cache.Total over the fleet (a session's, or a model's),
// with its hit rates; a session's names its transcript too, since two
// transcripts may each hold a session of one name.
type fleetTotal struct {
	Transcript string `json:"transcript,omitempty"`
	cache.Total
	PredictedHitRate float64 `json:"predicted_hit_rate"`
	ReportedHitRate  float64 `json:"reported_hit_rate"`

	hits hits
}

// fleet is the summary of a fleet: the transcripts' cache figures added
// up. Its JSON is what cache and report write under "fleet".
type fleet struct {
	// Transcripts counts those given; Predicted those in the figures.
	Transcripts int `json:"transcripts"`
	Predicted   int `json:"predicted"`
	// Open names the transcripts still being written, with their calls
	// so far (they verify as far as written, and are in the figures).
	Open []fleetNote `json:"open,omitempty"`
	// LeftOut are the transcripts that do not verify (or could not be
	// read); Unpredicted those that verify and have nothing to predict.
	LeftOut          []fleetNote   `json:"left_out,omitempty"`
	Unpredicted      []fleetNote   `json:"unpredicted,omitempty"`
	Calls            int           `json:"calls"`
	PredictedHitRate float64       `json:"predicted_hit_rate"`
	ReportedHitRate  float64       `json:"reported_hit_rate"`
	Changes          int           `json:"changes"`
	Agreements       int           `json:"agreements"`
	Disagreements    int           `json:"disagreements"`
	Cost             int64         `json:"cost_micro_usd"`
	MissCost         int64         `json:"miss_cost_micro_usd"`
	Sessions         []fleetTotal  `json:"sessions,omitempty"`
	Models           []fleetTotal  `json:"models,omitempty"`
	Causes           []cache.Total `json:"causes,omitempty"`
	Unpriced         []string      `json:"unpriced,omitempty"`
	PricesTaken      string        `json:"prices_taken,omitempty"`
	PricesSource     string        `json:"prices_source,omitempty"`

	hits     hits
	sessions map[[2]string]*fleetTotal
	models   map[string]*fleetTotal
	causes   map[string]*cache.Total
	unpriced map[string]bool
}

func newFleet() *fleet {
	return &fleet{sessions: map[[2]string]*fleetTotal{}, models: map[string]*fleetTotal{},
		causes: map[string]*cache.Total{}, unpriced: map[string]bool{}}
}

func (f *fleet) leaveOut(name, why string) {
	f.Transcripts++
	f.LeftOut = append(f.LeftOut, fleetNote{name, why})
}

func (f *fleet) unpredicted(name, why string) {
	f.Transcripts++
	f.Unpredicted = append(f.Unpredicted, fleetNote{name, why})
}

// noteOpen names a transcript still being written.
func (f *fleet) noteOpen(name string, rep *transcript.Report) {
	if note := rep.Unfinished(); note != "" {
		f.Open = append(f.Open, fleetNote{name, note})
	}
}

// add adds one transcript's analysis, calls being what it was run over
// (a verdict a call, in order): its summary's totals as they are, and
// each verdict's tokens to the hit rates of its session and model.
func (f *fleet) add(name string, calls []cache.Call, an *cache.Analysis) {
	f.Transcripts++
	f.Predicted++
	s := an.Summary
	f.Calls += s.Calls
	f.Changes += s.Changes
	f.Agreements += s.Agreements
	f.Disagreements += len(s.Disagreements)
	f.Cost = addMicros(f.Cost, s.Cost)
	f.MissCost = addMicros(f.MissCost, s.MissCost)
	if f.PricesTaken == "" {
		f.PricesTaken, f.PricesSource = s.PricesTaken, s.PricesSource
	}
	for _, m := range s.Unpriced {
		f.unpriced[m] = true
	}
	session := func(key string) *fleetTotal {
		k := [2]string{name, key}
		if f.sessions[k] == nil {
			f.sessions[k] = &fleetTotal{Transcript: name, Total: cache.Total{Key: key}}
		}
		return f.sessions[k]
	}
	model := func(key string) *fleetTotal {
		if f.models[key] == nil {
			f.models[key] = &fleetTotal{Total: cache.Total{Key: key}}
		}
		return f.models[key]
	}
	for _, t := range s.Sessions {
		addTotal(&session(t.Key).Total, t)
	}
	for _, t := range s.Models {
		addTotal(&model(t.Key).Total, t)
	}
	for _, t := range s.Causes {
		if f.causes[t.Key] == nil {
			f.causes[t.Key] = &cache.Total{Key: t.Key}
		}
		addTotal(f.causes[t.Key], t)
	}
	for i, v := range an.Verdicts {
		h := hits{predRead: v.Predicted.Read, predIn: v.InputTokens}
		if v.Reported != nil {
			h.repRead = v.Reported.Read
		}
		if i < len(calls) && calls[i].Request != nil {
			h.repIn = calls[i].Reported.Prompt(payload.Provider(calls[i].Request.Provider))
		}
		f.hits.add(h)
		session(v.Session).hits.add(h)
		model(v.Model).hits.add(h)
	}
}

// addTotal adds t to dst, money saturating as package cache adds it.
func addTotal(dst *cache.Total, t cache.Total) {
	dst.Calls += t.Calls
	dst.Unpriced += t.Unpriced
	dst.Cost = addMicros(dst.Cost, t.Cost)
	dst.MissTokens += t.MissTokens
	dst.MissCost = addMicros(dst.MissCost, t.MissCost)
}

// addMicros adds micro-dollars, saturating: a total past the range says
// so as the largest figure rather than wrapping to a negative one.
func addMicros(a, b int64) int64 {
	s := a + b
	switch {
	case a > 0 && b > 0 && s < 0:
		return math.MaxInt64
	case a < 0 && b < 0 && s >= 0:
		return math.MinInt64
	}
	return s
}

// finish turns the totals into the summary's lists, ordered as cache
// orders its own: by the money missed, then the tokens, then the name.
func (f *fleet) finish() {
	f.PredictedHitRate, f.ReportedHitRate = f.hits.rates()
	order := func(x, y cache.Total) int {
		return cmp.Or(cmp.Compare(y.MissCost, x.MissCost), cmp.Compare(y.MissTokens, x.MissTokens), cmp.Compare(x.Key, y.Key))
	}
	f.Sessions = f.Sessions[:0]
	for _, t := range f.sessions {
		t.PredictedHitRate, t.ReportedHitRate = t.hits.rates()
		f.Sessions = append(f.Sessions, *t)
	}
	slices.SortFunc(f.Sessions, func(x, y fleetTotal) int {
		return cmp.Or(order(x.Total, y.Total), cmp.Compare(x.Transcript, y.Transcript))
	})
	f.Models = f.Models[:0]
	for _, t := range f.models {
		t.PredictedHitRate, t.ReportedHitRate = t.hits.rates()
		f.Models = append(f.Models, *t)
	}
	slices.SortFunc(f.Models, func(x, y fleetTotal) int { return order(x.Total, y.Total) })
	f.Causes = f.Causes[:0]
	for _, t := range f.causes {
		f.Causes = append(f.Causes, *t)
	}
	slices.SortFunc(f.Causes, order)
	f.Unpriced = f.Unpriced[:0]
	for m := range f.unpriced {
		f.Unpriced = append(f.Unpriced, m)
	}
	slices.Sort(f.Unpriced)
}

// writeText writes the summary for a terminal, after the transcripts.
func (f *fleet) writeText(w io.Writer) error {
	ew := &fleetWriter{w: w}
	q := func(s string) string {
		if s == "" {
			return "-"
		}
		return textsafe.Line(s)
	}
	ew.printf("fleet: %d transcript(s), %d of them in the figures, each predicted on its own by the providers' documented rules (docs/caching.md)\n", f.Transcripts, f.Predicted)
	for _, n := range f.Open {
		ew.printf("  %s: %s (in the figures as far as written)\n", q(n.Name), q(n.Reason))
	}
	for _, n := range f.LeftOut {
		ew.printf("  left out: %s: %s\n", q(n.Name), q(n.Reason))
	}
	for _, n := range f.Unpredicted {
		ew.printf("  nothing predicted: %s: %s\n", q(n.Name), q(n.Reason))
	}
	if f.Calls == 0 {
		// No rate, cost or total to show: zeros would read as a fleet that missed every read.
		ew.printf("calls: none predicted: no transcript in the figures kept a call's request body (recorded through the transport or the proxy)\n")
		return ew.err
	}
	ew.printf("calls: %d; hit rate: predicted %.1f%%, reported %.1f%%\n", f.Calls, 100*f.PredictedHitRate, 100*f.ReportedHitRate)
	if f.Agreements > 0 || f.Disagreements > 0 {
		ew.printf("the provider's own verdicts beside promptloom's: %d agree, %d disagree\n", f.Agreements, f.Disagreements)
	}
	priced := 0
	for _, t := range f.Models {
		priced += t.Calls - t.Unpriced
	}
	if priced == 0 {
		ew.printf("cost: no call is priced (list prices taken %s)\n", q(f.PricesTaken))
	} else {
		ew.printf("cost at list prices taken %s (~ in a call's line where no usage was recorded): %s, of which misses %s\n", q(f.PricesTaken), usd(f.Cost), usd(f.MissCost))
	}
	// money is a total's misses, and for a session or a model its cost.
	money := func(t cache.Total, cost bool) string {
		line := ""
		if cost && t.Unpriced < t.Calls {
			line += "cost " + usd(t.Cost) + ", "
		}
		if cost {
			line += "misses "
		}
		line += thousands(t.MissTokens) + " tokens"
		if t.Unpriced < t.Calls {
			line += ", " + usd(t.MissCost)
		}
		if t.Unpriced > 0 {
			line += fmt.Sprintf(" (%d unpriced: tokens only)", t.Unpriced)
		}
		return line
	}
	if len(f.Causes) > 0 {
		ew.printf("misses by cause:\n")
	}
	for _, t := range f.Causes {
		ew.printf("  %s: %d miss(es), %s\n", q(t.Key), t.Calls, money(t, false))
	}
	ew.printf("by session:\n")
	for _, t := range f.Sessions {
		ew.printf("  session %s of %s: %d call(s), hit rate predicted %.1f%%, reported %.1f%%, %s\n", q(t.Key), q(t.Transcript), t.Calls, 100*t.PredictedHitRate, 100*t.ReportedHitRate, money(t.Total, true))
	}
	ew.printf("by model:\n")
	for _, t := range f.Models {
		ew.printf("  model %s: %d call(s), hit rate predicted %.1f%%, reported %.1f%%, %s\n", q(t.Key), t.Calls, 100*t.PredictedHitRate, 100*t.ReportedHitRate, money(t.Total, true))
	}
	if len(f.Unpriced) > 0 {
		names := make([]string, len(f.Unpriced))
		for i, m := range f.Unpriced {
			names[i] = q(m)
		}
		ew.printf("not in the price table (only tokens are shown for them; give one with --prices): %s\n", strings.Join(names, ", "))
	}
	return ew.err
}

// usd writes micro-dollars as dollars to the micro-dollar, as cache's
// own lines do, so a fleet's figures read against a transcript's.
func usd(micros int64) string {
	sign := ""
	u := uint64(micros)
	if micros < 0 {
		sign, u = "-", uint64(-(micros+1))+1
	}
	return fmt.Sprintf("%s$%d.%06d", sign, u/1_000_000, u%1_000_000)
}

// thousands writes n with commas, as cache's lines do.
func thousands(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// fleetWriter keeps the first write error, so a summary of many lines
// checks one.
type fleetWriter struct {
	w   io.Writer
	err error
}

func (f *fleetWriter) printf(format string, args ...any) {
	if f.err == nil {
		_, f.err = fmt.Fprintf(f.w, format, args...)
	}
}

// jsonStream writes one JSON object whose first member is a list written
// an item at a time, so a fleet's output never holds more than one
// transcript's: begin, item for each, then end with the members after the
// list. It is indented as writeJSON indents, HTML unescaped.
type jsonStream struct {
	w   io.Writer
	n   int
	err error
}

func (s *jsonStream) write(str string) {
	if s.err == nil {
		_, s.err = io.WriteString(s.w, str)
	}
}

func (s *jsonStream) encode(v any, prefix string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, "  ")
	if err := enc.Encode(v); err != nil && s.err == nil {
		s.err = err
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func (s *jsonStream) begin(list string) {
	s.write("{\n  " + s.encode(list, "") + ": [")
}

func (s *jsonStream) item(v any) {
	sep := ",\n    "
	if s.n == 0 {
		sep = "\n    "
	}
	s.n++
	s.write(sep + s.encode(v, "    "))
}

// end closes the list and writes members, in the order of their keys.
func (s *jsonStream) end(members map[string]any) error {
	if s.n > 0 {
		s.write("\n  ")
	}
	s.write("]")
	keys := make([]string, 0, len(members))
	for k := range members {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		s.write(",\n  " + s.encode(k, "") + ": " + s.encode(members[k], "  "))
	}
	s.write("\n}\n")
	return s.err
}
