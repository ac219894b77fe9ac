package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/internal/testkit/fakeprovider"
	"github.com/promptloom/promptloom/internal/testkit/pgtest"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/journal/postgres"
	"github.com/promptloom/promptloom/proxy"
)

// liveTranscript records calls calls through a proxy whose journals sign
// a checkpoint after every call, and copies the transcript while the
// proxy still runs (its session open); the proxy is closed after. It
// returns the copy and the verifier key's file.
func liveTranscript(t *testing.T, calls int) (live, pub string) {
	t.Helper()
	dir := t.TempDir()
	if code, _, errOut := run(t, "keygen", filepath.Join(dir, "k")); code != ExitOK {
		t.Fatal(errOut)
	}
	e := &env{stderr: io.Discard}
	signer, err := e.signer(filepath.Join(dir, "k.key"))
	if err != nil {
		t.Fatal(err)
	}
	var replies []fakeprovider.Reply
	for range calls {
		replies = append(replies, fakeprovider.Reply{Text: "It parses.", Usage: fakeprovider.Usage{Input: 40, Output: 3, CacheWrite: 1500}})
	}
	up := fakeprovider.New(replies...)
	defer up.Close()
	u, err := url.Parse(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "run.jsonl")
	p, err := proxy.New(&proxy.Options{Upstream: u, Open: func(s string) (*journal.Journal, error) {
		return journal.Open(path, &journal.Options{Session: s, Signer: signer, CheckpointEvery: 1})
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	defer srv.Close()
	defer p.Close()
	var messages []any
	for i := range calls {
		messages = append(messages, map[string]any{"role": "user", "content": "Question " + string(rune('A'+i)) + "?"})
		body, _ := json.Marshal(map[string]any{
			"model": "claude-sonnet-4-5", "max_tokens": 64,
			"system":   []any{map[string]any{"type": "text", "text": "You are a coding agent. Keep the todo list current."}},
			"messages": messages,
		})
		req, _ := http.NewRequest("POST", srv.URL+"/v1/messages", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(proxy.SessionHeader, "S")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
		messages = append(messages, map[string]any{"role": "assistant", "content": "It parses."})
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(`"journal_close"`)) {
		t.Fatal("the session is closed while the proxy runs")
	}
	live = filepath.Join(dir, "live.jsonl")
	if err := os.WriteFile(live, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return live, filepath.Join(dir, "k.pub")
}

// Every command that reads a transcript reads one still being written:
// it verifies as far as it is written and says the session is open with
// its calls so far. verify --closed fails it, and the same transcript
// with a line altered fails everywhere.
func TestCommandsReadATranscriptStillBeingWritten(t *testing.T) {
	live, pub := liveTranscript(t, 2)
	const open = "open: session S with 2 call(s) so far; verified through line"
	for _, tc := range []struct {
		args       []string
		out, notes string // in stdout, in stderr
	}{
		{[]string{"verify", "--transcript", live}, open, ""},
		{[]string{"verify", "--transcript", live, "--key", pub}, "signed by k: the checkpoint at line 7", ""},
		{[]string{"cache", "--transcript", live}, "", open},
		{[]string{"why", "coding agent", "--transcript", live}, "/system/0", open},
		{[]string{"report", "--transcript", live}, open, ""},
		{[]string{"prove", "--transcript", live, "--call", "S/1", "--key", pub}, `"proof"`, open},
		{[]string{"explain", "--request", "--transcript", live, "--call", "S/2"}, "/system/0", open},
		{[]string{"diff", "--request", "--transcript", live, "--call", "S/1", "--call", "S/2"}, "S/2", open},
	} {
		code, out, errOut := run(t, tc.args...)
		if tc.args[0] == "diff" && code == ExitFail {
			code = ExitOK // diff exits 1 when the two differ, as they do
		}
		if code != ExitOK || !strings.Contains(out, tc.out) || !strings.Contains(errOut, tc.notes) {
			t.Errorf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", tc.args[0], code, out, errOut)
		}
	}
	code, out, _ := run(t, "verify", "--transcript", live, "--format", "json")
	var v struct {
		Transcripts []transcriptVerdict `json:"transcripts"`
	}
	if err := json.Unmarshal([]byte(out), &v); code != ExitOK || err != nil || len(v.Transcripts) != 1 || !v.Transcripts[0].OK || v.Transcripts[0].Finished ||
		len(v.Transcripts[0].Report.Open) != 1 || v.Transcripts[0].Report.Open[0].Calls != 2 || !strings.Contains(v.Transcripts[0].State, open) {
		t.Errorf("verify --format json: exit %d, %v:\n%s", code, err, out)
	}
	if code, out, _ := run(t, "verify", "--transcript", live, "--closed"); code != ExitFail || !strings.Contains(out, "FAIL --closed: the run is not finished: "+open) {
		t.Errorf("verify --closed: exit %d:\n%s", code, out)
	}

	data, err := os.ReadFile(live)
	if err != nil {
		t.Fatal(err)
	}
	altered := filepath.Join(t.TempDir(), "altered.jsonl")
	if err := os.WriteFile(altered, bytes.Replace(data, []byte("It parses."), []byte("It parsed."), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"verify", "--transcript", altered},
		{"cache", "--transcript", altered},
		{"why", "coding agent", "--transcript", altered},
		{"report", "--transcript", altered},
		{"prove", "--transcript", altered, "--call", "S/1", "--key", pub},
	} {
		if code, out, errOut := run(t, args...); code == ExitOK || strings.Contains(out+errOut, open) {
			t.Errorf("%v on an altered transcript: exit %d\n%s%s", args[0], code, out, errOut)
		}
	}

	// A line being written: the last line not whole yet is not read.
	torn := filepath.Join(t.TempDir(), "torn.jsonl")
	if err := os.WriteFile(torn, append(bytes.Clone(data), `{"prev":"blake3:`...), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := run(t, "verify", "--transcript", torn); code != ExitOK || !strings.Contains(out, "is not whole yet") || !strings.Contains(out, open) {
		t.Errorf("a torn last line: exit %d:\n%s", code, out)
	}
}

// A store a proxy still writes: verify over the whole store and over the
// open session says it is open with its calls so far, and verifies.
func TestAPostgresStoreStillBeingWrittenVerifies(t *testing.T) {
	dsn := pgtest.URL(t)
	ctx := context.Background()
	store, err := postgres.Open(ctx, dsn, &postgres.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var open *journal.Journal
	for _, s := range []string{"done", "live"} {
		j := journal.NewSink(store.Sink(s), &journal.Options{Session: s})
		for _, c := range []string{"c1", "c2"} {
			body := `{"model":"claude-sonnet-4-5","max_tokens":8,"system":"You are brief.","messages":[{"role":"user","content":"` + c + `"}]}`
			p, err := j.Begin(ctx, journal.Request{Call: c, Unattributed: true, Body: []byte(body)})
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Finish(ctx, journal.Response{Text: "ok"}, nil); err != nil {
				t.Fatal(err)
			}
		}
		if s == "done" {
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
		} else {
			open = j
		}
	}
	defer open.Close()
	code, out, errOut := run(t, "verify", "--transcript", dsn)
	if code != ExitOK || !strings.Contains(out, "2 of 2 chain(s) verified, 1 of them open (still being written): live") || !strings.Contains(out, "open: session live with 2 call(s) so far") {
		t.Errorf("verify over the store: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := run(t, "verify", "--transcript", dsn, "--closed"); code != ExitFail || !strings.Contains(out, "failed: live") {
		t.Errorf("verify --closed over the store: exit %d\n%s%s", code, out, errOut)
	}
	one := dsn + "&session=live"
	if !strings.Contains(dsn, "?") {
		one = dsn + "?session=live"
	}
	if code, _, errOut := run(t, "cache", "--transcript", one); code != ExitOK || !strings.Contains(errOut, "open: session live with 2 call(s) so far") {
		t.Errorf("cache on the open session: exit %d\n%s", code, errOut)
	}
}

// A refused request is on the record: verify and report list it with its
// reason and the digest of what came in, and the transcript verifies.
func TestARefusalIsShownByVerifyAndReport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	j, err := journal.Open(path, &journal.Options{Session: "S"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := j.Refuse(ctx, "S/1", "malformed", "the request body is not JSON", []byte(`{"model":`)); err != nil {
		t.Fatal(err)
	}
	p, err := j.Begin(ctx, journal.Request{Call: "S/2", Unattributed: true, Body: []byte(`{"model":"claude-sonnet-4-5","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Finish(ctx, journal.Response{Text: "ok"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	const want = "REFUSED line 2: session S, call S/1: malformed: the request body is not JSON (9 bytes received, blake3:"
	for _, args := range [][]string{{"verify", "--transcript", path, "--closed"}, {"report", "--transcript", path}} {
		if code, out, errOut := run(t, args...); code != ExitOK || !strings.Contains(out, want) || !strings.Contains(out, ", 1 refused") {
			t.Errorf("%v: exit %d\n%s%s", args[0], code, out, errOut)
		}
	}
	code, out, _ := run(t, "report", "--transcript", path, "--format", "html")
	if code != ExitOK || !strings.Contains(out, `id="refused"`) || !strings.Contains(out, "malformed: the request body is not JSON") {
		t.Errorf("report --format html: exit %d", code)
	}
}
