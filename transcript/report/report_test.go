package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/internal/testkit/chromiumtest"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/transcript"
	"github.com/promptloom/promptloom/transcript/report"
)

var ctx = context.Background()

// clock starts at 2026-11-03 and ticks a second a call.
var clock = func() func() time.Time {
	t := time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC).Add(-time.Second)
	return func() time.Time { t = t.Add(time.Second); return t }
}()

func request(t *testing.T, call, options string) journal.Request {
	t.Helper()
	e, err := explain.Explain([]byte(options), nil)
	if err != nil {
		t.Fatal(err)
	}
	return journal.Request{Call: call, System: e.System, Manifest: e.Manifest,
		Messages: json.RawMessage(`[{"role":"user","content":"hello ` + call + `"}]`), Tools: json.RawMessage(`[{"name":"todo"}]`)}
}

var echo = journal.ModelFunc(func(_ context.Context, req journal.Request) (journal.Response, error) {
	return journal.Response{Text: "reply to " + req.Call}, nil
})

// runForPage records a run with two roles, a changed prompt between the
// calls of one role, and a failed call; it returns the transcript.
func runForPage(t *testing.T) string {
	var buf bytes.Buffer
	j := journal.New(&buf, &journal.Options{Clock: clock, Session: "s1"})
	for i, opts := range []string{
		`{"system": ["You are careful.", "Answer in English."]}`,
		`{"system": ["You are brief."], "tools": [{"name": "todo", "guidance": "Track it."}]}`,
		`{"system": ["You are careful.", "Answer in French."]}`,
	} {
		r := request(t, fmt.Sprintf("c%d", i+1), opts)
		r.Manifest.CallRole = []string{"planner", "coder", "planner"}[i]
		m := echo
		if i == 1 {
			m = journal.ModelFunc(func(context.Context, journal.Request) (journal.Response, error) {
				return journal.Response{}, fmt.Errorf("rate limited")
			})
		}
		j.Call(ctx, m, r)
	}
	j.Close()
	return buf.String()
}

func renderRun(t *testing.T, tr string) (*transcript.Report, []byte) {
	t.Helper()
	rep, err := transcript.Verify(strings.NewReader(tr), nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := report.WriteHTML(&buf, "run.jsonl", rep, nil); err != nil {
		t.Fatal(err)
	}
	return rep, buf.Bytes()
}

// The run's model: calls by role, fragments with their state, and for the
// second planner call what changed and what the prefix cache keeps.
func TestRunReadsCallsAndChanges(t *testing.T) {
	run, _ := renderRun(t, runForPage(t))
	if len(run.Calls) != 3 || run.Calls[1].Manifest.CallRole != "coder" || run.Calls[1].Outcome != "error: rate limited" {
		t.Fatalf("calls: %+v", run.Calls)
	}
	since := report.Compare(run)
	s := since[2]
	if s == nil || s.Previous != "c1" || len(s.Changes) != 1 || s.Changes[0].String() != "system[1] (digest)" || s.Changes[0].Kind != manifest.Changed {
		t.Fatalf("since: %+v", s)
	}
	// "You are careful.\n\nAnswer in " is common to both prompts.
	if want := len("You are careful.\n\nAnswer in "); s.CommonPrefixBytes != want || s.ResendBytes != len("French.") {
		t.Errorf("cache: %d in common, %d re-sent; want %d, %d", s.CommonPrefixBytes, s.ResendBytes, want, len("French."))
	}
	if since[0] != nil || since[1] != nil {
		t.Error("the first call of a role has nothing to compare with")
	}
}

func TestRunPageRendersInChromium(t *testing.T) {
	tr := runForPage(t)
	// A tampered copy too: its failing calls must show as failed.
	tampered := strings.Replace(tr, "Answer in French.", "Answer in Klingon", 1)
	for name, tr := range map[string]string{"run.html": tr, "tampered.html": tampered} {
		t.Run(name, func(t *testing.T) {
			run, html := renderRun(t, tr)
			if bytes.Contains(html, []byte("http://")) || bytes.Contains(html, []byte("https://")) {
				t.Error("the page refers to the network; it must be self-contained")
			}
			if name == "tampered.html" && (!bytes.Contains(html, []byte(`data-status="failed"`)) || !bytes.Contains(html, []byte(`id="problems"`))) {
				t.Error("the tampered run's page shows no failed call and no problem")
			}
			for _, c := range run.Calls {
				if !bytes.Contains(html, []byte(`data-call="`+c.Call+`"`)) || !bytes.Contains(html, []byte(`data-status="`+string(c.Status)+`"`)) {
					t.Errorf("call %s (%s) is not on the page", c.Call, c.Status)
				}
			}
			bin := chromiumtest.Find(t)
			file := filepath.Join(t.TempDir(), name)
			os.WriteFile(file, html, 0o644)
			dom := chromiumtest.Run(t, bin, file, "--dump-dom")
			if m := regexp.MustCompile(`data-ready="(\d+)"`).FindSubmatch(dom); m == nil || string(m[1]) == "0" {
				t.Errorf("the page's script did not run to completion")
			}
			for _, c := range run.Calls {
				if !bytes.Contains(dom, []byte(`data-call="`+c.Call+`"`)) {
					t.Errorf("call %s is not in the rendered DOM", c.Call)
				}
				for _, f := range c.Manifest.Rows() {
					if !bytes.Contains(dom, []byte(`data-id="`+f.ID+`"`)) {
						t.Errorf("fragment %s of call %s is not in the rendered DOM", f.ID, c.Call)
					}
				}
			}
		})
	}
}

// Every value taken from the transcript reaches the text report escaped: a
// reply holding a newline and an ESC sequence cannot forge a row or reach
// the terminal.
func TestTextEscapesTheTranscript(t *testing.T) {
	var buf bytes.Buffer
	j := journal.New(&buf, &journal.Options{Clock: clock, Session: "s1"})
	forger := journal.ModelFunc(func(context.Context, journal.Request) (journal.Response, error) {
		return journal.Response{Text: "all agreed\n\x1b[31mok   line 99: call fake"}, nil
	})
	if _, err := j.Call(ctx, forger, request(t, "c1", `{"system": "You are careful."}`)); err != nil {
		t.Fatal(err)
	}
	j.Close()
	rep, err := transcript.Verify(&buf, nil)
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %v %+v", err, rep.Problems)
	}
	var b strings.Builder
	if err := report.WriteText(&b, rep, nil); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(b.String(), "\x1b") || strings.Contains(b.String(), "\nok   line 99") {
		t.Errorf("the reply reached the text unescaped:\n%s", b.String())
	}
}

// Each call shows the prefix promptloom predicted stable against its
// role's previous call beside the cache tokens the provider reported.
func TestCacheBesidePrediction(t *testing.T) {
	var buf bytes.Buffer
	j := journal.New(&buf, &journal.Options{Clock: clock, Session: "s1"})
	for i, opts := range []string{
		`{"system": ["You are careful.", "Answer in English."]}`,
		`{"system": ["You are careful.", "Answer in French."]}`,
		`{"system": ["You are careful."]}`,
	} {
		u := []*payload.Usage{{InputTokens: 40, OutputTokens: 3, CacheWriteTokens: 30}, {InputTokens: 41, OutputTokens: 4, CacheReadTokens: 30}, nil}[i]
		model := journal.ModelFunc(func(context.Context, journal.Request) (journal.Response, error) {
			return journal.Response{Text: "ok", Usage: u}, nil
		})
		if _, err := j.Call(ctx, model, request(t, fmt.Sprintf("c%d", i+1), opts)); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	rep, html := renderRun(t, buf.String())
	if !rep.OK() {
		t.Fatalf("%+v", rep.Problems)
	}
	if u := rep.Calls[1].Usage; u == nil || u.CacheReadTokens != 30 || u.InputTokens != 41 || rep.Calls[2].Usage != nil {
		t.Fatalf("usage %+v, %+v", rep.Calls[1].Usage, rep.Calls[2].Usage)
	}
	var text strings.Builder
	if err := report.WriteText(&text, rep, nil); err != nil {
		t.Fatal(err)
	}
	common := len("You are careful.\n\nAnswer in ")
	for _, want := range []string{
		"  cache: no earlier call of its role to keep a prefix stable against; the provider read 0 tokens from its cache and wrote 30 (its input_tokens: 40)\n",
		fmt.Sprintf("  cache: promptloom predicted %d bytes of the prompt stable since c1; the provider read 30 tokens from its cache (its input_tokens: 41)\n", common),
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text lacks %q:\n%s", want, text.String())
		}
	}
	if n := strings.Count(text.String(), "  cache: "); n != 2 {
		t.Errorf("%d cache lines, want 2 (the third call reported no usage):\n%s", n, text.String())
	}
	if want := fmt.Sprintf(`data-predicted="%d" data-cache-read="30" data-cache-write="0"`, common); !bytes.Contains(html, []byte(want)) {
		t.Errorf("the page lacks %s", want)
	}
}

// An unattributed call (no manifest, perhaps no name) is shown as such,
// never as a prompt of 0 bytes; the verdicts name an unnamed call.
func TestUnattributedCallIsShownAsSuch(t *testing.T) {
	var buf bytes.Buffer
	j := journal.New(&buf, &journal.Options{Clock: clock, Session: "s1"})
	if _, err := j.Call(ctx, echo, journal.Request{Body: []byte(`{"model":"m","system":"Be brief.","messages":[]}`), Unattributed: true}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	rep, err := transcript.Verify(bytes.NewReader(buf.Bytes()), nil)
	if err != nil || !rep.OK() {
		t.Fatalf("%v %+v", err, rep)
	}
	var text, verdicts strings.Builder
	if err := report.WriteText(&text, rep, nil); err != nil {
		t.Fatal(err)
	}
	if s := text.String(); strings.Contains(s, "0-byte prompt") || !strings.Contains(s, "ok (unnamed) (line 2): unattributed: no manifest") {
		t.Errorf("report:\n%s", s)
	}
	if err := rep.WriteText(&verdicts); err != nil {
		t.Fatal(err)
	}
	if s := verdicts.String(); !strings.Contains(s, "call (unnamed) (seq 2): unattributed") {
		t.Errorf("verdicts:\n%s", s)
	}
}

// A call citing the manifest an earlier call listed says so instead of
// listing its rows again (160 calls on one 50,000-fragment manifest made
// 582 MB of text).
func TestTextListsAManifestOnce(t *testing.T) {
	var buf bytes.Buffer
	j := journal.New(&buf, &journal.Options{Clock: clock, Session: "s1"})
	for _, c := range []string{"c1", "c2"} {
		if _, err := j.Call(ctx, echo, request(t, c, `{"system": ["You are careful.", "Answer in English."]}`)); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	rep, err := transcript.Verify(bytes.NewReader(buf.Bytes()), nil)
	if err != nil || !rep.OK() {
		t.Fatalf("%v %+v", err, rep)
	}
	var text strings.Builder
	if err := report.WriteText(&text, rep, nil); err != nil {
		t.Fatal(err)
	}
	s := text.String()
	if strings.Count(s, "system[1]: unconditional") != 1 || !strings.Contains(s, "fragments: as listed for c1 (line 4) (the same manifest)") {
		t.Errorf("report:\n%s", s)
	}
	// One manifest line and one prompt line: nothing to compare, all of
	// the prompt in common.
	if c := report.Compare(rep)[1]; c == nil || c.Changes != nil || c.ResendBytes != 0 || c.CommonPrefixBytes != rep.Calls[1].SystemBytes {
		t.Errorf("c2 against c1: %+v", c)
	}
}

// A turn whose answer is only a tool call shows the call, in text and on
// the page, and the page holds the prompt it was served.
func TestToolCallOnlyTurnIsShown(t *testing.T) {
	var buf bytes.Buffer
	j := journal.New(&buf, &journal.Options{Clock: clock, Session: "s1"})
	tool := journal.ModelFunc(func(context.Context, journal.Request) (journal.Response, error) {
		return journal.Response{ToolCalls: []payload.ToolCall{{ID: "toolu_1", Name: "read_file"}}, StopReason: "tool_use"}, nil
	})
	if _, err := j.Call(ctx, tool, request(t, "c1", `{"system": ["You read files."]}`)); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := transcript.Verify(bytes.NewReader(buf.Bytes()), nil)
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %v", err)
	}
	var text, page strings.Builder
	if err := report.WriteText(&text, rep, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "  tool call: read_file (id toolu_1), arguments blake3:") {
		t.Errorf("text:\n%s", text.String())
	}
	if err := report.WriteHTML(&page, "run", rep, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<div class="tool-call">tool call: read_file (id toolu_1)`, `<pre>You read files.</pre>`} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// A proxied call (no manifest, its whole body kept redacted) shows its
// request, each segment in cache order with its text, and its reply; a
// segment an earlier call of the session showed is not shown again; its
// lane is its session, and it has no empty fragment table.
func TestProxiedCallShowsItsRequest(t *testing.T) {
	secret := "sk-ant-api03-" + strings.Repeat("Zq7Xw2Lp9Rt4", 8) + "AA"
	var buf bytes.Buffer
	j := journal.New(&buf, &journal.Options{Clock: clock, Session: "S"})
	tools := `"tools":[{"name":"Bash","description":"Run a shell command.","input_schema":{"type":"object"}}]`
	system := `"system":[{"type":"text","text":"You are careful.\nok   line 99: forged"},{"type":"text","text":"It is 09:00."}]`
	for i, messages := range []string{
		`[{"role":"user","content":"Read the parser."}]`,
		`[{"role":"user","content":"Read the parser."},{"role":"assistant","content":[{"type":"text","text":"reply to c1"}]},{"role":"user","content":"My key is ` + secret + `."}]`,
	} {
		body := `{"model":"claude-sonnet-4-5","max_tokens":5,` + tools + `,` + system + `,"messages":` + messages + `}`
		if _, err := j.Call(ctx, echo, journal.Request{Call: fmt.Sprintf("c%d", i+1), Body: []byte(body), Provider: "anthropic", Unattributed: true}); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	data := buf.Bytes()
	rep, err := transcript.Verify(bytes.NewReader(data), nil)
	if err != nil || !rep.OK() {
		t.Fatalf("%v %+v", err, rep)
	}
	rs, err := cache.FromTranscript(data, rep)
	if err != nil {
		t.Fatal(err)
	}
	o := &report.Options{Requests: rs}
	var text, page strings.Builder
	if err := report.WriteText(&text, rep, o); err != nil {
		t.Fatal(err)
	}
	s := text.String()
	for _, want := range []string{
		"  request (anthropic, claude-sonnet-4-5): 4 segment(s) in cache order, ~",
		"\n    /tools/0 tools tool Bash (~",
		`      {"description":"Run a shell command.","input_schema":{"type":"object"},"name":"Bash"}` + "\n",
		"\n    /system/0 system (~",
		"      You are careful.\n      ok   line 99: forged\n",
		"      It is 09:00.\n",
		"      Read the parser.\n",
		"  reply: reply to c1\n",
		"\n    /tools/0 to /messages/0/content: 4 segment(s) as shown for c1 (line 2)\n",
		"\n    /messages/1/content/0 messages assistant (~3 tokens):\n      reply to c1\n",
		"      My key is <redacted:",
		"  reply: reply to c2\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the text lacks %q:\n%s", want, s)
		}
	}
	if strings.Count(s, "You are careful.") != 1 || strings.Contains(s, secret) || strings.Contains(s, "\nok   line 99") {
		t.Errorf("the text shows a segment twice, the secret, or a forged row:\n%s", s)
	}
	if err := report.WriteHTML(&page, "run", rep, o); err != nil {
		t.Fatal(err)
	}
	h := page.String()
	for _, want := range []string{
		`<h2>session S · 2 call(s)</h2>`,
		`<div class="segment sec-system" data-path="/system/0" data-section="system">`,
		"<pre>You are careful.\nok   line 99: forged</pre>",
		`<div class="segment seen" data-path="/tools/0" data-seen="c1 (line 2)">/tools/0 to /messages/0/content: 4 segment(s) as shown for c1 (line 2)</div>`,
		`<pre>My key is &lt;redacted:`,
		`<div class="reply">reply to c2</div>`,
	} {
		if !strings.Contains(h, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(h, "(no role)") || strings.Contains(h, "<th>fragment</th>") || strings.Contains(h, secret) {
		t.Errorf("the page shows an empty fragment table, no role, or the secret:\n%s", h)
	}
	// Without the requests, the call is shown as before: nothing invented.
	text.Reset()
	if err := report.WriteText(&text, rep, nil); err != nil || strings.Contains(text.String(), "request (") {
		t.Errorf("%v:\n%s", err, text.String())
	}
}
