package proxy

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/request"
)

// manifestChain is the key of each prefix of m's messages, from its
// message segments: what continuity keyed sessions by when it made the
// request manifest to find them.
func manifestChain(m *request.Manifest) []digest.Digest {
	var out []digest.Digest
	h := digest.Bytes([]byte(m.Provider))
	buf := make([]byte, 0, 96)
	for _, s := range m.Segments {
		if s.Section != "messages" {
			continue
		}
		buf = append(append(append(buf[:0], h[:]...), s.Digest[:]...), s.Path...)
		h = digest.Bytes(buf)
		out = append(out, h)
	}
	return out
}

// chainOf gives the keys the request manifest's segments give, for every
// provider's shape, a part's cache mark moved, a secret in a message and
// the body spaced otherwise, with its digests cached or not; and a body
// the manifest refuses, it refuses alike.
func TestChainOfIsTheManifestsChain(t *testing.T) {
	p := &Proxy{}
	var bodies [][]byte
	for _, name := range []string{"anthropic-agent", "gemini", "openai-chat", "openai-responses"} {
		b, err := os.ReadFile(filepath.Join("..", "request", "testdata", name+".body.json"))
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, b,
			bytes.ReplaceAll(b, []byte(`":`), []byte(`" : `)),
			bytes.Replace(b, []byte(`"cache_control":{"type":"ephemeral"}`), nil, 1))
	}
	bodies = append(bodies,
		[]byte(`{"model":"claude","max_tokens":9,"messages":[{"role":"user","content":[{"type":"text","text":"key ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5","cache_control":{"type":"ephemeral"}}]}]}`),
		[]byte(`{"model":"claude","max_tokens":9,"messages":[{"role":"user","content":[{"type":"text","text":"key ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"}]},{"role":"assistant","content":"ok"}]}`),
		[]byte(`{"model":"gpt-4.1","messages":[{"role":"user","content":"a \ud800 b"}]}`),
		[]byte(`{"model":"m","system":"a\ud800","messages":[]}`),
		[]byte(`{"model":"m","system":"a","tools":[{"name":"t","input_schema":{"a":1,"a":1}}],"messages":[{"role":"user","content":"hi"}]}`),
		[]byte(`{"model":"claude","max_tokens":9,"cache_control":"no","messages":[{"role":"user","content":"hi"}]}`),
		[]byte(`{"model":"claude","max_tokens":9,"messages":[{"role":"user","content":[{"type":"text","text":"x","cache_control":{"type":"ephemeral"},"cache_control":{"type":"ephemeral"}}]}]}`),
	)
	refused, kept := 0, 0
	for round := range 2 { // the digests cold, then cached
		for i, b := range bodies {
			pr, err := payload.Read(b, payload.Auto)
			if err != nil {
				continue
			}
			m, merr := request.FromPayload(pr, &request.Options{Counter: budget.Bytes()})
			got, err := p.chainOf(pr)
			if merr != nil || err != nil {
				refused++
				var pe *payload.Error
				if err == nil || merr == nil || !errors.As(err, &pe) || err.Error() != merr.Error() {
					t.Errorf("round %d, body %d: chainOf's error %v, the manifest's %v", round, i, err, merr)
				}
				continue
			}
			kept++
			want := manifestChain(m)
			if len(want) == 0 || len(got) != len(want) {
				t.Fatalf("round %d, body %d: %d keys, want %d", round, i, len(got), len(want))
			}
			for k := range want {
				if got[k] != want[k] {
					t.Errorf("round %d, body %d (%.60s): key %d differs", round, i, strings.ReplaceAll(string(b), "\n", " "), k)
				}
			}
		}
	}
	if refused < 2*5 || kept < 2*12 {
		t.Errorf("%d bodies refused and %d keyed; want at least 10 and 24", refused, kept)
	}
	if len(p.parts.m) == 0 {
		t.Error("no part's digest was kept")
	}
}
