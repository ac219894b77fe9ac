package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/internal/chain"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/transcript"

	"github.com/tidwall/gjson"
)

var ctx = context.Background()

// clock starts at 2026-11-03 and ticks a second a call.
var clock = func() func() time.Time {
	t := time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC).Add(-time.Second)
	return func() time.Time { t = t.Add(time.Second); return t }
}()

func request(t *testing.T, call, options string) Request {
	t.Helper()
	e, err := explain.Explain([]byte(options), nil)
	if err != nil {
		t.Fatal(err)
	}
	return Request{Call: call, System: e.System, Manifest: e.Manifest,
		Messages: json.RawMessage(`[{"role":"user","content":"hello ` + call + `"}]`), Tools: json.RawMessage(`[{"name":"todo"}]`)}
}

var echo = ModelFunc(func(_ context.Context, req Request) (Response, error) {
	return Response{Text: "reply to " + req.Call}, nil
})

// record writes three calls, the second reusing the first one's prompt.
func record(t *testing.T, j *Journal) {
	t.Helper()
	for _, r := range []Request{
		request(t, "c1", `{"system": ["You are careful.", "Answer in English."]}`),
		request(t, "c2", `{"system": ["You are careful.", "Answer in English."]}`),
		request(t, "c3", `{"system": ["You are brief."], "tools": [{"name": "todo", "guidance": "Track it."}]}`),
	} {
		if _, err := j.Call(ctx, echo, r); err != nil {
			t.Fatal(err)
		}
	}
}

// recorded returns the transcript of record, its session closed.
func recorded(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	j := New(&buf, &Options{Clock: clock, Session: "s1"})
	record(t, j)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// rechain recomputes every line's prev, as a forger would after an edit:
// what the chain no longer catches, the receipts must.
func rechain(tx string) string {
	prev := chain.Genesis
	requests := map[int64]string{} // seq -> line hash
	var out strings.Builder
	for _, l := range strings.SplitAfter(tx, "\n") {
		if l == "" {
			continue
		}
		body := strings.TrimSuffix(l, "\n")
		for _, field := range []string{`"prev":"`, `"request_hash":"`} {
			at := strings.Index(body, field)
			if at < 0 {
				continue
			}
			at += len(field)
			h := prev
			if field != `"prev":"` {
				h = requests[gjson.Get(body, "request_seq").Int()]
			}
			body = body[:at] + h + body[at+len(chain.Genesis):]
		}
		prev = chain.LineHash([]byte(body))
		if gjson.Get(body, "kind").Str == chain.KindRequest {
			requests[gjson.Get(body, "seq").Int()] = prev
		}
		out.WriteString(body + "\n")
	}
	return out.String()
}

func kinds(tx string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(tx), "\n") {
		var v struct{ Kind string }
		json.Unmarshal([]byte(l), &v)
		out = append(out, v.Kind)
	}
	return out
}

func TestRecordAndVerify(t *testing.T) {
	tx := recorded(t)
	got := strings.Join(kinds(tx), " ")
	want := "journal_open system_prompt context_manifest provider_call_request provider_call_response " +
		"provider_call_request provider_call_response " + // c2: same prompt and manifest, not written again
		"system_prompt context_manifest provider_call_request provider_call_response journal_close"
	if got != want {
		t.Errorf("kinds:\n%s\nwant\n%s", got, want)
	}
	rep, err := transcript.Verify(strings.NewReader(tx), nil)
	if err != nil || !rep.OK() || len(rep.Calls) != 3 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// Flipping one byte anywhere in a system prompt's content, a manifest, or
// any hash makes verify fail at the line of a call that relies on it.
func TestVerifyCatchesEveryFlippedByte(t *testing.T) {
	buf := bytes.NewBufferString(recorded(t))
	lines := strings.SplitAfter(buf.String(), "\n")
	offset := 0
	flips := 0
	for li, line := range lines {
		for _, field := range []string{`"content":"`, `"manifest":{`, `"content_hash":"`, `"manifest_content_hash":"`,
			`"system_prompt_content_hash":"`, `"messages_content_hash":"`, `"tools_content_hash":"`, `"messages":[`} {
			at := strings.Index(line, field)
			if at < 0 {
				continue
			}
			// flip within the value only: up to the closing quote of a
			// string, the end of the manifest or of the messages
			start := at + len(field)
			end := start + strings.IndexByte(line[start:], '"')
			switch field {
			case `"manifest":{`: // the last field: all of it
				end = len(line) - len("}}\n")
			case `"messages":[`:
				end = strings.Index(line[start:], `]`) + start
			}
			for i := start; i < end && i < len(line)-2; i += 7 {
				b := bytes.Clone(buf.Bytes())
				b[offset+i] ^= 0x01
				rep, err := transcript.Verify(bytes.NewReader(b), nil)
				if err != nil {
					t.Fatal(err)
				}
				flips++
				if rep.OK() {
					t.Fatalf("line %d, %s: flipping byte %d went unnoticed", li+1, field, i)
				}
			}
		}
		offset += len(line)
	}
	if flips < 50 {
		t.Errorf("only %d flips tried", flips)
	}
}

// A change inside a redacted secret is invisible to every content hash:
// that is what redacting before hashing buys (a digest never confirms a
// guessed secret) and costs. The chain, over the exact line, still sees it;
// with the chain recomputed, everything around the secret is still checked.
func TestChangesInsideASecretAreInvisibleToReceipts(t *testing.T) {
	var buf bytes.Buffer
	j := New(&buf, &Options{Clock: clock, KeepRaw: true}) // the secret is in the file only when kept raw
	if _, err := j.Call(ctx, echo, request(t, "c1", `{"system": "Deploy with password: hunter22 today."}`)); err != nil {
		t.Fatal(err)
	}
	j.Close()
	inside := strings.Replace(buf.String(), "hunter22", "hunter23", 1)
	if rep, _ := transcript.Verify(strings.NewReader(inside), nil); rep.OK() {
		t.Error("the chain missed an edited line")
	}
	if rep, _ := transcript.Verify(strings.NewReader(rechain(inside)), nil); !rep.OK() {
		t.Errorf("a change inside the secret was seen by a receipt: %+v", rep)
	}
	outside := rechain(strings.Replace(buf.String(), "Deploy with", "Deploy wiTh", 1))
	if rep, _ := transcript.Verify(strings.NewReader(outside), nil); rep.OK() {
		t.Error("a change outside the secret went unnoticed")
	}
}

// Unknown fields are read past (the receipt is extensible); unknown kinds
// are not (TestEditsThatMustFail).
func TestVerifyIsTolerantOfUnknownFields(t *testing.T) {
	var out strings.Builder
	for _, l := range strings.SplitAfter(recorded(t), "\n") {
		if at := strings.Index(l, `"seq"`); at >= 0 {
			l = l[:at] + `"future_field":[1,2],` + l[at:]
		}
		out.WriteString(strings.Replace(l, `"served_context":{`, `"served_context":{"payload_content_hash":"blake3:00",`, 1))
	}
	rep, err := transcript.Verify(strings.NewReader(rechain(out.String())), nil)
	if err != nil || !rep.OK() || len(rep.Calls) != 3 {
		t.Fatalf("verify of a transcript with unknown fields: %+v %v", rep, err)
	}
}

// A stale manifest fails the call before anything is written.
func TestStaleManifestFailsClosed(t *testing.T) {
	var buf bytes.Buffer
	j := New(&buf, &Options{Clock: clock})
	r := request(t, "c1", `{"system": ["You are careful."]}`)
	r.System += " (edited after assembly)"
	called := false
	_, err := j.Call(ctx, ModelFunc(func(context.Context, Request) (Response, error) {
		called = true
		return Response{}, nil
	}), r)
	if !errors.Is(err, ErrStaleManifest) || !errors.Is(err, manifest.ErrInvalid) {
		t.Errorf("Call = %v", err)
	}
	if buf.Len() != 0 || called {
		t.Errorf("a failed call wrote %d bytes (model called: %v)", buf.Len(), called)
	}
}

// An adapter that adds ten bytes: the manifest is projected, and verifies.
func TestEgressIsProjected(t *testing.T) {
	var buf bytes.Buffer
	j := New(&buf, &Options{Clock: clock})
	r := request(t, "c1", `{"system": "You are careful.!"}`) // 17 bytes
	sent := r.System + " [adapter]"                          // 27 bytes
	r.Sent = &sent
	if _, err := j.Call(ctx, echo, r); err != nil {
		t.Fatal(err)
	}
	j.Close()
	if !strings.Contains(buf.String(), `"bytes_added":10`) || !strings.Contains(buf.String(), `"id":"egress:system"`) ||
		!strings.Contains(buf.String(), `"root":"transformed"`) || !strings.Contains(buf.String(), `"content":"You are careful.! [adapter]"`) {
		t.Errorf("transcript:\n%s", buf.String())
	}
	rep, _ := transcript.Verify(strings.NewReader(buf.String()), nil)
	if !rep.OK() {
		t.Errorf("egress call does not verify: %+v", rep)
	}
}

func TestOpenRepairsATornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	j, err := Open(path, &Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	record(t, j)
	j.Close()
	whole, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(whole), "\n"), "\n")
	// The start of the line a writer crashed writing.
	torn := `{"prev":"` + chain.LineHash([]byte(lines[len(lines)-1])) + `","seq":13,"kind":"system_pro`
	os.WriteFile(path, append(whole, torn...), 0o644)

	j, err = Open(path, &Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	if j.repaired != len(torn) || j.sink.(*fileSink).t.Seq != 12 {
		t.Errorf("repaired %d bytes, seq %d", j.repaired, j.sink.(*fileSink).t.Seq)
	}
	if _, err := j.Call(ctx, echo, request(t, "c4", `{"system": "four"}`)); err != nil {
		t.Fatal(err)
	}
	j.Close()
	data, _ := os.ReadFile(path)
	rep, _ := transcript.Verify(bytes.NewReader(data), nil)
	if !rep.OK() || len(rep.Calls) != 4 {
		t.Errorf("after repair: %+v", rep)
	}
}

// A line nested deeper than any JSON reader should follow is a problem
// line, not a crash (gjson.Valid recursed on it until the stack overflowed).
func TestVerifySurvivesDeepNesting(t *testing.T) {
	deep := strings.Repeat("[", 20<<20) + "\n"
	rep, err := transcript.Verify(strings.NewReader(deep+recorded(t)), nil)
	if err != nil || rep.OK() || rep.Problems[0].Rule != transcript.RuleUnreadable || rep.Problems[0].Line != 1 || len(rep.Calls) != 3 {
		t.Fatalf("verify = %+v, %v", rep.Problems, err)
	}
}

// A secret in the system prompt never reaches the transcript (Harn redacts
// its system_prompt lines too): the prompt line and the body's system
// channel keep its placeholder, the receipts still re-derive, and the
// manifest is held to the prompt with the placeholder standing for the
// bytes it replaced, so an edit outside the secret, or of the
// placeholder's length, is still seen.
func TestSystemPromptSecretIsRedacted(t *testing.T) {
	const token = "ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"
	var buf bytes.Buffer
	j := New(&buf, &Options{Clock: clock})
	req := request(t, "c1", `{"system": "Deploy key `+token+` is secret.\n\nBe brief."}`)
	req.Body = []byte(`{"model":"m","system":` + strconv.Quote(req.System) + `,"messages":[]}`)
	req.Provider = payload.Anthropic
	if _, err := j.Call(ctx, echo, req); err != nil {
		t.Fatal(err)
	}
	j.Close()
	if strings.Contains(buf.String(), token) {
		t.Fatalf("the secret is in the transcript:\n%s", buf.String())
	}
	if !strings.Contains(buf.String(), "<redacted:github_token:") {
		t.Fatalf("no placeholder in the transcript:\n%s", buf.String())
	}
	if rep, err := transcript.Verify(bytes.NewReader(buf.Bytes()), nil); err != nil || !rep.OK() {
		t.Fatalf("the redacted transcript does not verify: %v %+v", err, rep)
	}
	for _, edit := range [][2]string{{"Be brief.", "Be Brief."}, {"is secret.", "is secreT."}} {
		bad := rechain(strings.ReplaceAll(buf.String(), edit[0], edit[1]))
		if rep, _ := transcript.Verify(strings.NewReader(bad), nil); rep.OK() {
			t.Errorf("%q -> %q outside the secret went unnoticed", edit[0], edit[1])
		}
	}
	at := strings.Index(buf.String(), "<redacted:github_token:")
	end := at + strings.IndexByte(buf.String()[at:], '>')
	longer := rechain(buf.String()[:at] + "<redacted:github_token:41" + buf.String()[end:])
	if rep, _ := transcript.Verify(strings.NewReader(longer), nil); rep.OK() {
		t.Error("a placeholder standing for more bytes went unnoticed")
	}
	// Kept raw, the secret is there, and the transcript verifies too.
	buf.Reset()
	j = New(&buf, &Options{Clock: clock, KeepRaw: true})
	if _, err := j.Call(ctx, echo, req); err != nil {
		t.Fatal(err)
	}
	j.Close()
	if rep, _ := transcript.Verify(bytes.NewReader(buf.Bytes()), nil); !strings.Contains(buf.String(), token) || !rep.OK() {
		t.Errorf("KeepRaw: secret kept %v, verifies %v", strings.Contains(buf.String(), token), rep.OK())
	}
}
