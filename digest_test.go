package promptloom

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/digest"
)

// Harn's whole_prompt_digest is stable_redacted_string_hash(system)
// (crates/harn-vm/src/llm/prompt.rs, content_hash.rs): the whole prompt
// redacted as one string, then BLAKE3. The reducer derives it from the
// bodies' redaction where that is provably the same; over random bodies full
// of secrets, near-misses and crossings (a Bearer ending one body, "token"
// ending one and ":" starting the next, an unclosed private key, bare URLs,
// prompts past the 256 KiB window) it must equal digest.Of(System).
func TestWholeDigestIsRedactedWholePrompt(t *testing.T) {
	bits := []string{"token", ":", "=", " abc123", "Bearer", " abcdefghijklmnop", "-----BEGIN RSA PRIVATE KEY-----",
		"-----END RSA PRIVATE KEY-----", "AKIAIOSFODNN7EXAMPLE", "ghp_" + strings.Repeat("a", 36), "https://u:p@h/?token=1",
		"https://Example.com", "word", "é", "x", "\n", "password", "'secret1'", "sk-" + strings.Repeat("b", 24)}
	r := rand.New(rand.NewPCG(11, 12))
	for i := range 400 {
		var frags []Fragment
		for j := range 1 + r.IntN(5) {
			var b strings.Builder
			for range 1 + r.IntN(6) {
				b.WriteString(bits[r.IntN(len(bits))])
			}
			if i%50 == 0 && j == 0 {
				b.WriteString(strings.Repeat("padding text ", 300<<10/13))
			}
			bucket := Before
			if r.IntN(2) == 0 {
				bucket = After
			}
			frags = append(frags, frag(fmt.Sprint("f", j), bucket, b.String()))
		}
		red, err := Reduce(frags, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := digest.Of(red.System); red.WholeDigest != want {
			t.Fatalf("case %d: whole digest %v, want digest.Of(system) %v; system %q", i, red.WholeDigest, want, red.System[:min(len(red.System), 300)])
		}
		for _, row := range red.Rows {
			if row.Included && row.Digest != digest.Of(row.Body) {
				t.Fatalf("case %d: row %s digest is not digest.Of(body)", i, row.Fragment.ID)
			}
		}
	}
}
