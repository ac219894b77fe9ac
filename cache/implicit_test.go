package cache

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/request"
)

func chat(t *testing.T, key, system string, users ...string) *request.Manifest {
	t.Helper()
	msgs := []string{fmt.Sprintf(`{"role":"system","content":%q}`, system)}
	for _, u := range users {
		msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":%q}`, u))
	}
	k := ""
	if key != "" {
		k = fmt.Sprintf(`"prompt_cache_key":%q,`, key)
	}
	m, err := newManifest([]byte(`{"model":"gpt-4o",`+k+`"messages":[`+strings.Join(msgs, ",")+`]}`), payload.OpenAIChat, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// OpenAI's automatic cache: nothing below 1,024 tokens; above, the
// shared prefix in steps of 128; never across cache keys; gone after the
// in_memory lifetime.
func TestOpenAIRules(t *testing.T) {
	long := strings.Repeat("You are a careful agent who reads files first. ", 200) // about 2,000 tokens
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	run := func(ms []*request.Manifest, gaps ...time.Duration) []Verdict {
		var calls []Call
		now := at
		for i, m := range ms {
			if i > 0 && i-1 < len(gaps) {
				now = now.Add(gaps[i-1])
			}
			calls = append(calls, Call{Name: fmt.Sprint(i + 1), At: now, Request: m})
		}
		return Run(calls, nil).Verdicts
	}
	v := run([]*request.Manifest{chat(t, "", long, "one"), chat(t, "", long, "two")}, time.Minute)
	if r := v[1].Predicted.Read; r == 0 || r%128 != 0 || v[1].ReadThrough != "/messages/0/content" || !v[1].Estimate {
		t.Errorf("a shared 2,000-token prefix: %+v", v[1])
	}
	if v := run([]*request.Manifest{chat(t, "", "Be brief.", "one"), chat(t, "", "Be brief.", "two")}); v[1].Predicted.Read != 0 {
		t.Errorf("below 1,024 tokens: %+v", v[1])
	}
	if v := run([]*request.Manifest{chat(t, "a", long, "one"), chat(t, "b", long, "two")}); v[1].Predicted.Read != 0 {
		t.Errorf("across cache keys: %+v", v[1])
	}
	if v := run([]*request.Manifest{chat(t, "", long, "one"), chat(t, "", long, "two")}, 6*time.Minute); v[1].Predicted.Read != 0 {
		t.Errorf("after the lifetime: %+v", v[1])
	}
	// An edit to the system message is blamed.
	if v := run([]*request.Manifest{chat(t, "", long, "one"), chat(t, "", long+" Now.", "two")}); len(v[1].Blame) == 0 || v[1].Blame[0].Path != "/messages/0/content" {
		t.Errorf("an edited system message: %+v", v[1])
	}
}

// Gemini's implicit cache: the system instruction and tools match whole;
// after them the contents part by part; the model's minimum applies.
func TestGeminiRules(t *testing.T) {
	body := func(system string, parts ...string) *request.Manifest {
		var cs []string
		for _, p := range parts {
			cs = append(cs, fmt.Sprintf(`{"role":"user","parts":[{"text":%q}]}`, p))
		}
		m, err := newManifest([]byte(`{"systemInstruction":{"parts":[{"text":`+fmt.Sprintf("%q", system)+`}]},"contents":[`+strings.Join(cs, ",")+`]}`),
			payload.Gemini, &request.Options{Model: "gemini-2.5-flash"})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	long := strings.Repeat("Answer from the documents only. ", 400) // about 3,200 tokens
	at := time.Now()
	v := Run([]Call{{Name: "1", At: at, Request: body(long, "a")}, {Name: "2", At: at.Add(time.Second), Request: body(long, "a", "b")}}, nil).Verdicts
	if v[1].Predicted.Read == 0 || v[1].ReadThrough != "/contents/0/parts/0" {
		t.Errorf("a longer conversation on the same head: %+v", v[1])
	}
	v = Run([]Call{{Name: "1", At: at, Request: body(long, "a")}, {Name: "2", At: at.Add(time.Second), Request: body(long+"!", "a")}}, nil).Verdicts
	if v[1].Predicted.Read != 0 {
		t.Errorf("another head: %+v", v[1])
	}
	if fs := lint(body("short", "a"), nil, nil); len(fs) != 1 || fs[0].Rule != "minimum" {
		t.Errorf("below gemini-2.5-flash's minimum: %v", fs)
	}
}
