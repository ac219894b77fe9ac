package payload

import (
	"errors"
	"testing"
)

// retain keeps the fields the system channel is read from, and of a message
// list only the system and developer items, each as its exact bytes. The
// expected bodies are the inputs with everything else cut by hand.
func TestRetain(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
		ask              Provider
	}{
		{"anthropic blocks, with their cache_control",
			`{"model":"claude","max_tokens":8,"system":[{"type":"text","text":"one","cache_control":{"type":"ephemeral"}},{"type":"text","text":"\n\ntwo"}],"messages":[{"role":"user","content":"secret plans"}]}`,
			`{"system":[{"type":"text","text":"one","cache_control":{"type":"ephemeral"}},{"type":"text","text":"\n\ntwo"}]}`, Auto},
		{"anthropic string with escapes kept as written",
			`{"system":"a \u0026 b","messages":[]}`, `{"system":"a \u0026 b"}`, Anthropic},
		{"openai chat: only system and developer messages",
			`{"model":"gpt","messages":[{"role":"developer","content":"dev"},{"role":"user","content":"hi"},{"role":"system","content":[{"type":"text","text":"a"}]},{"role":"assistant","content":"yo"}]}`,
			`{"messages":[{"role":"developer","content":"dev"},{"role":"system","content":[{"type":"text","text":"a"}]}]}`, Auto},
		{"openai responses: instructions, a string input dropped",
			`{"model":"gpt","instructions":"Be brief.","input":"hello"}`, `{"instructions":"Be brief."}`, Auto},
		{"openai responses: developer input items only",
			`{"instructions":"A","input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"B"}]},{"role":"user","content":"hi"},{"type":"function_call_output","call_id":"c","output":"x"}]}`,
			`{"instructions":"A","input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"B"}]}]}`, Auto},
		{"openai responses: no instructions, a system input item",
			`{"input":[{"role":"user","content":"hi"},{"role":"system","content":"S"}]}`,
			`{"input":[{"role":"system","content":"S"}]}`, OpenAIResponses},
		{"gemini snake case",
			`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"system_instruction":{"parts":[{"text":"x"}]}}`,
			`{"system_instruction":{"parts":[{"text":"x"}]}}`, Auto},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, kept, err := retain([]byte(tc.body), tc.ask)
			if err != nil {
				t.Fatal(err)
			}
			if string(kept) != tc.want {
				t.Errorf("kept\n%s\nwant\n%s", kept, tc.want)
			}
			back, err := extract(kept, c.Provider)
			if err != nil || back.Text != c.Text {
				t.Errorf("read back %+v, %v; want text %q", back, err, c.Text)
			}
		})
	}
}

// retain refuses what Extract refuses.
func TestRetainRefuses(t *testing.T) {
	for _, tc := range []struct {
		body string
		want error
	}{
		{`{"system":`, ErrMalformed},
		{`{"messages":[{"role":"user","content":"hi"}]}`, ErrNoSystem},
	} {
		if _, _, err := retain([]byte(tc.body), Auto); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.body, err, tc.want)
		}
	}
}
