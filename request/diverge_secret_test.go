package request_test

import (
	"strings"
	"testing"

	"github.com/promptloom/promptloom/harn/redact"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/request"
)

// A change inside a secret is shown redacted, wherever the change falls
// in it: the words around the first changed byte are cut from the text
// already redacted, so a token whose recognisable start (eyJ, sk-, ghp_)
// lies outside the window prints none of its bytes. The transcript keeps
// the same text redacted, and the offset is counted in it, so a body and
// the transcript's copy of it diverge at the same byte.
func TestDivergeShowsNoSecret(t *testing.T) {
	const (
		head = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
		// Two tokens of one subject: the expiry, deep in the payload, is
		// what a refresh changes.
		jwtA = head + ".eyJzdWIiOiJ1c2VyLTQyIiwic2NvcGUiOiJyZXBvIiwiZXhwIjoxNzY1MDAwMDAwfQ.c2lnbmF0dXJlLW9mLXRoZS1maXJzdC10b2tlbg"
		jwtB = head + ".eyJzdWIiOiJ1c2VyLTQyIiwic2NvcGUiOiJyZXBvIiwiZXhwIjoxNzY1MDA3MjAwLCJuIjoyfQ.c2lnbmF0dXJlLW9mLXRoZS1zZWNvbmQtdG9rZW4"
		skA  = "sk-proj-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA7Qw2xYz9Lmn0Pqr5"
		skB  = "sk-proj-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAZ9xkQ3mN8vB2cR7t"
		ghA  = "ghp_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH0123456789abcdefghij"
		ghB  = "ghp_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH0123456789abcdefghijKLMNOP"
	)
	for _, c := range []struct {
		name, a, b, secretA, secretB string
		body                         func(text string) string
	}{
		{"a bearer JWT in a message", "the header is Authorization: Bearer " + jwtA + " for now", "the header is Authorization: Bearer " + jwtB + " for now", jwtA, jwtB,
			func(text string) string {
				return `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":` + quote(text) + `}]}]}`
			}},
		{"a JWT alone in the system string", "token " + jwtA, "token " + jwtB, jwtA, jwtB,
			func(text string) string {
				return `{"model":"m","system":` + quote(text) + `,"messages":[{"role":"user","content":"hi"}]}`
			}},
		{"an sk- key in a string message", "use " + skA + " to call it", "use " + skB + " to call it", skA, skB,
			func(text string) string {
				return `{"model":"m","messages":[{"role":"user","content":` + quote(text) + `}]}`
			}},
		{"a ghp_ token in a tool result", "cloned with " + ghA, "cloned with " + ghB, ghA, ghB,
			func(text string) string {
				return `{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":` + quote(text) + `}]}]}`
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			build := func(body string) *request.Manifest {
				m, err := newManifest([]byte(body), payload.Anthropic, nil)
				if err != nil {
					t.Fatal(err)
				}
				return m
			}
			a, b := build(c.body(c.a)), build(c.body(c.b))
			d := request.Diverge(a, b, nil)
			if d.Reason == "" || d.Offset < 0 {
				t.Fatalf("no change found: %+v", d)
			}
			for _, secret := range []string{c.secretA, c.secretB} {
				for i := 0; i+8 <= len(secret); i++ {
					if strings.Contains(d.Reason, secret[i:i+8]) {
						t.Fatalf("the reason shows %q of a secret: %s", secret[i:i+8], d.Reason)
					}
				}
			}
			if !strings.Contains(d.Reason, "<redacted:") {
				t.Errorf("the reason does not say the secret changed: %s", d.Reason)
			}
			// The transcript's copy: canonical and redacted.
			kept := func(body string) *request.Manifest {
				red, err := redact.JSON([]byte(body))
				if err != nil {
					t.Fatal(err)
				}
				return build(string(red))
			}
			if k := request.Diverge(kept(c.body(c.a)), kept(c.body(c.b)), nil); k.Offset != d.Offset || k.Reason != d.Reason {
				t.Errorf("as sent: byte %d, %s; as kept: byte %d, %s", d.Offset, d.Reason, k.Offset, k.Reason)
			}
		})
	}
}

func quote(s string) string {
	b, err := pjson.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}
