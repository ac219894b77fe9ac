package transport

import (
	"net/url"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/payload"
)

// server.port is the URL's port, or its scheme's default.
func TestServerPort(t *testing.T) {
	for raw, want := range map[string]int{
		"https://api.anthropic.com/v1/messages": 443,
		"http://localhost/v1/messages":          80,
		"http://127.0.0.1:8080/v1/messages":     8080,
		"unix:///run/gateway.sock":              0,
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := serverPort(u); got != want {
			t.Errorf("%s: port %d, want %d", raw, got, want)
		}
	}
}

// The sampling parameters, where each API puts them.
func TestRequestParams(t *testing.T) {
	for _, tt := range []struct {
		provider, body, want string
	}{
		{"anthropic", `{"model":"m","max_tokens":100,"temperature":0.5,"top_k":40,"stop_sequences":["END"]}`,
			`gen_ai.request.max_tokens=100 gen_ai.request.temperature=0.5 gen_ai.request.top_k=40 gen_ai.request.stop_sequences=["END"]`},
		{"openai", `{"model":"m","max_completion_tokens":64,"top_p":0.9,"seed":7,"n":1,"stop":"\n","presence_penalty":0.1}`,
			"gen_ai.request.max_tokens=64 gen_ai.request.top_p=0.9 gen_ai.request.presence_penalty=0.1 gen_ai.request.seed=7 gen_ai.request.stop_sequences=[\"\\n\"]"},
		{"openai", `{"model":"m","max_output_tokens":32,"n":3}`, `gen_ai.request.max_tokens=32 gen_ai.request.choice.count=3`},
		{"gcp.gemini", `{"contents":[],"generationConfig":{"maxOutputTokens":256,"topP":0.8,"candidateCount":2,"stopSequences":["x","y"]}}`,
			`gen_ai.request.max_tokens=256 gen_ai.request.top_p=0.8 gen_ai.request.choice.count=2 gen_ai.request.stop_sequences=["x","y"]`},
		{"gcp.gemini", `{"contents":[],"temperature":0.3}`, ``}, // not where Gemini reads it
		{"anthropic", `{"model":"m","max_tokens":"many"}`, ``},
	} {
		var got []string
		shape := map[string]payload.Provider{"anthropic": payload.Anthropic, "openai": payload.OpenAIChat, "gcp.gemini": payload.Gemini}[tt.provider]
		r, err := payload.Read([]byte(tt.body), shape)
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range requestParams(r) {
			got = append(got, string(kv.Key)+"="+kv.Value.String())
		}
		if g := strings.Join(got, " "); g != tt.want {
			t.Errorf("%s %s:\n got %s\nwant %s", tt.provider, tt.body, g, tt.want)
		}
	}
}
