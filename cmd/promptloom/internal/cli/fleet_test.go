package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom/internal/testkit/fakecache"
	"github.com/promptloom/promptloom/internal/testkit/pgtest"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/payload"
)

// agentRun records an agent's session on model into path, each call
// answered with the usage a cache that follows Anthropic's documented
// rules reports: a tool edited before the third turn, a pause past the
// 5-minute lifetime before the last; turn bare (0: none) is answered
// without usage, so the run's predicted and reported hit rates are over
// different calls. Unclosed, the session is still being written, as a
// proxy's is. It returns the whole prompts the usage reported (input,
// cache read and cache write, as Anthropic's usage splits them).
func agentRun(t *testing.T, path, session, model string, turns, bare int, closed bool) (reportedIn int) {
	t.Helper()
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	j := journal.New(&buf, &journal.Options{Session: session, Clock: func() time.Time { return now }})
	fake := &fakecache.Anthropic{Min: 1024}
	a := fakecache.NewAgent()
	a.Model = model
	for i := 1; i <= turns; i++ {
		if i == 3 {
			a.Tools[3]["description"] = "Run a shell command, carefully."
		}
		if i == turns {
			now = now.Add(6 * time.Minute)
		}
		body := a.Turn(strings.Repeat("Look at the parser, turn "+string(rune('0'+i))+". ", 4))
		m := journal.ModelFunc(func(context.Context, journal.Request) (journal.Response, error) {
			u, err := fake.Serve(body, now)
			if err != nil {
				return journal.Response{}, err
			}
			if i == bare {
				return journal.Response{Text: "ok"}, nil
			}
			reportedIn += u.Input + u.CacheRead + u.CacheWrite
			return journal.Response{Text: "ok", Usage: &payload.Usage{InputTokens: u.Input, OutputTokens: 7, CacheReadTokens: u.CacheRead, CacheWriteTokens: u.CacheWrite}}, nil
		})
		if _, err := j.Call(context.Background(), m, journal.Request{Call: session + "/" + string(rune('0'+i)), Body: body, Provider: payload.Anthropic, Unattributed: true}); err != nil {
			t.Fatal(err)
		}
		a.Answer("Done.")
		now = now.Add(30 * time.Second)
	}
	if closed {
		j.Close()
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return reportedIn
}

// The JSON the tests read: cache's analysis of one transcript, and the
// fleet's summary.
type (
	totalJSON struct {
		Transcript       string  `json:"transcript"`
		Key              string  `json:"key"`
		Calls            int     `json:"calls"`
		Unpriced         int     `json:"unpriced_calls"`
		Cost             int64   `json:"cost_micro_usd"`
		MissTokens       int     `json:"miss_tokens"`
		MissCost         int64   `json:"miss_cost_micro_usd"`
		PredictedHitRate float64 `json:"predicted_hit_rate"`
		ReportedHitRate  float64 `json:"reported_hit_rate"`
	}
	analysisJSON struct {
		Calls []struct {
			Session     string `json:"session"`
			Model       string `json:"model"`
			InputTokens int    `json:"input_tokens"`
			Predicted   struct {
				Read int `json:"read_tokens"`
			} `json:"predicted"`
			Reported *struct {
				Read int `json:"read_tokens"`
			} `json:"reported"`
		} `json:"calls"`
		Summary struct {
			Calls            int         `json:"calls"`
			PredictedHitRate float64     `json:"predicted_hit_rate"`
			ReportedHitRate  float64     `json:"reported_hit_rate"`
			Changes          int         `json:"changes"`
			Cost             int64       `json:"cost_micro_usd"`
			MissCost         int64       `json:"miss_cost_micro_usd"`
			Sessions         []totalJSON `json:"sessions"`
			Models           []totalJSON `json:"models"`
			Causes           []totalJSON `json:"causes"`
		} `json:"summary"`
	}
	noteJSON  struct{ Name, Reason string }
	fleetJSON struct {
		Transcripts      int         `json:"transcripts"`
		Predicted        int         `json:"predicted"`
		Open             []noteJSON  `json:"open"`
		LeftOut          []noteJSON  `json:"left_out"`
		Calls            int         `json:"calls"`
		PredictedHitRate float64     `json:"predicted_hit_rate"`
		ReportedHitRate  float64     `json:"reported_hit_rate"`
		Changes          int         `json:"changes"`
		Cost             int64       `json:"cost_micro_usd"`
		MissCost         int64       `json:"miss_cost_micro_usd"`
		Sessions         []totalJSON `json:"sessions"`
		Models           []totalJSON `json:"models"`
		Causes           []totalJSON `json:"causes"`
	}
)

// cacheOf is cache --format json over one transcript, run on its own.
func cacheOf(t *testing.T, transcript string) analysisJSON {
	t.Helper()
	code, out, errOut := run(t, "cache", "--transcript", transcript, "--format", "json")
	var an analysisJSON
	if code != ExitOK {
		t.Fatalf("cache --transcript %s: exit %d: %s", transcript, code, errOut)
	}
	if err := json.Unmarshal([]byte(out), &an); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return an
}

// wantSums holds a fleet's summary to the figures of its transcripts'
// own runs (names: each transcript as the fleet names it; reportedIn: the
// prompts its usage reported, as agentRun returns them), added up here.
func wantSums(t *testing.T, f fleetJSON, names []string, own []analysisJSON, reportedIn []int) {
	t.Helper()
	var calls, changes int
	var cost, miss int64
	var predRead, predIn, repRead, repIn int
	models, causes := map[string]totalJSON{}, map[string]totalJSON{}
	add := func(m map[string]totalJSON, x totalJSON) {
		s := m[x.Key]
		s.Key, s.Calls, s.Unpriced, s.Cost, s.MissTokens, s.MissCost = x.Key, s.Calls+x.Calls, s.Unpriced+x.Unpriced, s.Cost+x.Cost, s.MissTokens+x.MissTokens, s.MissCost+x.MissCost
		m[x.Key] = s
	}
	sessions := map[[2]string]totalJSON{}
	for i, an := range own {
		s := an.Summary
		calls, changes, cost, miss = calls+s.Calls, changes+s.Changes, cost+s.Cost, miss+s.MissCost
		fileRepRead := 0
		for _, c := range an.Calls {
			predRead += c.Predicted.Read
			predIn += c.InputTokens
			if c.Reported != nil {
				fileRepRead += c.Reported.Read
			}
		}
		repRead += fileRepRead
		repIn += reportedIn[i]
		for _, x := range s.Models {
			add(models, x)
		}
		for _, x := range s.Causes {
			add(causes, x)
		}
		for _, x := range s.Sessions {
			x.Transcript = names[i]
			// One session a transcript: the session's rates are the file's.
			x.PredictedHitRate, x.ReportedHitRate = s.PredictedHitRate, s.ReportedHitRate
			sessions[[2]string{names[i], x.Key}] = x
		}
	}
	if f.Calls != calls || f.Changes != changes || f.Cost != cost || f.MissCost != miss {
		t.Errorf("fleet: calls %d, changes %d, cost %d, misses %d; the transcripts' own add up to %d, %d, %d, %d", f.Calls, f.Changes, f.Cost, f.MissCost, calls, changes, cost, miss)
	}
	if calls == 0 || cost == 0 || miss == 0 || len(causes) == 0 {
		t.Fatalf("the transcripts' own figures are empty (calls %d, cost %d, misses %d, causes %v): the test compares nothing", calls, cost, miss, causes)
	}
	if want := float64(predRead) / float64(predIn); math.Abs(f.PredictedHitRate-want) > 1e-12 {
		t.Errorf("predicted hit rate %v, want %v", f.PredictedHitRate, want)
	}
	if want := float64(repRead) / float64(repIn); math.Abs(f.ReportedHitRate-want) > 1e-12 || f.ReportedHitRate == f.PredictedHitRate {
		t.Errorf("reported hit rate %v, want %v", f.ReportedHitRate, want)
	}
	same := func(what string, got []totalJSON, want map[string]totalJSON) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s: %d totals, want %d: %+v", what, len(got), len(want), got)
		}
		for _, g := range got {
			w := want[g.Key]
			g.PredictedHitRate, g.ReportedHitRate = 0, 0
			if g != w {
				t.Errorf("%s %s: %+v, want %+v", what, g.Key, g, w)
			}
		}
	}
	same("model", f.Models, models)
	same("cause", f.Causes, causes)
	if len(f.Sessions) != len(sessions) {
		t.Errorf("%d sessions, want %d: %+v", len(f.Sessions), len(sessions), f.Sessions)
	}
	for _, g := range f.Sessions {
		w := sessions[[2]string{g.Transcript, g.Key}]
		if math.Abs(g.PredictedHitRate-w.PredictedHitRate) > 1e-12 || math.Abs(g.ReportedHitRate-w.ReportedHitRate) > 1e-12 {
			t.Errorf("session %s of %s: rates %v, %v; its transcript's own %v, %v", g.Key, g.Transcript, g.PredictedHitRate, g.ReportedHitRate, w.PredictedHitRate, w.ReportedHitRate)
		}
		g.PredictedHitRate, g.ReportedHitRate, w.PredictedHitRate, w.ReportedHitRate = 0, 0, 0, 0
		if g != w {
			t.Errorf("session %+v, want %+v", g, w)
		}
	}
}

// cache over two files, one of them still being written and each with a
// session named "agent": one summary whose figures are the two files' own,
// added up, the sessions kept apart, the open one said to be open; report
// over the same files gives the same summary.
func TestCacheOverTwoTranscriptsAddsThemUp(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	reported := []int{agentRun(t, a, "agent", "claude-sonnet-4-5", 6, 0, true), agentRun(t, b, "agent", "claude-opus-4-1", 4, 2, false)}
	own := []analysisJSON{cacheOf(t, a), cacheOf(t, b)}

	code, out, errOut := run(t, "cache", "--transcript", a, "--transcript", b, "--format", "json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Transcripts []struct {
			Name     string        `json:"name"`
			OK       bool          `json:"ok"`
			Analysis *analysisJSON `json:"analysis"`
		} `json:"transcripts"`
		Fleet fleetJSON `json:"fleet"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(got.Transcripts) != 2 || got.Transcripts[0].Name != a || got.Transcripts[1].Name != b || got.Transcripts[1].Analysis == nil ||
		len(got.Transcripts[1].Analysis.Calls) != len(own[1].Calls) {
		t.Fatalf("transcripts: %+v", got.Transcripts)
	}
	wantSums(t, got.Fleet, []string{a, b}, own, reported)
	if f := got.Fleet; f.Transcripts != 2 || f.Predicted != 2 || len(f.LeftOut) != 0 || len(f.Open) != 1 || f.Open[0].Name != b ||
		!strings.Contains(f.Open[0].Reason, "open: session agent with 4 call(s) so far") || len(f.Models) != 2 {
		t.Errorf("fleet: %+v", f)
	}
	if !strings.Contains(errOut, b+": open: session agent with 4 call(s) so far") {
		t.Errorf("stderr does not say the open one is open: %s", errOut)
	}

	code, out, _ = run(t, "cache", "--transcript", a, "--transcript", b)
	if code != ExitOK || !strings.Contains(out, "cache "+a+": 6 call(s)") || !strings.Contains(out, "cache "+b+": 4 call(s)") ||
		!strings.Contains(out, "fleet: 2 transcript(s), 2 of them in the figures") || !strings.Contains(out, "  "+b+": open: session agent with 4 call(s) so far") ||
		!strings.Contains(out, "  session agent of "+a+": 6 call(s), hit rate predicted") || !strings.Contains(out, "  model claude-opus-4-1: 4 call(s)") ||
		!strings.Contains(out, "misses by cause:\n  change: ") {
		t.Errorf("text: exit %d\n%s", code, out)
	}
	if code, _, _ := run(t, "cache", "--transcript", a, "--transcript", b, "--strict"); code != ExitFail {
		t.Errorf("--strict over a fleet with a changed tool: exit %d, want 1", code)
	}
	if code, _, errOut := run(t, "cache", "--transcript", a, "--transcript", b, "--call", "agent/3"); code != ExitBadArgs || !strings.Contains(errOut, "--call names a call of one transcript") {
		t.Errorf("--call over a fleet: exit %d: %s", code, errOut)
	}
	if code, _, errOut := run(t, "cache", "--transcript", a, "--transcript", a); code != ExitBadArgs || !strings.Contains(errOut, "is given twice") {
		t.Errorf("a transcript given twice: exit %d: %s", code, errOut)
	}

	// report: each transcript's report, then the same summary.
	code, out, errOut = run(t, "report", "--transcript", a, "--transcript", b, "--format", "json")
	var rep struct {
		Transcripts []struct {
			Name string `json:"name"`
			OK   bool   `json:"ok"`
		} `json:"transcripts"`
		Fleet fleetJSON `json:"fleet"`
		OK    bool      `json:"ok"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != ExitOK || !rep.OK || len(rep.Transcripts) != 2 || !rep.Transcripts[1].OK {
		t.Fatalf("report: exit %d, %v: %s%s", code, err, out, errOut)
	}
	wantSums(t, rep.Fleet, []string{a, b}, own, reported)
	code, out, _ = run(t, "report", "--transcript", a, "--transcript", b)
	if code != ExitOK || !strings.Contains(out, "report "+a+":\n") || !strings.Contains(out, "report "+b+":\n") || !strings.Contains(out, "fleet: 2 transcript(s)") {
		t.Errorf("report text: exit %d\n%s", code, out)
	}
	if code, _, errOut := run(t, "report", "--transcript", a, "--transcript", b, "--format", "html"); code != ExitBadArgs || !strings.Contains(errOut, "--format html is the page of one transcript") {
		t.Errorf("report html over a fleet: exit %d: %s", code, errOut)
	}
}

// A transcript that does not verify, and one that is not there, are named
// and left out: the figures are the good one's alone, and the exit is 1.
func TestAFleetLeavesOutATranscriptThatDoesNotVerify(t *testing.T) {
	dir := t.TempDir()
	good, bad, gone := filepath.Join(dir, "good.jsonl"), filepath.Join(dir, "bad.jsonl"), filepath.Join(dir, "gone.jsonl")
	reported := []int{agentRun(t, good, "agent", "claude-opus-4-1", 5, 3, true)}
	agentRun(t, bad, "other", "claude-sonnet-4-5", 5, 0, true)
	data, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	altered := bytes.Replace(data, []byte("turn 2."), []byte("turn 9."), 1)
	if bytes.Equal(altered, data) {
		t.Fatal("nothing altered")
	}
	if err := os.WriteFile(bad, altered, 0o644); err != nil {
		t.Fatal(err)
	}
	own := []analysisJSON{cacheOf(t, good)}
	for _, cmd := range []string{"cache", "report"} {
		code, out, errOut := run(t, cmd, "--transcript", good, "--transcript", bad, "--transcript", gone, "--format", "json")
		var got struct {
			Fleet fleetJSON `json:"fleet"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil || code != ExitFail {
			t.Fatalf("%s: exit %d, %v: %s%s", cmd, code, err, out, errOut)
		}
		wantSums(t, got.Fleet, []string{good}, own, reported)
		f := got.Fleet
		if f.Transcripts != 3 || f.Predicted != 1 || len(f.LeftOut) != 2 || f.LeftOut[0].Name != bad || !strings.Contains(f.LeftOut[0].Reason, "does not verify") ||
			f.LeftOut[1].Name != gone || !strings.Contains(f.LeftOut[1].Reason, "no such file") {
			t.Errorf("%s: fleet %+v", cmd, f)
		}
		if !strings.Contains(errOut, bad+": left out of the fleet's figures: the transcript does not verify") {
			t.Errorf("%s: stderr does not name it: %s", cmd, errOut)
		}
	}
	code, out, _ := run(t, "cache", "--transcript", good, "--transcript", bad)
	if code != ExitFail || !strings.Contains(out, "cache "+bad+": left out of the fleet's figures: the transcript does not verify") ||
		!strings.Contains(out, "  left out: "+bad+": the transcript does not verify") || !strings.Contains(out, "fleet: 2 transcript(s), 1 of them in the figures") {
		t.Errorf("text: exit %d\n%s", code, out)
	}
	// Nothing left to add up: cache fails as it does over one transcript
	// with nothing to predict; report says so under its reports.
	if code, _, errOut := run(t, "cache", "--transcript", bad, "--transcript", gone); code != ExitBadArgs ||
		!strings.Contains(errOut, "no transcript of the 2 given has a call with its request body that verifies") || !strings.Contains(errOut, gone+": left out") {
		t.Errorf("cache over no good transcript: exit %d: %s", code, errOut)
	}
	if code, out, _ := run(t, "report", "--transcript", bad, "--transcript", gone); code != ExitFail || !strings.Contains(out, "calls: none predicted") {
		t.Errorf("report over no good transcript: exit %d\n%s", code, out)
	}
}

// cache and report over a PostgreSQL store without ?session=: every chain,
// the summary the chains' own runs added up.
func TestCacheOverAPostgresStoreAddsUpEveryChain(t *testing.T) {
	dsn := pgtest.URL(t)
	dir := t.TempDir()
	if code, _, errOut := run(t, "transcript", "migrate", dsn); code != ExitOK {
		t.Fatalf("migrate: %s", errOut)
	}
	session := func(name string) string {
		if strings.Contains(dsn, "?") {
			return dsn + "&session=" + name
		}
		return dsn + "?session=" + name
	}
	var own []analysisJSON
	var reported []int
	names := []string{"alpha", "beta"}
	for i, name := range names {
		path := filepath.Join(dir, name+".jsonl")
		reported = append(reported, agentRun(t, path, name, []string{"claude-sonnet-4-5", "claude-opus-4-1"}[i], 4+i, 1+i, true))
		if code, _, errOut := run(t, "transcript", "import", path, session(name)); code != ExitOK {
			t.Fatalf("import: %s", errOut)
		}
		own = append(own, cacheOf(t, session(name)))
	}
	code, out, errOut := run(t, "cache", "--transcript", dsn, "--format", "json")
	var got struct {
		Transcripts []struct {
			Name  string `json:"name"`
			Store string `json:"store"`
		} `json:"transcripts"`
		Fleet fleetJSON `json:"fleet"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != ExitOK || len(got.Transcripts) != 2 || got.Transcripts[0].Store == "" {
		t.Fatalf("exit %d, %v: %s%s", code, err, out, errOut)
	}
	wantSums(t, got.Fleet, []string{"chain alpha", "chain beta"}, own, reported)
	code, out, errOut = run(t, "report", "--transcript", dsn)
	if code != ExitOK || !strings.Contains(out, "report chain alpha:\n") || !strings.Contains(out, "report chain beta:\n") ||
		!strings.Contains(out, "fleet: 2 transcript(s), 2 of them in the figures") || !strings.Contains(out, "  session beta of chain beta: 5 call(s)") {
		t.Errorf("report over the store: exit %d\n%s%s", code, out, errOut)
	}
}
