package journal_test

// A harness that sends through the official Anthropic Go SDK and records
// each call with Journal.Call from an SDK middleware: the body the SDK is
// about to send is held to the manifest before it leaves, recorded, and
// `promptloom verify --transcript` proves it afterwards. The SDK is a test
// dependency only.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/harn/redact"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/transcript"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/tidwall/gjson"
)

const anthropicReply = `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"main.go:1"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`

// recordingClient is an Anthropic client whose every request goes through
// j.Call first, with the body the SDK wrote; hits counts the requests that
// reached the provider.
func recordingClient(t *testing.T, j *journal.Journal, m *manifest.Manifest, system string, hits *atomic.Int32) anthropic.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		rw.Header().Set("Content-Type", "application/json")
		io.WriteString(rw, anthropicReply)
	}))
	t.Cleanup(srv.Close)
	record := func(r *http.Request, next aoption.MiddlewareNext) (*http.Response, error) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var sent *http.Response
		_, err = j.Call(r.Context(), journal.ModelFunc(func(context.Context, journal.Request) (journal.Response, error) {
			resp, err := next(r)
			if err != nil {
				return journal.Response{}, err
			}
			reply, err := io.ReadAll(resp.Body)
			resp.Body = io.NopCloser(bytes.NewReader(reply))
			sent = resp
			return journal.Response{Text: gjson.GetBytes(reply, "content.0.text").Str}, err
		}), journal.Request{Call: "c1", System: system, Manifest: m, Body: body, Provider: payload.Anthropic,
			Messages:   []byte(gjson.GetBytes(body, "messages").Raw),
			Parameters: []byte(`{"model":` + gjson.GetBytes(body, "model").Raw + `,"max_tokens":` + gjson.GetBytes(body, "max_tokens").Raw + `}`)})
		return sent, err
	}
	return anthropic.NewClient(aoption.WithAPIKey("test"), aoption.WithBaseURL(srv.URL), aoption.WithMaxRetries(0),
		aoption.WithMiddleware(record))
}

func TestAnthropicSDKCallIsRecordedAndVerified(t *testing.T) {
	r, err := promptloom.Reduce([]promptloom.Fragment{
		promptloom.SystemItem(0, "Rules", "Answer <briefly> & \"plainly\".", promptloom.Before),
		promptloom.ToolGuidance("grep", "Use grep before guessing."),
		promptloom.Primary("You are the harness's agent."),
	}, &promptloom.Options{Tools: []string{"grep"}})
	if err != nil {
		t.Fatal(err)
	}
	m := manifest.New(r, "agent.main")
	field, _, err := payload.Field(r, payload.Anthropic, nil)
	if err != nil {
		t.Fatal(err)
	}
	var params anthropic.MessageNewParams
	if err := json.Unmarshal(field, &params); err != nil {
		t.Fatal(err)
	}
	blocks := params.System
	send := func(client anthropic.Client, system []anthropic.TextBlockParam) error {
		_, err := client.Messages.New(context.Background(), anthropic.MessageNewParams{
			Model: anthropic.Model("claude-sonnet-4-5"), MaxTokens: 1024, System: system,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Where is main?"))}})
		return err
	}
	path := filepath.Join(t.TempDir(), "run.jsonl")
	j, err := journal.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var hits atomic.Int32
	if err := send(recordingClient(t, j, m, r.System, &hits), blocks); err != nil {
		t.Fatal(err)
	}
	// The SDK about to send a prompt one character off: refused before
	// it leaves, and nothing recorded.
	changed := append([]anthropic.TextBlockParam(nil), blocks...)
	changed[0].Text = strings.Replace(changed[0].Text, "plainly", "plainlY", 1)
	if err := send(recordingClient(t, j, m, r.System, &hits), changed); err == nil || !strings.Contains(err.Error(), "system channel differs from the manifest") {
		t.Errorf("a changed prompt was sent: %v", err)
	}
	if hits.Load() != 1 {
		t.Errorf("%d requests reached the provider, want 1", hits.Load())
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if code, out := verifyTranscript(t, data); code != 0 || !strings.Contains(out, "1 call(s) verified, 0 incomplete, 0 failed") {
		t.Fatalf("exit %d:\n%s\n%s", code, out, data)
	}
	req := gjson.Get(requestLine(t, data), "request.payload.system").Raw
	if !strings.Contains(req, `"cache_control":{"type":"ephemeral"}`) || !strings.Contains(req, "plainly") {
		t.Errorf("request.payload does not hold the SDK's blocks: %s", req)
	}

	// One character of the retained body changed: the chain catches it,
	// and once the chain and the body's own hash are recomputed, the
	// payload receipt does.
	edited := append([]byte(nil), data...)
	at := bytes.Index(edited, []byte(`"payload":{`))
	if at < 0 {
		t.Fatal("no request.payload")
	}
	off := bytes.Index(edited[at:], []byte("plainly"))
	edited[at+off+6] = 'Y'
	if code, out := verifyTranscript(t, edited); code != 1 || !strings.Contains(out, "chain broken") {
		t.Errorf("the edited body, chain kept: exit %d:\n%s", code, out)
	}
	forged := rechain(t, edited, true)
	code, out := verifyTranscript(t, forged)
	if code != 1 || !strings.Contains(out, "request.payload's system channel does not hash to payload_system_content_hash") {
		t.Errorf("the edited body, rechained: exit %d:\n%s", code, out)
	}
}

func verifyTranscript(t *testing.T, data []byte) (int, string) {
	t.Helper()
	rep, err := transcript.Verify(bytes.NewReader(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := rep.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		return 1, out.String()
	}
	return 0, out.String()
}

func requestLine(t *testing.T, data []byte) string {
	t.Helper()
	for _, l := range strings.Split(string(data), "\n") {
		if gjson.Get(l, "kind").Str == "provider_call_request" {
			return l
		}
	}
	t.Fatal("no request line")
	return ""
}

// rechain recomputes what a forger can: each request's
// payload_content_hash (when rehash), every prev, every request_hash.
func rechain(t *testing.T, data []byte, rehash bool) []byte {
	t.Helper()
	prev := "blake3:" + strings.Repeat("0", 64) // the first line's prev
	requests := map[int64]string{}
	var out bytes.Buffer
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if gjson.Get(l, "kind").Str == "provider_call_request" && rehash {
			canonical, err := redact.JSON([]byte(gjson.Get(l, "request.payload").Raw))
			if err != nil {
				t.Fatal(err)
			}
			h := digest.Bytes(canonical).String()
			l = strings.Replace(l, gjson.Get(l, "served_context.payload_content_hash").Str, h, 1)
		}
		l = strings.Replace(l, `"prev":"`+gjson.Get(l, "prev").Str, `"prev":"`+prev, 1)
		if rs := gjson.Get(l, "request_seq"); rs.Exists() {
			l = strings.Replace(l, `"request_hash":"`+gjson.Get(l, "request_hash").Str, `"request_hash":"`+requests[rs.Int()], 1)
		}
		prev = digest.String(l).String()
		if gjson.Get(l, "kind").Str == "provider_call_request" {
			requests[gjson.Get(l, "seq").Int()] = prev
		}
		out.WriteString(l + "\n")
	}
	return out.Bytes()
}
