package payload

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Bodies as the official SDKs and hand-written harnesses send them. The
// expected texts follow from RFC 8259's escapes and the rules of
// docs/payload.md, not from Extract's output.
func TestExtract(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		ask    Provider
		want   Channel
		blocks int
	}{
		{
			name: "anthropic string, escapes and a surrogate pair",
			body: `{"model":"claude","max_tokens":8,"system":"a \u0026 b \ud83d\ude00 \"q\"\n\u003cx\u003e","messages":[]}`,
			want: Channel{Provider: Anthropic, Field: "system", Text: "a & b 😀 \"q\"\n<x>", Pieces: []string{"a & b 😀 \"q\"\n<x>"}},
		},
		{
			name: "a lone surrogate decodes to U+FFFD, as encoding/json decodes it",
			body: `{"system":"a\ud800b"}`,
			want: Channel{Provider: Anthropic, Field: "system", Text: "a\uFFFDb", Pieces: []string{"a\uFFFDb"}},
		},
		{
			name: "anthropic blocks concatenate, cache_control counted",
			body: `{"system":[{"type":"text","text":"one","cache_control":{"type":"ephemeral"}},{"text":"\n\ntwo"},{"type":"text","text":"","cache_control":null}],"messages":[]}`,
			want: Channel{Provider: Anthropic, Field: "system", Text: "one\n\ntwo", Pieces: []string{"one", "\n\ntwo", ""}, Breakpoints: 1},
		},
		{
			name: "anthropic empty block list is present and empty",
			body: `{"system":[],"messages":[]}`,
			want: Channel{Provider: Anthropic, Field: "system", Text: ""},
		},
		{
			name: "openai chat: system and developer messages join, parts concatenate, other roles skipped",
			body: `{"model":"gpt","messages":[{"role":"developer","content":"dev"},{"role":"user","content":"hi"},{"role":"system","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}`,
			want: Channel{Provider: OpenAIChat, Field: "messages", Text: "dev\n\nab", Pieces: []string{"dev", "a", "b"}},
		},
		{
			name: "openai responses instructions",
			body: `{"model":"gpt","instructions":"Be brief.","input":"hello"}`,
			want: Channel{Provider: OpenAIResponses, Field: "instructions", Text: "Be brief.", Pieces: []string{"Be brief."}},
		},
		{
			name: "openai responses instructions then developer input",
			body: `{"instructions":"A","input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"B"}]},{"role":"user","content":"hi"},{"type":"function_call_output","call_id":"c","output":"x"}]}`,
			want: Channel{Provider: OpenAIResponses, Field: "instructions+input", Text: "A\n\nB", Pieces: []string{"A", "B"}},
		},
		{
			name: "gemini camelCase parts concatenate",
			body: `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"systemInstruction":{"parts":[{"text":"x"},{"text":"\u00e9"}]}}`,
			want: Channel{Provider: Gemini, Field: "systemInstruction", Text: "xé", Pieces: []string{"x", "é"}},
		},
		{
			name: "gemini snake_case",
			body: `{"system_instruction":{"parts":[{"text":"s"}]}}`,
			want: Channel{Provider: Gemini, Field: "system_instruction", Text: "s", Pieces: []string{"s"}},
		},
		{
			name: "provider given: a responses body read as chat finds its messages",
			body: `{"instructions":"ignored","messages":[{"role":"system","content":"m"}]}`,
			ask:  OpenAIChat,
			want: Channel{Provider: OpenAIChat, Field: "messages", Text: "m", Pieces: []string{"m"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := extract([]byte(tt.body), tt.ask)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(&tt.want, c); d != "" {
				t.Errorf("-want +got:\n%s", d)
			}
		})
	}
}

func TestExtractErrors(t *testing.T) {
	tests := []struct {
		name string
		body string
		ask  Provider
		is   error
		msg  string
	}{
		{"not JSON", `{"system": "x",}`, Auto, ErrMalformed,
			"malformed request body: invalid character '}' looking for beginning of object key string at byte 16"},
		{"not UTF-8", "{\"system\": \"a\xffb\"}", Auto, ErrMalformed,
			"malformed request body: invalid UTF-8 at byte 13"},
		{"not an object", `["system"]`, Auto, ErrMalformed,
			"malformed request body: the body is not a JSON object at byte 0"},
		{"system is a number", `{"system": 3}`, Auto, ErrMalformed,
			"malformed request body: anthropic: system: want a string or an array of text blocks, got a number"},
		{"an image block", `{"system": [{"type": "image", "source": {}}]}`, Auto, ErrMalformed,
			`malformed request body: anthropic: system.0.type: block type "image", want text`},
		{"a block without text", `{"system": [{"type": "text"}]}`, Auto, ErrMalformed,
			"malformed request body: anthropic: system.0.text: want a string, got nothing"},
		{"system twice", `{"system": "a", "system": "b"}`, Auto, ErrMalformed,
			"malformed request body: anthropic: system: the key appears more than once"},
		{"text twice in a block", `{"system": [{"text": "a", "text": "b"}]}`, Auto, ErrMalformed,
			"malformed request body: anthropic: system.0.text: the key appears more than once"},
		{"messages not a list", `{"messages": {"role": "system"}}`, Auto, ErrMalformed,
			"malformed request body: openai-chat: messages: want an array, got an object"},
		{"gemini both spellings", `{"systemInstruction": {"parts": []}, "system_instruction": {"parts": []}}`, Auto, ErrMalformed,
			"malformed request body: gemini: system_instruction: both systemInstruction and system_instruction are set"},
		{"gemini inline data part", `{"systemInstruction": {"parts": [{"inlineData": {}}]}}`, Auto, ErrMalformed,
			"malformed request body: gemini: systemInstruction.parts.0.text: want a string, got nothing"},
		{"no system, auto", `{"model": "claude", "messages": [{"role": "user", "content": "hi"}]}`, Auto, ErrNoSystem,
			"no recognisable system channel (looked for system, systemInstruction, instructions, and messages with role system or developer)"},
		{"no system, anthropic", `{"system": null, "messages": []}`, Anthropic, ErrNoSystem,
			"anthropic: no system channel (no `system`)"},
		{"no system, empty object", `{}`, Auto, ErrNoSystem,
			"no recognisable system channel (looked for system, systemInstruction, instructions, and messages with role system or developer)"},
		{"no system, gemini", `{"contents": []}`, Gemini, ErrNoSystem,
			"gemini: no system channel (no `systemInstruction`)"},
		{"unknown provider", `{}`, Provider("bedrock"), ErrUnknownProvider,
			`unknown provider "bedrock" (want auto, anthropic, openai-chat, openai-responses, gemini)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := extract([]byte(tt.body), tt.ask)
			if !errors.Is(err, tt.is) {
				t.Fatalf("err = %v, want %v", err, tt.is)
			}
			if err.Error() != tt.msg {
				t.Errorf("message\n got %s\nwant %s", err, tt.msg)
			}
		})
	}
}

// A body nested far deeper than gjson's recursive validator could take is
// refused as malformed, not a stack overflow.
func TestExtractDeepNesting(t *testing.T) {
	body := make([]byte, 0, 200_002)
	body = append(body, `{"system":`...)
	for range 100_000 {
		body = append(body, '[')
	}
	if _, err := extract(body, Auto); !errors.Is(err, ErrMalformed) {
		t.Fatalf("err = %v", err)
	}
}

func TestParseProvider(t *testing.T) {
	for _, s := range []string{"", "auto", "anthropic", "openai-chat", "openai-responses", "gemini"} {
		if _, err := ParseProvider(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	if _, err := ParseProvider("openai"); !errors.Is(err, ErrUnknownProvider) {
		t.Errorf("openai: %v", err)
	}
}

// A value quoted in an error is redacted and cut short: a secret in the
// wrong field is not printed.
func TestExtractErrorQuotesRedacted(t *testing.T) {
	token := "ghp_" + strings.Repeat("Z9y8", 9)
	_, err := extract([]byte(`{"system": [{"type": "`+token+`", "text": "x"}]}`), Anthropic)
	if !errors.Is(err, ErrMalformed) || strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), "block type") {
		t.Fatalf("got %v", err)
	}
	_, err = extract([]byte(`{"system": [{"type": "`+strings.Repeat("x", 500)+`", "text": "x"}]}`), Anthropic)
	if err == nil || len(err.Error()) > 300 {
		t.Fatalf("a long value was not cut short: %v", err)
	}
}
