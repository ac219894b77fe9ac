package request_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/digest"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/internal/testkit/fakecache"
	"github.com/promptloom/promptloom/payload"
)

// agentBody is a coding agent's request of about 50 KB: twelve tools,
// three system blocks, and turns of conversation.
func agentBody(b *testing.B) []byte {
	a := fakecache.NewAgent()
	var body []byte
	for i := 0; len(body) < 50_000; i++ {
		if i > 0 {
			a.Answer(strings.Repeat(fmt.Sprintf("Here is what I found in step %d. ", i), 20))
		}
		body = a.Turn(strings.Repeat(fmt.Sprintf("Please look at file %d and tell me. ", i), 10))
	}
	return body
}

// BenchmarkRequestManifest is explain --request's work on a 50 KB body
// (the manifest: read, cut into segments, each redacted and hashed, and
// counted) beside its floor: one parse of the body and one BLAKE3 of it.
// Interleaved sub-benchmarks, so the ratio is from one run.
func BenchmarkRequestManifest(b *testing.B) {
	body := agentBody(b)
	b.Run("floor", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := pjson.Scan(string(body), &pjson.Options{DuplicateKeys: true}); err != nil {
				b.Fatal(err)
			}
			_ = digest.Bytes(body)
		}
	})
	b.Run("manifest", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := newManifest(body, payload.Anthropic, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
