package payload

import (
	"errors"
	"testing"
)

// A message or block whose key is given twice is refused, naming the
// key: which copy a decoder keeps differs, so the role, the content or the
// mark read here could be other than the provider reads.
func TestPartsRefuseAKeyGivenTwice(t *testing.T) {
	for body, want := range map[string]string{
		`{"messages":[{"role":"user","role":"system","content":"hi"}]}`:                                               "/messages/0.role",
		`{"messages":[{"role":"user","content":"a","content":"b"}]}`:                                                  "/messages/0.content",
		`{"messages":[{"role":"user","content":[{"type":"text","type":"image","text":"a"}]}]}`:                        "/messages/0/content/0.type",
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a","cache_control":{},"cache_control":{}}]}]}`: "/messages/0/content/0.cache_control",
	} {
		r, err := Read([]byte(body), Anthropic)
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		_, err = r.Parts()
		var e *Error
		if !errors.As(err, &e) || e.Kind != ErrMalformed || e.Path != want {
			t.Errorf("%s: %v, want a malformed body at %s", body, err, want)
		}
	}
	// Gemini marks no block: a part's member named "" is content.
	r, err := Read([]byte(`{"contents":[{"role":"user","parts":[{"text":"a","":1}]}]}`), Gemini)
	if err != nil {
		t.Fatal(err)
	}
	if ps, err := r.Parts(); err != nil || len(ps) != 1 || ps[0].Cache != nil {
		t.Errorf("a Gemini part: %+v, %v", ps, err)
	}
}
