package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/harn/options"
	"github.com/promptloom/promptloom/internal/testkit/pgtest"
	"github.com/promptloom/promptloom/journal"
)

// whyOptions are the README's options.
const whyOptions = `{
  "system": [
    {"title": "Role", "content": "You are a careful coding agent."},
    {"content": "Answer in English.", "position": "after"}
  ],
  "tools": [{"name": "todo", "guidance": "Keep the todo list current."}],
  "capabilities": ["vcs.git"],
  "context_profile": {"prompt_fragments": [
    {"body": "Commit with a message that says why.", "requires_caps": ["vcs.git"]},
    {"body": "Run cargo test.", "requires_caps": ["language.rust"]}
  ]},
  "call_role": "agent.main"
}`

// recordREADME writes the README's options to dir/opts.json and a
// transcript of two calls to dir/t.jsonl: "with" the todo tool and
// "without" it.
func recordREADME(t *testing.T, dir string, session ...string) (opts, transcript string) {
	t.Helper()
	session = append(session, "s1")
	opts, transcript = filepath.Join(dir, "opts.json"), filepath.Join(dir, "t.jsonl")
	if err := os.WriteFile(opts, []byte(whyOptions), 0o644); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	j, err := journal.Open(transcript, &journal.Options{Session: session[0], Clock: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	o, err := options.Parse([]byte(whyOptions), nil)
	if err != nil {
		t.Fatal(err)
	}
	model := journal.ModelFunc(func(context.Context, journal.Request) (journal.Response, error) {
		return journal.Response{Text: "ok"}, nil
	})
	for _, call := range []string{"with", "without"} {
		if call == "without" {
			o.Tools[0].Active = false
		}
		x, err := explain.FromOptions(o, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := j.Call(context.Background(), model, journal.Request{Call: call, System: x.System, Manifest: x.Manifest}); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	return opts, transcript
}

// why on the README's example finds the sentence in tool:todo.guidance
// (exit 0) and, without the tool, says it was excluded because the tool is
// not available (exit 1); a text in no fragment is nowhere (exit 1).
func TestWhyOnTheREADME(t *testing.T) {
	opts, _ := recordREADME(t, t.TempDir())
	const text = "Keep the todo list current."
	code, out, errOut := run(t, "why", text, opts)
	if code != ExitOK || !strings.Contains(out, "is in the system prompt once") ||
		!strings.Contains(out, "79      tool:todo.guidance  tool:todo  0-27        tool todo  tool(s) present: todo") {
		t.Errorf("with the tool: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = run(t, "why", text, opts, "--without-tool", "todo")
	if code != ExitFail || !strings.Contains(out, "is not in the system prompt; it is only in fragments left out (1 place)") ||
		!strings.Contains(out, "tool:todo.guidance  tool:todo  excluded  0-27        tool todo  requires tool `todo` (not available)") {
		t.Errorf("without the tool: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = run(t, "why", "zebra", opts)
	if code != ExitFail || !strings.Contains(out, `"zebra" is nowhere`) {
		t.Errorf("nowhere: exit %d\n%s", code, out)
	}
	// JSON: the places, counted.
	code, out, _ = run(t, "why", "--format", "json", text, opts, "--without-tool", "todo")
	var got whyJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != ExitFail {
		t.Fatalf("json: exit %d, %v\n%s", code, err, out)
	}
	if got.InPrompt != 0 || got.LeftOut != 1 || len(got.Places) != 1 || got.Places[0].Offset != -1 ||
		got.Places[0].Row.ID != "tool:todo.guidance" || got.Places[0].Row.State() != "excluded" ||
		strings.Join(got.Places[0].RequiresTools, ",") != "todo" {
		t.Errorf("json: %+v", got)
	}
	// An occurrence across the joiner is one, a row for each fragment.
	code, out, _ = run(t, "why", "--format", "json", "agent.\n\nCommit", opts)
	got = whyJSON{}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != ExitOK || got.InPrompt != 1 || len(got.Places) != 2 ||
		!got.Places[0].Joiner || got.Places[1].Row.ID != "profile[0]" || got.Places[1].Offset != 33 {
		t.Errorf("across the joiner: exit %d %v %+v", code, err, got)
	}
	// --limit lists the first places and counts the rest.
	code, out, _ = run(t, "why", "e", opts, "--limit", "2")
	if code != ExitOK || !strings.Contains(out, "is in the system prompt 11 times") || !strings.Contains(out, "and 10 more not listed (--limit)") {
		t.Errorf("--limit: exit %d\n%s", code, out)
	}
	// Places left out, all past --limit: counted, with no table header
	// over no rows.
	code, out, _ = run(t, "why", "e", opts, "--without-tool", "todo", "--limit", "1")
	if code != ExitOK || !strings.Contains(out, "and in fragments left out (5 places, not listed: --limit)\n") || strings.Contains(out, "ID  SOURCE  STATE") {
		t.Errorf("--limit past the left-out places: exit %d\n%s", code, out)
	}
}

// why, explain and diff read a recorded call from its transcript alone,
// verified first.
func TestWhyExplainDiffFromATranscript(t *testing.T) {
	dir := t.TempDir()
	opts, tr := recordREADME(t, dir)
	const text = "Keep the todo list current."
	code, out, errOut := run(t, "why", text, "--transcript", tr, "--call", "with")
	if code != ExitOK || !strings.Contains(out, "is in the system prompt of call with once") ||
		!strings.Contains(out, "79      tool:todo.guidance  tool:todo  0-27        tool(s) present: todo") ||
		!strings.HasSuffix(out, "a transcript keeps no body of a fragment left out; not searched: profile[1]\n") {
		t.Errorf("with: exit %d\n%s%s", code, out, errOut)
	}
	// The body of a fragment left out is not retained: the whole body is
	// found by its digest, a part of it cannot be.
	code, out, _ = run(t, "why", text, "--transcript", tr, "--call", "without")
	if code != ExitFail || !strings.Contains(out, "tool:todo.guidance  tool:todo  excluded  0-27 (whole body, by digest)  requires tool `todo` (not available)") {
		t.Errorf("without, whole body: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "why", "todo list", "--transcript", tr, "--call", "without")
	if code != ExitFail || !strings.Contains(out, "A transcript keeps no body of a fragment left out, only its digest: it may be in part of one of these 2:") ||
		!strings.Contains(out, "tool:todo.guidance  excluded  requires tool `todo` (not available)") {
		t.Errorf("without, part: exit %d\n%s", code, out)
	}

	// explain --transcript is explain of the options, row for row (no
	// source: a recording keeps the producer).
	code, rec, errOut := run(t, "explain", "--format", "json", "--transcript", tr, "--call", "with")
	_, live, _ := run(t, "explain", "--format", "json", opts)
	if code != ExitOK {
		t.Fatalf("explain --transcript: exit %d: %s", code, errOut)
	}
	var a, b explain.Explanation
	if err := json.Unmarshal([]byte(rec), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(live), &b); err != nil {
		t.Fatal(err)
	}
	for i := range b.Fragments {
		b.Fragments[i].Source = ""
	}
	b.Traces = nil // the stages of a run the recording did not see
	if ja, jb := mustJSON(t, &a), mustJSON(t, &b); ja != jb {
		t.Errorf("explain --transcript:\n%s\nexplain:\n%s", ja, jb)
	}
	code, table, _ := run(t, "explain", "--transcript", tr, "--call", "with")
	if code != ExitOK || !strings.HasPrefix(table, "recorded call with (line 4 of "+tr+"), verified") ||
		!strings.Contains(table, "4  tool:todo.guidance          before  yes  79      27     blake3:f285e33dc9cc  tool(s) present: todo") {
		t.Errorf("explain --transcript, text: exit %d\n%s", code, table)
	}
	code, raw, _ := run(t, "explain", "--format", "raw", "--transcript", tr, "--call", "with")
	if _, want, _ := run(t, "explain", "--format", "raw", opts); code != ExitOK || raw != want {
		t.Errorf("raw: exit %d %q, want %q", code, raw, want)
	}

	// diff of two recorded calls is diff of the options with and without
	// the tool, but for the names.
	code, d, errOut := run(t, "diff", "--transcript", tr, "--call", "with", "--call", "without")
	_, want, _ := run(t, "diff", opts, "--without-tool", "todo")
	want = strings.ReplaceAll(strings.ReplaceAll(want, opts+" (without-tool todo)", "call without"), opts, "call with")
	if code != ExitFail || d != want {
		t.Errorf("diff --transcript: exit %d %s\n%s\nwant\n%s", code, errOut, d, want)
	}
	if code, _, _ := run(t, "diff", "--transcript", tr, "--call", "with", "--call", "with"); code != ExitOK {
		t.Errorf("diff of a call with itself: exit %d", code)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A transcript whose lines do not verify explains nothing: a changed byte
// of the prompt, a call named twice or not at all, the flags that shape a
// prompt from options.
func TestRecordedCallsAreVerifiedFirst(t *testing.T) {
	dir := t.TempDir()
	_, tr := recordREADME(t, dir)
	data, err := os.ReadFile(tr)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	edited := write("edited.jsonl", strings.Replace(string(data), "careful coding agent", "careless coding agent", 1))
	twice := write("twice.jsonl", strings.ReplaceAll(string(data), `"call":"without"`, `"call":"with"`))
	// A run still being written (no journal_close) is explained.
	lines := strings.SplitAfter(string(data), "\n")
	open := write("open.jsonl", strings.Join(lines[:len(lines)-2], ""))
	// A call not answered yet is explained too: its prompt and manifest
	// verify.
	unanswered := write("unanswered.jsonl", strings.Join(lines[:len(lines)-3], ""))
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"why", "careless", "--transcript", edited, "--call", "with"}, ExitBadArgs, "call with (line 4) is not explained: call does not verify: the system_prompt at line 2 does not hash to its content_hash"},
		{[]string{"explain", "--transcript", edited, "--call", "without"}, ExitBadArgs, "the transcript does not verify up to call without"},
		{[]string{"diff", "--transcript", edited, "--call", "with", "--call", "without"}, ExitBadArgs, "is not explained"},
		{[]string{"why", "x", "--transcript", twice, "--call", "with"}, ExitBadArgs, `2 calls are named "with" (lines 4, 8)`},
		{[]string{"why", "x", "--transcript", tr, "--call", "nope"}, ExitBadArgs, `no call "nope" in the transcript`},
		{[]string{"why", "x", "--transcript", tr}, ExitBadArgs, "give --call NAME"},
		{[]string{"why", "x", "--transcript", tr, "--call", "with", "--without-tool", "todo"}, ExitBadArgs, "--without-tool needs an options file"},
		{[]string{"explain", "--transcript", tr, "--call", "with", "--lint", "--project", "."}, ExitBadArgs, "--lint, --project need an options file"},
		{[]string{"explain", "--transcript", tr, "--call", "with", "--format", "payload:anthropic"}, ExitBadArgs, "a recorded call has no options"},
		{[]string{"diff", "--transcript", tr, "--call", "with"}, ExitBadArgs, "give --call A --call B (got 1)"},
		{[]string{"diff", "a.json", "--transcript", tr, "--call", "with", "--call", "without"}, ExitBadArgs, "takes no options file"},
		{[]string{"why", "Keep", "--transcript", open, "--call", "without"}, ExitFail, "not in the system prompt of call without"},
		{[]string{"why", "careful", "--transcript", unanswered, "--call", "without"}, ExitOK, "is in the system prompt of call without once"},
		{[]string{"explain", "--transcript", edited, "--call", "with", "--format", "raw"}, ExitBadArgs, "does not hash to its content_hash"},
		{[]string{"why", ""}, ExitBadArgs, "TEXT is empty"},
		{[]string{"why"}, ExitBadArgs, "takes TEXT"},
		{[]string{"why", "x", "a.json", "b.json"}, ExitBadArgs, "got 2 files"},
		{[]string{"why", "x", "--limit", "-1"}, ExitBadArgs, "--limit must be 0 or more"},
	} {
		code, out, errOut := run(t, tc.args...)
		if code != tc.code || !strings.Contains(out+errOut, tc.want) {
			t.Errorf("%q: exit %d, want %d with %q:\n%s%s", tc.args, code, tc.code, tc.want, out, errOut)
		}
	}
}

// For a templated fragment, why names the template text or binding behind
// the bytes; from a transcript, which records no spans, the template and
// the bindings it read.
func TestWhyTemplated(t *testing.T) {
	dir := t.TempDir()
	opts := filepath.Join(dir, "t.json")
	const o = `{"system": [{"title": "Role", "template": "Work in {{ cwd | upper }} today.", "bindings": {"cwd": "/srv/app"}}]}`
	if err := os.WriteFile(opts, []byte(o), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "why", "in /SRV", opts)
	if code != ExitOK || !strings.Contains(out, "13      system[0]  system[0]  13-20       -      text at inline:1:6; binding cwd | upper at inline:1:9  unconditional") {
		t.Errorf("options: exit %d\n%s%s", code, out, errOut)
	}
	// Bytes from an included file name it, and where the template
	// includes it.
	inc := filepath.Join(dir, "inc.json")
	for name, body := range map[string]string{
		"sys.prompt":  "Top.\n{{ include \"part.prompt\" }}\n",
		"part.prompt": "Part has {{ x }}.",
		"inc.json":    `{"system": [{"template_file": "sys.prompt", "bindings": {"x": "yes"}}]}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut = run(t, "why", "has yes", inc)
	if code != ExitOK || !strings.Contains(out, "text at part.prompt:1:6 (included at 2:1); binding x at part.prompt:1:10 (included at 2:1)") {
		t.Errorf("include: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = run(t, "why", "Role", opts)
	if code != ExitOK || !strings.Contains(out, "none: added by the options around the render") {
		t.Errorf("the heading: exit %d\n%s", code, out)
	}
	// Recorded.
	x, err := explain.Explain([]byte(o), nil)
	if err != nil {
		t.Fatal(err)
	}
	tr := filepath.Join(dir, "t.jsonl")
	j, err := journal.Open(tr, &journal.Options{Session: "s"})
	if err != nil {
		t.Fatal(err)
	}
	model := journal.ModelFunc(func(context.Context, journal.Request) (journal.Response, error) {
		return journal.Response{Text: "ok"}, nil
	})
	if _, err := j.Call(context.Background(), model, journal.Request{Call: "c", System: x.System, Manifest: x.Manifest}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	code, out, errOut = run(t, "why", "/SRV/APP", "--transcript", tr, "--call", "c")
	if code != ExitOK || !strings.Contains(out, "16      system[0]  system[0]  16-24       template inline, bindings read: cwd (a manifest records no positions)  unconditional") {
		t.Errorf("recorded: exit %d\n%s%s", code, out, errOut)
	}
}

// A transcript in PostgreSQL is read as its file is: why, explain and diff
// from a postgres:// URL of one session give what they give from the file.
func TestRecordedCallsFromPostgres(t *testing.T) {
	url := pgtest.URL(t)
	_, tr := recordREADME(t, t.TempDir())
	if code, _, errOut := run(t, "transcript", "migrate", url); code != ExitOK {
		t.Fatalf("migrate: %s", errOut)
	}
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	session := url + sep + "session=readme"
	if code, _, errOut := run(t, "transcript", "import", tr, session); code != ExitOK {
		t.Fatalf("import: %s", errOut)
	}
	for _, args := range [][]string{
		{"why", "Keep the todo list current.", "--call", "without"},
		{"explain", "--format", "json", "--call", "with"},
		{"diff", "--call", "with", "--call", "without"},
	} {
		fc, fout, ferr := run(t, append(args, "--transcript", tr)...)
		pc, pout, perr := run(t, append(args, "--transcript", session)...)
		if fc != pc || fout != pout || fc == ExitBadArgs {
			t.Errorf("%q: the file gives exit %d\n%s%s\nPostgreSQL exit %d\n%s%s", args, fc, fout, ferr, pc, pout, perr)
		}
	}
	// A store of more than one session needs ?session=.
	if code, _, errOut := run(t, "transcript", "import", tr, url+sep+"session=again"); code != ExitOK {
		t.Fatalf("import: %s", errOut)
	}
	if code, _, errOut := run(t, "why", "x", "--transcript", url, "--call", "with"); code != ExitBadArgs || !strings.Contains(errOut, "name one with ?session=") {
		t.Errorf("two sessions: exit %d %s", code, errOut)
	}
}

// A harness run twice into one file repeats its call names: --call NAME is
// then refused as ambiguous, naming the lines, and NAME@LINE picks one.
func TestRecordedCallNamedTwice(t *testing.T) {
	dir := t.TempDir()
	recordREADME(t, dir)
	_, tr := recordREADME(t, dir, "s2") // appends a second session to t.jsonl
	code, _, errOut := run(t, "explain", "--transcript", tr, "--call", "with")
	if code != ExitBadArgs || !strings.Contains(errOut, `2 calls are named "with"`) {
		t.Fatalf("ambiguous: exit %d %s", code, errOut)
	}
	at := strings.LastIndex(errOut, "(with@")
	pick := strings.TrimSuffix(strings.Fields(errOut[at+1:])[0], ")")
	code, out, errOut := run(t, "why", "Keep the todo list current.", "--transcript", tr, "--call", pick)
	if code != ExitOK || !strings.Contains(out, "tool:todo.guidance") {
		t.Errorf("--call %s: exit %d\n%s%s", pick, code, out, errOut)
	}
	if code, _, _ := run(t, "explain", "--transcript", tr, "--call", "with@1"); code != ExitBadArgs {
		t.Errorf("--call with@1 (no request there): exit %d", code)
	}
}
