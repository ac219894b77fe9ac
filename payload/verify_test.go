package payload

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/manifest"
)

// threeItems is "alpha\n\nbeta\n\ngamma": system[1] starts at byte 7,
// system[2] at 13, and the prompt is 18 bytes.
func threeItems(t *testing.T) (*promptloom.Reduction, *manifest.Manifest) {
	t.Helper()
	r, err := promptloom.Reduce([]promptloom.Fragment{
		promptloom.SystemItem(0, "", "alpha", promptloom.Before),
		promptloom.SystemItem(1, "", "beta", promptloom.Before),
		promptloom.SystemItem(2, "", "gamma", promptloom.Before),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r, manifest.New(r, "agent")
}

func anthropicBody(t *testing.T, system any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"model": "claude", "max_tokens": 16, "system": system,
		"messages": []any{map[string]any{"role": "user", "content": "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func blocks(texts ...string) []any {
	out := make([]any, len(texts))
	for i, s := range texts {
		out[i] = map[string]any{"type": "text", "text": s}
	}
	return out
}

func TestVerifyHolds(t *testing.T) {
	_, m := threeItems(t)
	tests := []struct {
		name   string
		body   []byte
		placed bool
	}{
		{"anthropic string", anthropicBody(t, "alpha\n\nbeta\n\ngamma"), false},
		{"anthropic blocks as Place cuts them", anthropicBody(t, blocks("alpha", "\n\nbeta", "\n\ngamma")), false},
		{"anthropic one block per fragment, separators dropped", anthropicBody(t, blocks("alpha", "beta", "gamma")), true},
		{"openai chat, one system message per fragment",
			[]byte(`{"model":"gpt","messages":[{"role":"system","content":"alpha"},{"role":"system","content":"beta"},{"role":"developer","content":"gamma"},{"role":"user","content":"hi"}]}`), false},
		{"gemini parts without separators",
			[]byte(`{"systemInstruction":{"parts":[{"text":"alpha"},{"text":"beta"},{"text":"gamma"}]}}`), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := verifyBody(m, tt.body, Auto)
			if err != nil {
				t.Fatal(err)
			}
			if res.Placed != tt.placed || res.Transformed != tt.placed {
				t.Errorf("placed %v transformed %v, want %v", res.Placed, res.Transformed, tt.placed)
			}
			e := res.Manifest
			if e.Boundary != "llm_request_payload_egress" {
				t.Errorf("boundary %q", e.Boundary)
			}
			if err := manifest.Validate(e, res.Channel.Text); err != nil {
				t.Errorf("the result's manifest does not hold for the channel: %v", err)
			}
			if !tt.placed {
				if e.EgressDelta != nil || e.Root != "composed" {
					t.Errorf("unchanged bytes projected: root %q delta %+v", e.Root, e.EgressDelta)
				}
				return
			}
			// Harn's projection: assembled rows superseded, one egress:system
			// row for the 14 bytes sent, 4 separator bytes removed.
			for _, s := range e.Segments[:3] {
				if s.Included || s.Reason != "superseded by system transform" {
					t.Errorf("row %s: included %v reason %q", s.ID, s.Included, s.Reason)
				}
			}
			last := e.Segments[len(e.Segments)-1]
			if last.ID != "egress:system" || !last.Included || last.Bytes != 14 {
				t.Errorf("egress row %+v", last)
			}
			want := manifest.EgressDelta{Producer: "llm_request_payload", InputSystemPromptDigest: m.WholePromptDigest,
				InputSystemPromptBytes: 18, OutputSystemPromptDigest: digest.Of("alphabetagamma"),
				OutputSystemPromptBytes: 14, BytesRemoved: 4}
			if *e.EgressDelta != want {
				t.Errorf("delta %+v\nwant  %+v", *e.EgressDelta, want)
			}
			// The projected manifest verifies the same body directly.
			again, err := verifyBody(e, tt.body, Auto)
			if err != nil || again.Placed {
				t.Errorf("egress manifest against its own body: %v, placed %v", err, again != nil && again.Placed)
			}
		})
	}
}

func TestVerifyMismatch(t *testing.T) {
	_, m := threeItems(t)
	tests := []struct {
		name     string
		body     []byte
		fragment string
		offset   int
		rule     string
	}{
		{"one character in the middle fragment", anthropicBody(t, "alpha\n\nbeTa\n\ngamma"), "system[1]", 7, "segment_digest"},
		{"one character in the first", anthropicBody(t, "Alpha\n\nbeta\n\ngamma"), "system[0]", 0, "segment_digest"},
		{"a separator", anthropicBody(t, "alpha\n beta\n\ngamma"), "system[1]", 5, "join_separator"},
		{"a byte appended", anthropicBody(t, "alpha\n\nbeta\n\ngammaX"), "", 18, "system_prompt_bytes"},
		{"a fragment dropped", anthropicBody(t, "alpha\n\ngamma"), "system[1]", 7, "system_prompt_bytes"},
		{"blocks without separators, one changed", anthropicBody(t, blocks("alpha", "bxta", "gamma")), "system[1]", 7, "system_prompt_bytes"},
		{"openai chat message changed",
			[]byte(`{"messages":[{"role":"system","content":"alpha\n\nbeta\n\ngamm\u0061!"}]}`), "", 18, "system_prompt_bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := verifyBody(m, tt.body, Auto)
			var mm *Error
			if !errors.As(err, &mm) || !errors.Is(err, ErrMismatch) || !errors.Is(err, manifest.ErrInvalid) {
				t.Fatalf("err = %v", err)
			}
			var re *manifest.RuleError
			if !errors.As(err, &re) || string(re.Rule) != tt.rule {
				t.Errorf("rule %v, want %s", re, tt.rule)
			}
			if mm.Fragment != tt.fragment || mm.Offset != int64(tt.offset) {
				t.Errorf("at %q %d, want %q %d (%v)", mm.Fragment, mm.Offset, tt.fragment, tt.offset, err)
			}
		})
	}
}

func TestVerifyNoSystem(t *testing.T) {
	_, m := threeItems(t)
	body := []byte(`{"model":"claude","max_tokens":16,"messages":[{"role":"user","content":"alpha\n\nbeta\n\ngamma"}]}`)
	if _, err := verifyBody(m, body, Auto); !errors.Is(err, ErrNoSystem) {
		t.Fatalf("err = %v", err)
	}
	if _, err := verifyBody(m, body, Anthropic); !errors.Is(err, ErrNoSystem) {
		t.Fatalf("err = %v", err)
	}
}

// Ported from Harn's served_context_certifies_qwen_thinking_disable_egress_bytes
// (harn-vm, the llm transcript tests around dump_llm_request): an adapter prepends
// "/no_think\n" to "you are an agent." (17 bytes to 27); the manifest at the
// egress boundary is transformed, its one included row is egress:system, and
// the delta says 10 bytes were added. Here the bytes come from the body.
func TestServedContextCertifiesQwenThinkingDisableEgressBytes(t *testing.T) {
	r, err := promptloom.Reduce([]promptloom.Fragment{promptloom.Primary("you are an agent.")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := manifest.New(r, "llm_call")
	body := []byte(`{"model":"qwen3.5:30b","messages":[{"role":"system","content":"/no_think\nyou are an agent."},{"role":"user","content":"hi"}]}`)

	// Verify proves, and an added directive is not placement.
	if _, err := verifyBody(m, body, Auto); !errors.Is(err, ErrMismatch) {
		t.Fatalf("Verify: %v", err)
	}
	// A harness that vouches for its transform projects the manifest onto
	// the bytes sent, as Harn does at its egress boundary.
	c, err := extract(body, Auto)
	if err != nil {
		t.Fatal(err)
	}
	e, err := m.ForEgress(c.Text)
	if err != nil {
		t.Fatal(err)
	}
	if e.Boundary != "llm_request_payload_egress" || e.Root != "transformed" {
		t.Errorf("boundary %q root %q", e.Boundary, e.Root)
	}
	var included []string
	for _, s := range e.Segments {
		if s.Included {
			included = append(included, s.ID)
		}
	}
	if len(included) != 1 || included[0] != "egress:system" {
		t.Errorf("included rows %v", included)
	}
	d := e.EgressDelta
	if d.InputSystemPromptBytes != 17 || d.OutputSystemPromptBytes != 27 || d.BytesAdded != 10 {
		t.Errorf("delta %+v", d)
	}
	sum, n, err := systemDigest(body, Auto)
	if err != nil {
		t.Fatal(err)
	}
	if sum != e.WholePromptDigest || n != e.SystemPromptBytes {
		t.Errorf("payload digest %s/%d, manifest %s/%d", sum, n, e.WholePromptDigest, e.SystemPromptBytes)
	}
	// The retained egress manifest then verifies the body it was made for.
	if _, err := verifyBody(e, body, Auto); err != nil {
		t.Errorf("egress manifest: %v", err)
	}
}

func TestSystemDigestIsTheManifestsWhenBytesHold(t *testing.T) {
	_, m := threeItems(t)
	for _, body := range [][]byte{
		anthropicBody(t, "alpha\n\nbeta\n\ngamma"),
		anthropicBody(t, blocks("alpha", "\n\nbeta\n\n", "gamma")),
		[]byte(`{"instructions":"alpha\n\nbeta\n\ngamma","input":"hi"}`),
	} {
		sum, n, err := systemDigest(body, Auto)
		if err != nil {
			t.Fatal(err)
		}
		if sum != m.WholePromptDigest || n != 18 {
			t.Errorf("%s: %s %d, want %s 18", body, sum, n, m.WholePromptDigest)
		}
	}
	if _, _, err := systemDigest([]byte(`{"system":`), Auto); !errors.Is(err, ErrMalformed) {
		t.Errorf("truncated body: %v", err)
	}
}

// systemDigest is the payload side of a receipt: the digest of a body's
// system channel and its length.
func systemDigest(body []byte, p Provider) (digest.Digest, int, error) {
	c, err := extract(body, p)
	if err != nil {
		return digest.Digest{}, 0, err
	}
	return digest.Of(c.Text), len(c.Text), nil
}

// TestVerifyPlacementCutsOnlyBetweenFragments: a placement is one block,
// part or message per fragment (or several fragments a block); a cut at a
// fragment's own paragraph break, the break dropped, is a mismatch.
func TestVerifyPlacementCutsOnlyBetweenFragments(t *testing.T) {
	r, err := promptloom.Reduce([]promptloom.Fragment{
		promptloom.SystemItem(0, "", "one\n\ntwo", promptloom.Before),
		promptloom.SystemItem(1, "", "three", promptloom.Before),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := manifest.New(r, "agent")
	for _, tt := range []struct {
		name string
		body []byte
		frag string
		off  int64
	}{
		{"anthropic blocks", anthropicBody(t, blocks("one", "two", "three")), "system[0]", 3},
		{"anthropic, the cut inside the first of two blocks", anthropicBody(t, blocks("one", "two\n\nthree")), "system[0]", 3},
		{"gemini parts", []byte(`{"systemInstruction":{"parts":[{"text":"one\n\ntwo"},{"text":"thr"},{"text":"ee"}]}}`), "", 0},
		{"openai chat parts", []byte(`{"messages":[{"role":"system","content":[{"type":"text","text":"one"},{"type":"text","text":"two"}]},{"role":"system","content":"three"}]}`), "system[0]", 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := verifyBody(m, tt.body, Auto)
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrMismatch) || !errors.Is(err, manifest.ErrInvalid) {
				t.Fatalf("got %v, want a mismatch", err)
			}
			if tt.frag != "" && (e.Fragment != tt.frag || e.Offset != tt.off || !errors.Is(err, manifest.Rule("placement"))) {
				t.Errorf("fragment %q at %d (%v), want %q at %d, rule placement", e.Fragment, e.Offset, err, tt.frag, tt.off)
			}
		})
	}
	// Whole fragments a block, and two fragments in one block, still place.
	for _, body := range [][]byte{anthropicBody(t, blocks("one\n\ntwo", "three")), anthropicBody(t, blocks("one\n\ntwo\n\nthree"))} {
		if _, err := verifyBody(m, body, Auto); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
}

// TestAutoRefusesAnAmbiguousShape: under Auto, a body that two shapes
// read a system text from is refused (an endpoint of either would serve
// its own); naming the provider reads it as that shape.
func TestAutoRefusesAnAmbiguousShape(t *testing.T) {
	for _, tt := range []struct {
		body string
		as   Provider
	}{
		{`{"system":"alpha\n\nbeta\n\ngamma","messages":[{"role":"system","content":"other"},{"role":"user","content":"hi"}]}`, Anthropic},
		{`{"system":"alpha\n\nbeta\n\ngamma","messages":[{"role":"developer","content":"other"}]}`, Anthropic},
		{`{"system":null,"messages":[{"role":"system","content":"alpha\n\nbeta\n\ngamma"}]}`, OpenAIChat},
		{`{"systemInstruction":{"parts":[{"text":"alpha\n\nbeta\n\ngamma"}]},"messages":[{"role":"system","content":"other"}]}`, Gemini},
		{`{"instructions":"alpha\n\nbeta\n\ngamma","messages":[{"role":"system","content":"other"}]}`, OpenAIResponses},
	} {
		_, err := extract([]byte(tt.body), Auto)
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: got %v, want an ambiguous shape refused", tt.body, err)
		}
		if _, err := extract([]byte(tt.body), tt.as); err != nil {
			t.Errorf("%s as %s: %v", tt.body, tt.as, err)
		}
	}
	// One shape with a system text, whatever other keys the body has.
	for _, body := range []string{
		`{"system":"alpha","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"ok"}]}`,
		`{"model":"gpt","messages":[{"role":"system","content":"alpha"}]}`,
		`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"systemInstruction":{"parts":[{"text":"alpha"}]}}`,
	} {
		if _, err := extract([]byte(body), Auto); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
}

// A body with messages and no system member is Chat's or Anthropic's by
// what only one of them sends; with nothing either way, Chat's.
func TestAutoTellsMessagesShapes(t *testing.T) {
	for _, tt := range []struct {
		body string
		want Provider
	}{
		{`{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, Anthropic},
		{`{"model":"x","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"tools":[{"name":"Bash","input_schema":{}}]}`, Anthropic},
		{`{"model":"x","thinking":{"type":"enabled"},"messages":[]}`, Anthropic},
		{`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`, OpenAIChat},
		{`{"model":"claude-sonnet-4-5","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"hi"}]}`, OpenAIChat},
		{`{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"}}]}`, OpenAIChat},
		{`{"model":"claude-sonnet-4-5","prompt_cache_key":"k","messages":[]}`, OpenAIChat},
		{`{"model":"claude-sonnet-4-5","messages":["x",1,null,[]],"tools":"no"}`, Anthropic},
	} {
		r, err := Read([]byte(tt.body), Auto)
		if err != nil {
			t.Errorf("%s: %v", tt.body, err)
			continue
		}
		if r.Provider != tt.want {
			t.Errorf("%s: read as %s, want %s", tt.body, r.Provider, tt.want)
		}
	}
}
