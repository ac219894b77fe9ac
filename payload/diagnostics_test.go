package payload

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// The provider's verdict is read where each provider puts it: on an
// Anthropic message or a stream's message_start, on an OpenAI Responses
// object or the response of its stream's response.completed.
func TestSummarizeReadsTheProvidersVerdict(t *testing.T) {
	usage := `"usage":{"input_tokens":10,"output_tokens":2,"cache_read_input_tokens":0,"cache_creation_input_tokens":1663}`
	stream := func(start, delta string) string {
		return "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_2\",\"model\":\"claude-x\"," + usage + start + "}}\n\n" +
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"" + delta + "},\"usage\":{\"output_tokens\":2}}\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	}
	responses := func(diag string) string {
		return `{"id":"resp_2","model":"gpt-6.2-sol","status":"completed","output":[],` + diag +
			`"usage":{"input_tokens":3000,"output_tokens":5,"input_tokens_details":{"cached_tokens":0}}}`
	}
	for _, c := range []struct {
		name   string
		shape  Provider
		body   string
		stream bool
		reason string
		tokens int
	}{
		{"anthropic message", Anthropic, `{"id":"msg_2","content":[],` + usage + `,"diagnostics":{"cache_miss_reason":{"type":"tools_changed","cache_missed_input_tokens":1650}}}`, false, "tools_changed", 1650},
		{"anthropic inconclusive", Anthropic, `{"id":"msg_2","content":[],` + usage + `,"diagnostics":{"cache_miss_reason":{"type":"previous_message_not_found"}}}`, false, "previous_message_not_found", 0},
		{"anthropic pending", Anthropic, `{"id":"msg_2","content":[],` + usage + `,"diagnostics":{"cache_miss_reason":null}}`, false, "pending", 0},
		{"anthropic none", Anthropic, `{"id":"msg_2","content":[],` + usage + `,"diagnostics":null}`, false, "", 0},
		{"anthropic hostile", Anthropic, `{"id":"msg_2","content":[],` + usage + `,"diagnostics":{"cache_miss_reason":{"type":7,"cache_missed_input_tokens":-4}}}`, false, "", 0},
		{"anthropic stream", Anthropic, stream(`,"diagnostics":{"cache_miss_reason":{"type":"system_changed","cache_missed_input_tokens":900}}`, ""), true, "system_changed", 900},
		{"anthropic stream, a later event", Anthropic, stream(`,"diagnostics":{"cache_miss_reason":null}`, `,"diagnostics":{"cache_miss_reason":{"type":"messages_changed","cache_missed_input_tokens":12}}`), true, "messages_changed", 12},
		{"openai miss", OpenAIResponses, responses(`"prompt_cache_diagnostics":{"type":"cache_miss","reason":"tools_changed","cache_missed_tokens":2048,"comparison_reusable_tokens":1024},`), false, "tools_changed", 2048},
		{"openai hit", OpenAIResponses, responses(`"prompt_cache_diagnostics":{"type":"cache_hit"},`), false, "cache_hit", 0},
		{"openai stream", OpenAIResponses, "data: {\"type\":\"response.completed\",\"response\":" + responses(`"prompt_cache_diagnostics":{"type":"cache_miss","reason":"input_changed","cache_missed_tokens":77},`) + "}\n\n", true, "input_changed", 77},
		{"openai none", OpenAIResponses, responses(""), false, "", 0},
	} {
		r, _ := Summarize(c.shape, []byte(c.body), c.stream)
		if r.Usage == nil {
			t.Fatalf("%s: no usage read", c.name)
		}
		if r.Usage.CacheMissReason != c.reason || r.Usage.CacheMissedTokens != c.tokens {
			t.Errorf("%s: verdict %q (%d tokens), want %q (%d)", c.name, r.Usage.CacheMissReason, r.Usage.CacheMissedTokens, c.reason, c.tokens)
		}
	}
}

// A verdict on an answer with no usage has nowhere to go, and is not
// made up into a usage of zeros.
func TestAVerdictWithoutUsageIsNotAUsage(t *testing.T) {
	r, _ := Summarize(Anthropic, []byte(`{"id":"m","content":[],"diagnostics":{"cache_miss_reason":{"type":"tools_changed"}}}`), false)
	if r.Usage != nil {
		t.Errorf("usage %+v, want none", r.Usage)
	}
}

// Each reason names its place in promptloom's words; the inconclusive
// ones conclude nothing, and cache_hit concludes that nothing changed.
func TestCacheMissPlaces(t *testing.T) {
	for _, c := range []struct {
		reason             string
		sections, settings []string
		ok                 bool
	}{
		{"tools_changed", []string{"tools"}, nil, true},
		{"system_changed", []string{"system"}, nil, true},
		{"messages_changed", []string{"messages"}, nil, true},
		{"model_changed", nil, []string{"model", "speed"}, true},
		{"input_changed", []string{"system", "messages"}, nil, true},
		{"cache_hit", nil, nil, true},
		{"unavailable", nil, nil, false},
		{"previous_message_not_found", nil, nil, false},
		{"comparison_response_not_found", nil, nil, false},
		{"pending", nil, nil, false},
		{"", nil, nil, false},
		{"a_reason_from_next_year", nil, nil, false},
	} {
		sections, settings, ok := missPlacesOf(c.reason)
		if ok != c.ok || !slices.Equal(sections, c.sections) || !slices.Equal(settings, c.settings) {
			t.Errorf("%q: %v %v %v, want %v %v %v", c.reason, sections, settings, ok, c.sections, c.settings, c.ok)
		}
	}
	if _, _, ok := missPlacesOf(""); ok {
		t.Error("a nil usage has a verdict")
	}
}

// AskDiagnostics adds the one member, leaves every other byte as it was,
// escapes the id it is given, and keeps what a client asked for itself.
func TestAskDiagnostics(t *testing.T) {
	for _, c := range []struct {
		name, body, previous string
		provider             Provider
		want                 string // the body sent; "" for the body as read
		header, value        string
	}{
		{"anthropic", `{"model":"claude-x", "messages":[{"role":"user","content":"hi"}]}` + "\n", "msg_1", Anthropic,
			`{"model":"claude-x", "messages":[{"role":"user","content":"hi"}],"diagnostics":{"previous_message_id":"msg_1"}}` + "\n", "anthropic-beta", "cache-diagnosis-2026-04-07"},
		{"anthropic, first call", `{"model":"claude-x","messages":[]}`, "", Anthropic,
			`{"model":"claude-x","messages":[],"diagnostics":{"previous_message_id":null}}`, "anthropic-beta", "cache-diagnosis-2026-04-07"},
		{"anthropic, hostile id", `{"messages":[]}`, "m\"},\"x\":{\"", Anthropic,
			`{"messages":[],"diagnostics":{"previous_message_id":"m\"},\"x\":{\""}}`, "anthropic-beta", "cache-diagnosis-2026-04-07"},
		{"anthropic, asked already", `{"messages":[],"diagnostics":{"previous_message_id":"msg_0"}}`, "msg_1", Anthropic, "", "", ""},
		{"responses", `{"model":"gpt-6.2-sol","input":"hi"}`, "resp_1", OpenAIResponses,
			`{"model":"gpt-6.2-sol","input":"hi","prompt_cache_options":{"comparison_response_id":"resp_1"}}`, "", ""},
		{"responses, options kept", `{"model":"gpt-6.2-sol","input":"hi","prompt_cache_options":{"mode":"explicit", "ttl":"30m" },"store":true}`, "resp_1", OpenAIResponses,
			`{"model":"gpt-6.2-sol","input":"hi","prompt_cache_options":{"mode":"explicit", "ttl":"30m" ,"comparison_response_id":"resp_1"},"store":true}`, "", ""},
		{"responses, empty options", `{"input":"hi","prompt_cache_options":{ }}`, "resp_1", OpenAIResponses,
			`{"input":"hi","prompt_cache_options":{ "comparison_response_id":"resp_1"}}`, "", ""},
		{"responses, asked already", `{"input":"hi","prompt_cache_options":{"comparison_response_id":"resp_0"}}`, "resp_1", OpenAIResponses, "", "", ""},
		{"responses, options not an object", `{"input":"hi","prompt_cache_options":null}`, "resp_1", OpenAIResponses, "", "", ""},
		{"responses, first call", `{"input":"hi"}`, "", OpenAIResponses, "", "", ""},
		{"chat", `{"model":"gpt-6.2-sol","messages":[{"role":"user","content":"hi"}]}`, "chatcmpl_1", OpenAIChat, "", "", ""},
	} {
		r, err := Read([]byte(c.body), c.provider)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		body, header, value, added := r.askDiagnostics(c.previous)
		want := c.want
		if want == "" {
			want = c.body
		}
		if string(body) != want || header != c.header || value != c.value || added != (c.want != "") {
			t.Errorf("%s: %s %q %q %v, want %s %q %q %v", c.name, body, header, value, added, want, c.header, c.value, c.want != "")
		}
		if !json.Valid(body) {
			t.Errorf("%s: the body sent is not JSON: %s", c.name, body)
		}
		if _, err := Read(body, c.provider); err != nil {
			t.Errorf("%s: the body sent does not read: %v", c.name, err)
		}
	}
}

// The hostile id is the id, not members of its own: read back, the
// diagnostics object names exactly it.
func TestAskDiagnosticsIDReadsBack(t *testing.T) {
	id := "m\"},\"model\":\"other\",\"x\":{\"\u2028\\"
	r, err := Read([]byte(`{"model":"claude-x","messages":[]}`), Anthropic)
	if err != nil {
		t.Fatal(err)
	}
	body, _, _, _ := r.askDiagnostics(id)
	var got struct {
		Model       string `json:"model"`
		Diagnostics struct {
			Previous string `json:"previous_message_id"`
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Model != "claude-x" || got.Diagnostics.Previous != id || strings.Count(string(body), `"model"`) != 1 {
		t.Errorf("read back %+v from %s", got, body)
	}
}

// Whatever body Read accepts, the body AskDiagnostics gives back reads as
// the same shape, and holds what it says it added.
func FuzzAskDiagnostics(f *testing.F) {
	f.Add([]byte(`{"model":"claude-x","messages":[]}`), "msg_1", true)
	f.Add([]byte(`{"input":"hi","prompt_cache_options":{"mode":"explicit"}}`), "resp_1", false)
	f.Add([]byte(` {} `), "", true)
	f.Fuzz(func(t *testing.T, body []byte, previous string, anthropic bool) {
		p := OpenAIResponses
		if anthropic {
			p = Anthropic
		}
		r, err := Read(body, p)
		if err != nil {
			return
		}
		out, _, _, added := r.askDiagnostics(previous)
		back, err := Read(out, p)
		if err != nil {
			t.Fatalf("%s, asked against %q: %s reads no more: %v", body, previous, out, err)
		}
		if !added {
			if string(out) != string(body) {
				t.Fatalf("nothing added, yet %s became %s", body, out)
			}
			return
		}
		key := anthropicDiagnostics
		if p == OpenAIResponses {
			key = openAIOptions
		}
		if !back.root.get(key).isObject() {
			t.Fatalf("%s: no %s object in %s", body, key, out)
		}
	})
}
