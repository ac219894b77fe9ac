package journal

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/internal/chain"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/transcript"

	"github.com/tidwall/gjson"
)

// twoFragments is the options of a prompt of two fragments:
// "You are careful.\n\nAnswer in English." (36 bytes).
const twoFragments = `{"system": ["You are careful.", "Answer in English."]}`

// A call that gives its request body records the body's system channel:
// its digest, length and shape beside the system prompt's, and the part of
// the body it reads back from; the transcript verifies. The expected
// sent texts follow from docs/payload.md's joining rules.
func TestPayloadIsRecorded(t *testing.T) {
	const prompt = "You are careful.\n\nAnswer in English."
	for _, tc := range []struct {
		name, body, sent string
		provider, detect payload.Provider // asked for; read as
		vouched          *string          // Request.Sent
		wantRetained     string
		transformed      bool
	}{
		{name: "anthropic string, the prompt itself",
			body: `{"model":"m","system":"You are careful.\n\nAnswer in English.","messages":[{"role":"user","content":"hi"}]}`,
			sent: prompt, detect: payload.Anthropic, wantRetained: `{"system":"You are careful.\n\nAnswer in English."}`},
		{name: "anthropic, one block a fragment (placement drops the separator)",
			body: `{"system":[{"type":"text","text":"You are careful."},{"type":"text","text":"Answer in English.","cache_control":{"type":"ephemeral"}}],"messages":[]}`,
			sent: "You are careful.Answer in English.", provider: payload.Anthropic, detect: payload.Anthropic, transformed: true,
			wantRetained: `{"system":[{"text":"You are careful.","type":"text"},{"cache_control":{"type":"ephemeral"},"text":"Answer in English.","type":"text"}]}`},
		{name: "openai chat, one system message a fragment",
			body: `{"model":"gpt","messages":[{"role":"system","content":"You are careful."},{"role":"developer","content":"Answer in English."},{"role":"user","content":"hi"}]}`,
			sent: prompt, detect: payload.OpenAIChat, wantRetained: `{"messages":[{"content":"You are careful.","role":"system"},{"content":"Answer in English.","role":"developer"}]}`},
		{name: "gemini",
			body: `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"systemInstruction":{"parts":[{"text":"You are careful.\n\n"},{"text":"Answer in English."}]}}`,
			sent: prompt, detect: payload.Gemini, wantRetained: `{"systemInstruction":{"parts":[{"text":"You are careful.\n\n"},{"text":"Answer in English."}]}}`},
		{name: "an adapter's own transform, vouched for with transcript.Sent",
			body: `{"instructions":"/no_think\nYou are careful.\n\nAnswer in English.","input":"hi"}`,
			sent: "/no_think\n" + prompt, vouched: ptr("/no_think\n" + prompt), detect: payload.OpenAIResponses, transformed: true,
			wantRetained: `{"instructions":"/no_think\nYou are careful.\n\nAnswer in English."}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			j := New(&buf, &Options{Clock: clock, Session: "s1"})
			r := request(t, "c1", twoFragments)
			r.Body, r.Provider, r.Sent = []byte(tc.body), tc.provider, tc.vouched
			if _, err := j.Call(ctx, echo, r); err != nil {
				t.Fatal(err)
			}
			j.Close()
			out := buf.String()
			var req string
			for _, l := range lines(out) {
				if gjson.Get(l, "kind").Str == chain.KindRequest {
					req = l
				}
			}
			sc := gjson.Get(req, "served_context")
			wantHash := digest.Of(tc.sent).String()
			if got := sc.Get("payload_system_content_hash").Str; got != wantHash || sc.Get("system_prompt_content_hash").Str != wantHash {
				t.Errorf("payload_system_content_hash %s, system_prompt_content_hash %s, want both %s", got, sc.Get("system_prompt_content_hash").Str, wantHash)
			}
			if got := sc.Get("payload_system_bytes").Raw; got != strconv.Itoa(len(tc.sent)) {
				t.Errorf("payload_system_bytes %s, want %d", got, len(tc.sent))
			}
			if got := sc.Get("payload_provider").Str; got != string(tc.detect) {
				t.Errorf("payload_provider %q, want %q", got, tc.detect)
			}
			if got := gjson.Get(req, "request.payload").Raw; got != tc.wantRetained {
				t.Errorf("request.payload\n%s\nwant\n%s", got, tc.wantRetained)
			}
			if strings.Contains(gjson.Get(req, "request.payload").Raw, `"hi"`) {
				t.Error("the user message is retained in request.payload")
			}
			if got := strings.Contains(out, `"id":"egress:system"`); got != tc.transformed {
				t.Errorf("egress:system row %v, want %v", got, tc.transformed)
			}
			if !strings.Contains(out, `"boundary":"llm_request_payload_egress"`) {
				t.Error("the manifest retained is not at the payload egress boundary")
			}
			if rep, err := transcript.Verify(strings.NewReader(out), nil); err != nil || !rep.OK() {
				t.Errorf("does not verify: %+v %v\n%s", rep, err, out)
			}
		})
	}
}

// A body whose system channel does not hold to the manifest is refused
// before anything is written or the model is asked.
func TestPayloadRefused(t *testing.T) {
	const prompt = "You are careful.\n\nAnswer in English."
	for _, tc := range []struct {
		name, body string
		sent       *string
		want       []error
	}{
		{"one character changed", `{"system":"You are careful.\n\nAnswer in EnglisH."}`, nil,
			[]error{payload.ErrMismatch, manifest.ErrInvalid}},
		{"a directive added, not vouched for", `{"system":"/no_think\nYou are careful.\n\nAnswer in English."}`, nil,
			[]error{payload.ErrMismatch}},
		{"no system channel", `{"messages":[{"role":"user","content":"hi"}]}`, nil, []error{payload.ErrNoSystem}},
		{"not JSON", `{"system":`, nil, []error{payload.ErrMalformed}},
		{"a key twice in the channel", `{"system":"a","system":"b"}`, nil, []error{payload.ErrMalformed}},
		{"a lone surrogate in the channel", `{"system":"You are careful.\n\nAnswer in English.\ud800"}`, nil, []error{payload.ErrMalformed}},
		{"Sent is not what the body holds", `{"system":"` + strings.ReplaceAll(prompt, "\n", `\n`) + `"}`, ptr(prompt + " [adapter]"),
			[]error{errBodyNotSent}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			j := New(&buf, &Options{Clock: clock})
			r := request(t, "c1", twoFragments)
			r.Body, r.Sent = []byte(tc.body), tc.sent
			called := false
			_, err := j.Call(ctx, ModelFunc(func(context.Context, Request) (Response, error) {
				called = true
				return Response{}, nil
			}), r)
			if !errors.Is(err, ErrStaleManifest) || !strings.Contains(err.Error(), "call c1: request body: ") {
				t.Fatalf("Call = %v, want a refusal of c1's request body matching ErrStaleManifest", err)
			}
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("%v does not match %v", err, w)
				}
			}
			if buf.Len() != 0 || called {
				t.Errorf("a refused call wrote %d bytes (model called: %v)", buf.Len(), called)
			}
		})
	}
}

// recordedWithBody is a closed session of one call (lines: 1 journal_open,
// 2 system_prompt, 3 context_manifest, 4 request, 5 response, 6
// journal_close) whose Anthropic body places one block a fragment.
func recordedWithBody(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	j := New(&buf, &Options{Clock: clock, Session: "s1"})
	r := request(t, "c1", twoFragments)
	r.Body = []byte(`{"system":[{"type":"text","text":"You are careful."},{"type":"text","text":"Answer in English."}],"messages":[]}`)
	if _, err := j.Call(ctx, echo, r); err != nil {
		t.Fatal(err)
	}
	j.Close()
	return buf.String()
}

func ptr(s string) *string { return &s }

// A pin keys a call by the system text sent: with a body, its channel's.
func TestServedIsTheBodysChannel(t *testing.T) {
	r := request(t, "c1", twoFragments)
	if got := r.served(); got != "You are careful.\n\nAnswer in English." {
		t.Errorf("without a body: %q", got)
	}
	r.Body = []byte(`{"system":[{"type":"text","text":"You are careful."},{"type":"text","text":"Answer in English."}]}`)
	if got := r.served(); got != "You are careful.Answer in English." {
		t.Errorf("with a body: %q", got)
	}
}
