package request_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/request"
)

// Any body, read as any shape, is a manifest or a *payload.Error, never a
// panic; a manifest keeps its own prefix whole; and the canonical copy a
// transcript keeps has the same segments, digests and token counts.
func FuzzRequest(f *testing.F) {
	bodies, _ := filepath.Glob("testdata/*.body.json")
	for _, path := range bodies {
		b, _ := os.ReadFile(path)
		f.Add(b)
	}
	for _, s := range []string{
		`{}`, `{"messages":[]}`, `{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}`,
		`{"contents":{"parts":{"text":"x"}}}`, `{"input":"x","tool_choice":{ "type" : "auto" }}`,
		`{"system":5}`, `{"tools":{"name":"x"},"messages":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, p := range []payload.Provider{payload.Auto, payload.Anthropic, payload.OpenAIChat, payload.OpenAIResponses, payload.Gemini} {
			m, err := newManifest(body, p, nil)
			if err != nil {
				var pe *payload.Error
				if !errors.As(err, &pe) {
					t.Fatalf("as %q: an error that is not a *payload.Error: %T %v", p, err, err)
				}
				continue
			}
			if d := request.Diverge(m, m, nil); d.Index != len(m.Segments) || d.Reason != "" || d.RestTokens != 0 {
				t.Fatalf("as %q: a manifest leaves its own prefix: %+v", p, d)
			}
			kept, err := pjson.Encode(body)
			if err != nil {
				continue // kept as text: no canonical copy to compare
			}
			k, err := newManifest(kept, payload.Provider(m.Provider), nil)
			if err != nil {
				t.Fatalf("as %q: the canonical copy is refused: %v", p, err)
			}
			if len(k.Segments) != len(m.Segments) {
				t.Fatalf("as %q: %d segments, the canonical copy %d", p, len(m.Segments), len(k.Segments))
			}
			for i := range m.Segments {
				a, b := m.Segments[i], k.Segments[i]
				if a.Path != b.Path || a.Digest != b.Digest || a.Tokens != b.Tokens {
					t.Fatalf("as %q: segment %d is %s %s %d, in the canonical copy %s %s %d", p, i, a.Path, a.Digest, a.Tokens, b.Path, b.Digest, b.Tokens)
				}
			}
		}
	})
}
