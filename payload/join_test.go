package payload

import (
	"bytes"
	"testing"
)

// A body cut by Read and put back by Join reads the same: every member,
// the system channel included, whatever the shape keeps its messages in.
func TestJoinReadsBackAsRead(t *testing.T) {
	for _, body := range []string{
		`{"model":"claude-x","system":[{"type":"text","text":"S"}],"max_tokens":9,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"t","input_schema":{}}]}`,
		`{"model":"gpt-x","messages":[{"role":"system","content":"S"},{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"t"}}],"seed":1}`,
		`{"model":"gpt-x","instructions":"I","input":[{"role":"developer","content":"S"},{"role":"user","content":"hi"}],"store":false}`,
		`{"systemInstruction":{"parts":[{"text":"S"}]},"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"topP":0.5}}`,
		`{"model":"claude-x","messages":[{"role":"user","content":"hi"}]}`,
	} {
		r, err := Read([]byte(body), Auto)
		if err != nil {
			t.Fatal(err)
		}
		joined := joinBody(r.Provider, r.Parameters, r.Messages, r.Tools, r.retained())
		back, err := Read(joined, r.Provider)
		if err != nil {
			t.Fatalf("%s: %v", joined, err)
		}
		if !bytes.Equal(back.Messages, r.Messages) || !bytes.Equal(back.Tools, r.Tools) || !bytes.Equal(back.Parameters, r.Parameters) {
			t.Errorf("%s\njoined %s: members differ", body, joined)
		}
		c1, err1 := r.System()
		c2, err2 := back.System()
		if (err1 == nil) != (err2 == nil) || err1 == nil && (c1.Text != c2.Text || c1.Field != c2.Field) {
			t.Errorf("%s\njoined %s: system %v %v, want %v %v", body, joined, c2, err2, c1, err1)
		}
	}
}

// A member absent or null is left out; the messages go under the shape's
// key.
func TestJoinMembers(t *testing.T) {
	got := string(joinBody(Gemini, []byte(`{"a":1,"b":null}`), []byte(`[]`), nil, []byte(`{"systemInstruction":{"parts":[]}}`)))
	want := `{"a":1,"contents":[],"systemInstruction":{"parts":[]}}`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
