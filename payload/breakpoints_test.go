package payload

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// unmarked is a body decoded with every cache mark left out: what the
// provider reads besides its cache, which PlaceBreakpoints must not touch.
func unmarked(t *testing.T, body []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	var strip func(any) any
	strip = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if k == "cache_control" || k == "prompt_cache_breakpoint" {
					delete(x, k)
					continue
				}
				x[k] = strip(e)
			}
		case []any:
			for i, e := range x {
				x[i] = strip(e)
			}
		}
		return v
	}
	return strip(v)
}

// marked are the pointers of the parts that carry a mark, read back as
// the cache models read them, and the top-level cache_control.
func marked(t *testing.T, body []byte, p Provider) []string {
	t.Helper()
	r, err := Read(body, p)
	if err != nil {
		t.Fatalf("%s does not read: %v", body, err)
	}
	parts, err := r.Parts()
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	var out []string
	for _, x := range parts {
		if x.Cache != nil {
			out = append(out, x.Path)
		}
	}
	if c, _ := r.Cache(); c.Auto != nil {
		out = append(out, "/cache_control")
	}
	return out
}

func TestPlaceBreakpoints(t *testing.T) {
	tools := `"tools":[{"name":"Read","input_schema":{"type":"object"}},{"name":"Bash","input_schema":{"type":"object"}}]`
	for _, c := range []struct {
		name     string
		provider Provider
		body     string
		want     string // the body sent; "" for the body as read
		at       []string
	}{
		{"anthropic agent", Anthropic,
			`{"model":"claude-x",` + tools + `,"system":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"assistant","content":[{"type":"text","text":"yo"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x"},{"type":"text","text":""}]}]}`,
			`{"model":"claude-x","tools":[{"name":"Read","input_schema":{"type":"object"}},{"name":"Bash","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}}],"system":[{"type":"text","text":"a"},{"type":"text","text":"b","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"assistant","content":[{"type":"text","text":"yo"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x","cache_control":{"type":"ephemeral"}},{"type":"text","text":""}]}]}`,
			[]string{"/tools/1", "/system/1", "/messages/2/content/0"}},
		{"anthropic strings, messages first", Anthropic,
			`{"messages":[{"role":"user","content":"hi"}], "system": "Be brief." ,"model":"claude-x"}`,
			`{"messages":[{"role":"user","content":"hi"}], "system": [{"type":"text","text":"Be brief.","cache_control":{"type":"ephemeral"}}] ,"model":"claude-x","cache_control":{"type":"ephemeral"}}`,
			[]string{"/system/0", "/cache_control"}},
		{"anthropic, thinking last", Anthropic,
			`{"model":"claude-x","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"s"}]}]}`,
			`{"model":"claude-x","messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]},{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"s"}]}]}`,
			[]string{"/messages/0/content/0"}},
		{"anthropic, marked already", Anthropic,
			`{"model":"claude-x",` + tools + `,"messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral","ttl":"1h"}}]}]}`, "", nil},
		{"anthropic, automatic already", Anthropic,
			`{"model":"claude-x","cache_control":{"type":"ephemeral"},"messages":[{"role":"user","content":"hi"}]}`, "", nil},
		{"anthropic, a nested mark", Anthropic,
			`{"model":"claude-x","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"x","cache_control":{"type":"ephemeral"}}]}]}]}`, "", nil},
		{"anthropic, nothing to cache", Anthropic, `{"model":"claude-x","messages":[{"role":"user","content":""}]}`, "", nil},
		{"chat gpt-5.6", OpenAIChat,
			`{"model":"gpt-5.6","messages":[{"role":"system","content":"Be brief."},{"role":"developer","content":[{"type":"text","text":"Use tools."}]},{"role":"user","content":"hi"}]}`,
			`{"model":"gpt-5.6","messages":[{"role":"system","content":"Be brief."},{"role":"developer","content":[{"type":"text","text":"Use tools.","prompt_cache_breakpoint":{"mode":"explicit"}}]},{"role":"user","content":"hi"}]}`,
			[]string{"/messages/1/content/0"}},
		{"chat, a string developer message", OpenAIChat,
			`{"model":"gpt-6.2-sol","messages":[{"role":"developer","content":"Be brief."},{"role":"user","content":"hi"},{"role":"developer","content":"later"}]}`,
			`{"model":"gpt-6.2-sol","messages":[{"role":"developer","content":[{"type":"text","text":"Be brief.","prompt_cache_breakpoint":{"mode":"explicit"}}]},{"role":"user","content":"hi"},{"role":"developer","content":"later"}]}`,
			[]string{"/messages/0/content/0"}},
		{"chat, an earlier model", OpenAIChat, `{"model":"gpt-5.5","messages":[{"role":"developer","content":"Be brief."},{"role":"user","content":"hi"}]}`, "", nil},
		{"chat, explicit mode", OpenAIChat, `{"model":"gpt-5.6","prompt_cache_options":{"mode":"explicit"},"messages":[{"role":"developer","content":"Be brief."}]}`, "", nil},
		{"responses, a string developer message", OpenAIResponses,
			`{"model":"gpt-5.6","instructions":"Be brief.","input":[{"role":"developer","content":"Use tools."},{"role":"user","content":"hi"}]}`,
			`{"model":"gpt-5.6","instructions":"Be brief.","input":[{"role":"developer","content":[{"type":"input_text","text":"Use tools.","prompt_cache_breakpoint":{"mode":"explicit"}}]},{"role":"user","content":"hi"}]}`,
			[]string{"/input/0/content/0"}},
		{"responses, instructions alone", OpenAIResponses, `{"model":"gpt-5.6","instructions":"Be brief.","input":"hi"}`, "", nil},
		{"gemini", Gemini, `{"systemInstruction":{"parts":[{"text":"Be brief."}]},"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, "", nil},
	} {
		r, err := Read([]byte(c.body), c.provider)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		body, at := r.placeBreakpoints()
		want := c.want
		if want == "" {
			want = c.body
		}
		if string(body) != want || !slices.Equal(at, c.at) {
			t.Errorf("%s:\n got %s %q\nwant %s %q", c.name, body, at, want, c.at)
			continue
		}
		if got := marked(t, body, c.provider); c.want != "" && !slices.Equal(got, c.at) {
			t.Errorf("%s: read back, the marks are %q, want %q", c.name, got, c.at)
		}
		if !reflect.DeepEqual(unmarked(t, body), unmarked(t, []byte(c.body))) && !strings.Contains(c.name, "string") {
			t.Errorf("%s: more than marks changed:\n%s\n%s", c.name, c.body, body)
		}
	}
}

// A turn that adds more blocks than a breakpoint looks back over gets a
// fourth breakpoint where the previous call's request ended, so the entry
// it wrote is still read; a short turn does not.
func TestPlaceBreakpointsPreviousTurn(t *testing.T) {
	for _, calls := range []int{3, 12} {
		var uses, results []string
		for i := range calls {
			uses = append(uses, fmt.Sprintf(`{"type":"tool_use","id":"t%d","name":"Read","input":{}}`, i))
			results = append(results, fmt.Sprintf(`{"type":"tool_result","tool_use_id":"t%d","content":"r"}`, i))
		}
		body := `{"model":"claude-x","system":"s","messages":[{"role":"user","content":[{"type":"text","text":"one"}]},{"role":"assistant","content":[{"type":"text","text":"two"}]},` +
			`{"role":"user","content":[{"type":"text","text":"three"}]},{"role":"assistant","content":[` + strings.Join(uses, ",") + `]},{"role":"user","content":[` + strings.Join(results, ",") + `]}]}`
		r, err := Read([]byte(body), Anthropic)
		if err != nil {
			t.Fatal(err)
		}
		out, at := r.placeBreakpoints()
		want := []string{"/system/0", fmt.Sprintf("/messages/4/content/%d", calls-1)}
		if 2*calls >= anthropicLookback {
			want = []string{"/system/0", "/messages/2/content/0", fmt.Sprintf("/messages/4/content/%d", calls-1)}
		}
		if !slices.Equal(at, want) || !slices.Equal(marked(t, out, Anthropic), want) {
			t.Errorf("%d tool calls: marks at %q, want %q", calls, at, want)
		}
	}
}

// Whatever body Read accepts, the body PlaceBreakpoints gives back reads
// as the same shape, with a mark on each block it names and no other,
// within Anthropic's four, differs in marks only, and asks nothing more
// of a second pass.
func FuzzPlaceBreakpoints(f *testing.F) {
	f.Add([]byte(`{"model":"claude-x","tools":[{"name":"a"}],"system":"s","messages":[{"role":"user","content":"hi"}]}`), 0)
	f.Add([]byte(`{"model":"gpt-5.6","messages":[{"role":"developer","content":"d"},{"role":"user","content":"hi"}]}`), 1)
	f.Add([]byte(`{"model":"gpt-5.6","input":[{"role":"system","content":[{"type":"input_text","text":"d"}]}]}`), 2)
	f.Fuzz(func(t *testing.T, body []byte, shape int) {
		p := []Provider{Anthropic, OpenAIChat, OpenAIResponses, Gemini}[uint(shape)%4]
		r, err := Read(body, p)
		if err != nil {
			return
		}
		out, at := r.placeBreakpoints()
		if len(at) == 0 {
			if string(out) != string(body) {
				t.Fatalf("nothing placed, yet %s became %s", body, out)
			}
			return
		}
		got := marked(t, out, p)
		slices.Sort(got)
		want := slices.Sorted(slices.Values(at))
		if !slices.Equal(got, want) || len(at) > anthropicMaxBreakpoints {
			t.Fatalf("%s: placed %q, reads back %q: %s", body, at, got, out)
		}
		var a, b any
		if json.Unmarshal(body, &a) == nil && json.Unmarshal(out, &b) == nil {
			strip := unmarked(t, out)
			if !reflect.DeepEqual(strip, unmarked(t, body)) {
				// A string wrapped in a text block is the one other change.
				if !strings.Contains(string(out), `[{"type":"text","text":`) && !strings.Contains(string(out), `[{"type":"input_text","text":`) {
					t.Fatalf("more than marks changed: %s became %s", body, out)
				}
			}
		}
		again, err := Read(out, p)
		if err != nil {
			t.Fatal(err)
		}
		if _, at2 := again.placeBreakpoints(); len(at2) > 0 {
			t.Fatalf("%s: a second pass placed %q", out, at2)
		}
	})
}
