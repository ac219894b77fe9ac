package cache_test

import (
	"strings"
	"testing"

	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/payload"
)

// The cache line says when its figures are estimates: Anthropic's tokens
// are estimated from text (no public tokenizer), GPT-5.6's explicit cache
// counts with o200k_base, so one body says "(estimated)" and the other
// does not.
func TestExplainSaysWhenItEstimates(t *testing.T) {
	system := strings.Repeat("You are a careful agent who reads before writing. ", 60)
	for _, c := range []struct {
		provider payload.Provider
		body     string
		estimate bool
	}{
		{payload.Anthropic, `{"model":"claude-sonnet-4-5","max_tokens":10,"system":[{"type":"text","text":"` + system + `","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"hi"}]}`, true},
		{payload.OpenAIChat, `{"model":"gpt-5.6","messages":[{"role":"system","content":"` + system + `"},{"role":"user","content":"hi"}]}`, false},
	} {
		m, err := newManifest([]byte(c.body), c.provider, nil)
		if err != nil {
			t.Fatal(err)
		}
		x := cache.Explain(m, nil, nil, false)
		var b strings.Builder
		if err := x.WriteText(&b, "body.json"); err != nil {
			t.Fatal(err)
		}
		line := ""
		for _, l := range strings.Split(b.String(), "\n") {
			if strings.HasPrefix(l, "cache: predicted") {
				line = l
			}
		}
		if line == "" || x.Verdict == nil || x.Verdict.Estimate != c.estimate || strings.Contains(line, "(estimated)") != c.estimate {
			t.Errorf("%s: estimate %v, line %q", c.provider, c.estimate, line)
		}
	}
}
