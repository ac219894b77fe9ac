package payload

import (
	"strings"
	"testing"
)

// Events after an OpenAI stream's data: [DONE] are not folded into the
// summary: the SDKs stop reading there, and the summary is what they saw.
func TestChatStreamStopsAtDone(t *testing.T) {
	chunk := func(id, text, finish string) string {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return `data: {"id":"` + id + `","model":"gpt-x","choices":[{"index":0,"delta":{"content":"` + text + `"},"finish_reason":` + f + `}]}` + "\n\n"
	}
	stream := chunk("c1", "SAFE", "") + chunk("c1", "", "stop") + "data: [DONE]\n\n" +
		chunk("c2", " INJECTED", "length")
	r, whole := Summarize(OpenAIChat, []byte(stream), true)
	if !whole || r.Text != "SAFE" || r.StopReason != "stop" || r.ID != "c1" {
		t.Errorf("summary %+v (whole %v), want SAFE, stop, c1", r, whole)
	}
	if strings.Contains(r.Text, "INJECTED") {
		t.Error("an event after [DONE] reached the summary")
	}
}

// The whole prompt a provider reported: Anthropic's input leaves out the
// cache's tokens, the others' holds them.
func TestUsagePrompt(t *testing.T) {
	u := &Usage{InputTokens: 10, CacheReadTokens: 100, CacheWriteTokens: 5}
	for p, want := range map[Provider]int{Anthropic: 115, OpenAIChat: 10, OpenAIResponses: 10, Gemini: 10, Auto: 10} {
		if got := u.Prompt(p); got != want {
			t.Errorf("%q: %d, want %d", p, got, want)
		}
	}
	if got := (*Usage)(nil).Prompt(Anthropic); got != 0 {
		t.Errorf("nil usage: %d, want 0", got)
	}
}

// A call's names in OpenTelemetry's GenAI conventions, by shape and host.
func TestGenAI(t *testing.T) {
	for _, tt := range []struct {
		p              Provider
		host, name, op string
	}{
		{Anthropic, "api.anthropic.com", "anthropic", "chat"},
		{Anthropic, "us-east5-aiplatform.googleapis.com", "anthropic", "chat"},
		{OpenAIChat, "api.openai.com", "openai", "chat"},
		{OpenAIResponses, "localhost", "openai", "chat"},
		{Gemini, "generativelanguage.googleapis.com", "gcp.gemini", "generate_content"},
		{Gemini, "europe-west4-aiplatform.googleapis.com", "gcp.vertex_ai", "generate_content"},
		{Auto, "", "openai", "chat"},
	} {
		if name, op := genAI(tt.p, tt.host); name != tt.name || op != tt.op {
			t.Errorf("%q at %q: %s %s, want %s %s", tt.p, tt.host, name, op, tt.name, tt.op)
		}
	}
}
