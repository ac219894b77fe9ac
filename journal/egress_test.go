package journal

import (
	"bytes"
	"testing"

	"github.com/promptloom/promptloom/payload"
)

// A request whose body's system channel is the prompt validates its
// manifest once, whether the journal is given the body or the body read
// (payload.Read, as the transport gives it); and given the body read, the
// journal reads nothing of it again.
func TestBeginValidatesOnce(t *testing.T) {
	body := []byte(`{"model":"m","system":"You are careful.\n\nAnswer in English.","messages":[{"role":"user","content":"hi"}]}`)
	n := 0
	validated = func() { n++ }
	defer func() { validated = func() {} }()
	for _, given := range []string{"body", "read"} {
		t.Run(given, func(t *testing.T) {
			n = 0
			r := request(t, "c1", twoFragments)
			r.Body = body
			if given == "read" {
				pr, err := payload.Read(body, payload.Anthropic)
				if err != nil {
					t.Fatal(err)
				}
				r.Payload = pr
			}
			var buf bytes.Buffer
			j := New(&buf, &Options{Clock: clock})
			if _, err := j.Begin(ctx, r); err != nil {
				t.Fatal(err)
			}
			if n != 1 {
				t.Errorf("the manifest was validated %d times, want 1", n)
			}
			if !bytes.Contains(buf.Bytes(), []byte(`"payload_provider":"anthropic"`)) {
				t.Errorf("no payload receipt: %s", buf.Bytes())
			}
		})
	}
}
