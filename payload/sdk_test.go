package payload_test

// Requests built with the official Go SDKs exactly as a harness builds
// them, captured as the SDK puts them on the wire, and verified. The SDKs
// are test dependencies: no library file imports them.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/payload"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// wire is a provider endpoint that records the last request body.
type wire struct {
	srv  *httptest.Server
	mu   sync.Mutex
	body []byte
}

func newWire(t *testing.T, response string) *wire {
	w := &wire{}
	w.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.mu.Lock()
		w.body = b
		w.mu.Unlock()
		rw.Header().Set("Content-Type", "application/json")
		io.WriteString(rw, response)
	}))
	t.Cleanup(w.srv.Close)
	return w
}

func (w *wire) last(t *testing.T) []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.body == nil {
		t.Fatal("the SDK sent nothing")
	}
	return w.body
}

const (
	anthropicResponse = `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`
	chatResponse      = `{"id":"c1","object":"chat.completion","created":0,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`
	responsesResponse = `{"id":"r1","object":"response","created_at":0,"model":"gpt-4o","output":[],"status":"completed"}`
)

// prompt has characters every encoder escapes differently (HTML, U+2028,
// an astral character, quotes, a tab), a gated fragment and an after one.
func prompt(t *testing.T) (*promptloom.Reduction, *manifest.Manifest) {
	t.Helper()
	r, err := promptloom.Reduce([]promptloom.Fragment{
		promptloom.SystemItem(0, "Rules", "Answer <briefly> & \"plainly\".", promptloom.Before),
		promptloom.SystemItem(1, "", "Line\u2028separator, tab\tand 😀.", promptloom.Before),
		promptloom.ToolGuidance("grep", "Use grep before guessing."),
		promptloom.Primary("You are the harness's agent."),
		promptloom.SystemItem(4, "", "Cite files as path:line.", promptloom.After),
	}, &promptloom.Options{Tools: []string{"grep"}})
	if err != nil {
		t.Fatal(err)
	}
	return r, manifest.New(r, "agent.main")
}

func anthropicSend(t *testing.T, system []anthropic.TextBlockParam) []byte {
	t.Helper()
	w := newWire(t, anthropicResponse)
	client := anthropic.NewClient(aoption.WithAPIKey("test"), aoption.WithBaseURL(w.srv.URL), aoption.WithMaxRetries(0))
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model("claude-sonnet-4-5"),
		MaxTokens: 1024,
		System:    system,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Where is main?"))},
	}
	if _, err := client.Messages.New(context.Background(), params); err != nil {
		t.Logf("client: %v (the body was sent)", err)
	}
	return w.last(t)
}

// sdkBlocks is promptloom's Anthropic system field as the SDK's own block
// type: the field unmarshals into it.
func sdkBlocks(t *testing.T, r *promptloom.Reduction) []anthropic.TextBlockParam {
	t.Helper()
	field, _, err := payload.Field(r, payload.Anthropic, nil)
	if err != nil {
		t.Fatal(err)
	}
	var params anthropic.MessageNewParams
	if err := json.Unmarshal(field, &params); err != nil {
		t.Fatal(err)
	}
	return params.System
}

// verified is what Verify proved about a body.
type verified struct {
	Channel *payload.Channel
	Placed  bool
}

// verify reads body as p and verifies it, as a harness does.
func verify(m *manifest.Manifest, body []byte, p payload.Provider) (*verified, error) {
	r, err := payload.Read(body, p)
	if err != nil {
		return nil, err
	}
	e, err := r.Verify(m)
	if err != nil {
		return nil, err
	}
	c, _ := r.System()
	return &verified{Channel: c, Placed: e.WholePromptDigest != m.WholePromptDigest}, nil
}

func chatSend(t *testing.T, msgs ...openai.ChatCompletionMessageParamUnion) []byte {
	t.Helper()
	w := newWire(t, chatResponse)
	client := openai.NewClient(ooption.WithAPIKey("test"), ooption.WithBaseURL(w.srv.URL), ooption.WithMaxRetries(0))
	msgs = append(msgs, openai.UserMessage("Where is main?"))
	if _, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model: openai.ChatModelGPT5_2, Messages: msgs}); err != nil {
		t.Logf("client: %v (the body was sent)", err)
	}
	return w.last(t)
}

func responsesSend(t *testing.T, instructions string) []byte {
	t.Helper()
	w := newWire(t, responsesResponse)
	client := openai.NewClient(ooption.WithAPIKey("test"), ooption.WithBaseURL(w.srv.URL), ooption.WithMaxRetries(0))
	if _, err := client.Responses.New(context.Background(), responses.ResponseNewParams{
		Model:        openai.ChatModelGPT5_2,
		Instructions: openai.String(instructions),
		Input:        responses.ResponseNewParamsInputUnion{OfString: openai.String("Where is main?")},
	}); err != nil {
		t.Logf("client: %v (the body was sent)", err)
	}
	return w.last(t)
}

// change flips one character of the system text inside a sent body: the
// first "plainly" becomes "plainlY", wherever the SDK put it.
func change(t *testing.T, body []byte) []byte {
	t.Helper()
	if !bytes.Contains(body, []byte("plainly")) {
		t.Fatalf("the body does not hold the text as expected: %s", body)
	}
	return bytes.Replace(body, []byte("plainly"), []byte("plainlY"), 1)
}

func TestSDKBodies(t *testing.T) {
	r, m := prompt(t)
	tests := []struct {
		name     string
		send     func() []byte
		provider payload.Provider
	}{
		{"anthropic, promptloom's blocks with cache_control", func() []byte { return anthropicSend(t, sdkBlocks(t, r)) }, payload.Anthropic},
		{"anthropic, one block", func() []byte { return anthropicSend(t, []anthropic.TextBlockParam{{Text: r.System}}) }, payload.Anthropic},
		{"openai chat, system message", func() []byte { return chatSend(t, openai.SystemMessage(r.System)) }, payload.OpenAIChat},
		{"openai chat, developer message", func() []byte { return chatSend(t, openai.DeveloperMessage(r.System)) }, payload.OpenAIChat},
		{"openai chat, system text parts", func() []byte {
			half := len(r.System) / 2
			return chatSend(t, openai.SystemMessage([]openai.ChatCompletionContentPartTextParam{{Text: r.System[:half]}, {Text: r.System[half:]}}))
		}, payload.OpenAIChat},
		{"openai responses, instructions", func() []byte { return responsesSend(t, r.System) }, payload.OpenAIResponses},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := tt.send()
			res, err := verify(m, body, payload.Auto)
			if err != nil {
				t.Fatalf("%v\nbody: %s", err, body)
			}
			if res.Channel.Provider != tt.provider || res.Placed || res.Channel.Text != r.System {
				t.Errorf("read as %s, placed %v", res.Channel.Provider, res.Placed)
			}

			// One changed character fails, naming the fragment and offset.
			bad := change(t, body)
			_, err = verify(m, bad, payload.Auto)
			var mm *payload.Error
			if !errors.As(err, &mm) || mm.Fragment != "system[0]" || mm.Offset != 0 {
				t.Errorf("changed body: %v", err)
			}
			if want := string(tt.provider) + `: system channel differs from the manifest: fragment "system[0]" at byte 0`; err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("changed body: %v, want %s", err, want)
			}
		})
	}
}

// A body that carries the prompt, but not in the system channel, fails
// with exit 2.
func TestSDKBodyWithoutSystem(t *testing.T) {
	r, m := prompt(t)
	for name, body := range map[string][]byte{
		"anthropic": anthropicSend(t, nil),
		"openai":    chatSend(t, openai.AssistantMessage(r.System)),
	} {
		if _, err := verify(m, body, payload.Auto); !errors.Is(err, payload.ErrNoSystem) {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := verify(m, body, payload.Auto); err == nil || !strings.Contains(err.Error(), "no recognisable system channel") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A system channel that is there but does not hold the text is a
// mismatch: exit 1, naming the first fragment.
func TestSDKBodyWithEmptySystem(t *testing.T) {
	_, m := prompt(t)
	body := anthropicSend(t, []anthropic.TextBlockParam{{Text: ""}})
	_, err := verify(m, body, payload.Auto)
	var mm *payload.Error
	if !errors.As(err, &mm) || mm.Fragment != "system[0]" || mm.Offset != 0 {
		t.Fatalf("err = %v", err)
	}
	if err == nil || !strings.HasPrefix(err.Error(), "anthropic: ") || !strings.Contains(err.Error(), "system_prompt_bytes") {
		t.Errorf("err = %v", err)
	}
}

// The Anthropic field promptloom emits unmarshals into the SDK's own
// request type, keeps its blocks and breakpoints, and marshals back to a
// body that verifies.
func TestAnthropicFieldRoundTripsThroughTheSDK(t *testing.T) {
	r, m := prompt(t)
	field, place, err := payload.Field(r, payload.Anthropic, &payload.PlaceOptions{Since: m})
	if err != nil {
		t.Fatal(err)
	}
	if len(place.Breakpoints) != 2 {
		t.Fatalf("breakpoints %+v", place.Breakpoints)
	}
	var params anthropic.MessageNewParams
	if err := json.Unmarshal(field, &params); err != nil {
		t.Fatal(err)
	}
	text, marks := "", 0
	for i, b := range params.System {
		text += b.Text
		marked := b.CacheControl.Type == "ephemeral"
		want := slices.ContainsFunc(place.Breakpoints, func(bp payload.Breakpoint) bool { return bp.Block == i && bp.Offset == len(text) })
		if marked != want {
			t.Errorf("block %d: %q marked %v, want %v", i, b.Text, marked, want)
		}
		if marked {
			marks++
		}
	}
	if text != r.System || marks != len(place.Breakpoints) {
		t.Errorf("blocks %q, want the prompt %q", text, r.System)
	}
	params.Model, params.MaxTokens = anthropic.Model("claude-sonnet-4-5"), 64
	params.Messages = []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}
	body, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	res, err := verify(m, body, payload.Auto)
	if err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	if res.Channel.Breakpoints != 2 || res.Placed {
		t.Errorf("round trip: %d breakpoints, placed %v", res.Channel.Breakpoints, res.Placed)
	}
	// What the SDK would send is what promptloom emitted.
	sent := anthropicSend(t, params.System)
	c, err := extract(t, sent, payload.Anthropic)
	if err != nil || c.Text != r.System || c.Breakpoints != 2 {
		t.Errorf("sent: %v, %d breakpoints", err, c.Breakpoints)
	}
}

// No library or command file imports a provider SDK: they are test
// dependencies only (and the examples', which are harnesses on them).
func TestSDKsAreTestOnly(t *testing.T) {
	n := 0
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && filepath.ToSlash(path) == "../examples" {
			return filepath.SkipDir
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		n++
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			if strings.HasPrefix(p, "github.com/anthropics/") || strings.HasPrefix(p, "github.com/openai/") || strings.HasPrefix(p, "google.golang.org/genai") {
				t.Errorf("%s imports %s", path, p)
			}
		}
		return nil
	})
	if err != nil || n < 50 {
		t.Fatalf("walked %d files: %v", n, err)
	}
}

// extract is the system channel of body read as p.
func extract(t *testing.T, body []byte, p payload.Provider) (*payload.Channel, error) {
	t.Helper()
	r, err := payload.Read(body, p)
	if err != nil {
		return nil, err
	}
	return r.System()
}
