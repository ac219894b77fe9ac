package cache

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom/payload"
)

// Three breakpoints below the minimum blame three prefixes that overlap:
// each is blamed for its own tokens past the one before, so the blamed
// tokens add up to the prompt at most, and the misses never cost more
// than the call.
func TestOverlappingMinimumBlamesArePricedOnce(t *testing.T) {
	mark := map[string]any{"type": "ephemeral"}
	body, err := json.Marshal(map[string]any{"model": "claude-opus-4-8", "max_tokens": 100,
		"tools":    []any{map[string]any{"name": "a", "description": strings.Repeat("word ", 200), "input_schema": map[string]any{"type": "object"}, "cache_control": mark}},
		"system":   []any{map[string]any{"type": "text", "text": strings.Repeat("more ", 200), "cache_control": mark}},
		"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": strings.Repeat("hello ", 200), "cache_control": mark}}}}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := newManifest(body, payload.Anthropic, nil)
	if err != nil {
		t.Fatal(err)
	}
	v := Run([]Call{{Name: "a", Session: "s", At: time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC), Request: m}}, nil).Verdicts[0]
	sum, n := 0, 0
	for _, b := range v.Blame {
		if b.Kind == "minimum" {
			n++
		}
		sum += b.Tokens
	}
	if n != 3 || sum > v.InputTokens || !v.Priced || v.MissCost > v.Cost {
		t.Errorf("%d minimum blames of %d tokens in all, on a %d-token prompt; miss cost %d against the call's %d", n, sum, v.InputTokens, v.MissCost, v.Cost)
	}
}
