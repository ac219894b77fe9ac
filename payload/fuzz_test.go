package payload

import (
	"strings"
	"testing"
)

// FuzzExtract: no body panics Extract, and a channel read is made of its
// pieces: concatenated for Anthropic and Gemini, each one inside the text
// for the message shapes. Whatever Extract reads, Retain keeps a body it
// reads back from (Retain checks the reading back itself).
func FuzzExtract(f *testing.F) {
	for _, seed := range []string{
		`{"system":"a \u0026 b"}`,
		`{"system":[{"type":"text","text":"x","cache_control":{"type":"ephemeral"}}]}`,
		`{"messages":[{"role":"developer","content":[{"type":"text","text":"d"}]}]}`,
		`{"instructions":"i","input":[{"role":"system","content":"s"}]}`,
		`{"systemInstruction":{"parts":[{"text":"g"}]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := extract(body, Auto)
		if err != nil {
			return
		}
		if _, _, err := retain(body, Auto); err != nil {
			t.Fatalf("Extract reads %q, Retain fails: %v", c.Text, err)
		}
		switch c.Provider {
		case Anthropic, Gemini:
			if c.Text != strings.Join(c.Pieces, "") {
				t.Fatalf("text %q is not its pieces %q", c.Text, c.Pieces)
			}
		default:
			for _, p := range c.Pieces {
				if !strings.Contains(c.Text, p) {
					t.Fatalf("piece %q not in %q", p, c.Text)
				}
			}
		}
	})
}
