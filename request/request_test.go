package request_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/harn/redact"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/request"
)

var update = flag.Bool("update", false, "rewrite the golden manifests")

// The conformance vectors: each provider's body and the request manifest
// promptloom makes of it, produced by this code and reviewed (paths,
// sections, cache order, marks, the secret redacted before hashing).
func TestGolden(t *testing.T) {
	bodies, _ := filepath.Glob("testdata/*.body.json")
	if len(bodies) == 0 {
		t.Fatal("no vectors")
	}
	for _, path := range bodies {
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		o := &request.Options{}
		if strings.Contains(path, "gemini") {
			o.Model = "gemini-2.5-flash"
		}
		m, err := newManifest(body, payload.Auto, o)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		raw, err := pjson.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got := append(pjson.AppendIndent(nil, raw, "", "  "), '\n')
		golden := strings.TrimSuffix(path, ".body.json") + ".manifest.json"
		if *update {
			os.WriteFile(golden, got, 0o644)
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s: got\n%s", path, got)
		}
	}
}

// The same request, as a transcript keeps it (canonical, redacted), has
// the same digests and token counts: the cache's view does not depend on
// white space or on redaction.
func TestDigestsSurviveRetention(t *testing.T) {
	body, _ := os.ReadFile("testdata/anthropic-agent.body.json")
	a, err := newManifest(body, payload.Anthropic, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The body holds a GitHub token: its text counts as the transcript
	// keeps it, redacted, in both.
	kept, err := redact.JSON(body)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(kept, body) || !bytes.Contains(kept, []byte("<redacted:")) {
		t.Fatal("nothing in the body is redacted: the test shows nothing")
	}
	b, err := newManifest(kept, payload.Anthropic, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Segments {
		if a.Segments[i].Digest != b.Segments[i].Digest || a.Segments[i].Path != b.Segments[i].Path || a.Segments[i].Tokens != b.Segments[i].Tokens {
			t.Errorf("segment %d: %s %s %d tokens, then %s %s %d tokens", i, a.Segments[i].Path, a.Segments[i].Digest, a.Segments[i].Tokens, b.Segments[i].Path, b.Segments[i].Digest, b.Segments[i].Tokens)
		}
	}
	if d := request.Diverge(a, b, nil); d.Index != len(b.Segments) {
		t.Errorf("diverge %+v", d)
	}
}

// A request that goes on where an earlier one ended shares the earlier
// one's tokens, not its own: the new turn is what a cache must write.
func TestDivergeExtension(t *testing.T) {
	turn := `{"model":"claude-sonnet-4-5","system":"Be brief.","messages":[{"role":"user","content":"hi"}`
	a, err := newManifest([]byte(turn+`]}`), payload.Anthropic, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newManifest([]byte(turn+`,{"role":"assistant","content":"hello"},{"role":"user","content":"and now?"}]}`), payload.Anthropic, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := request.Diverge(a, b, nil)
	rest := 0
	for _, s := range b.Segments[len(a.Segments):] {
		rest += s.Tokens
	}
	if d.Index != len(a.Segments) || d.Reason != "" || d.SharedTokens != a.Tokens || d.RestTokens != rest || d.Path != "/messages/1/content" {
		t.Errorf("B extends A: %+v; want index %d, shared %d, rest %d at /messages/1/content", d, len(a.Segments), a.Tokens, rest)
	}
	if back := request.Diverge(b, a, nil); back.Index != len(a.Segments) || back.Reason == "" || back.Path != "/messages/1/content" {
		t.Errorf("A ends before B: %+v", back)
	}
}

// The first changed byte of a block that is not text is counted in its
// canonical JSON, the digest's input: how a body spaces a tool result
// moves no offset, and the reason names the member that changed.
func TestDivergeOffsetIsCanonical(t *testing.T) {
	manifest := func(result string, indent bool) *request.Manifest {
		b := `{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"` + result + `"}]}]}`
		if indent {
			b = strings.ReplaceAll(b, `,"`, ",\n    \"")
		}
		m, err := newManifest([]byte(b), payload.Anthropic, nil)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	same := request.Diverge(manifest("it went boom", false), manifest("it went bang", false), nil)
	spaced := request.Diverge(manifest("it went boom", false), manifest("it went bang", true), nil)
	if same.Offset < 0 || spaced.Offset != same.Offset || !strings.Contains(spaced.Reason, "content changed at byte") || !strings.Contains(spaced.Reason, "bang") {
		t.Errorf("compact %+v; indented %+v: want the same offset, naming content and the word", same, spaced)
	}
}

// Two providers share no cache: the same conversation sent to another
// diverges before its first segment, and says why.
func TestDivergeProvider(t *testing.T) {
	a, err := newManifest([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`), payload.Anthropic, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newManifest([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`), payload.OpenAIChat, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := request.Diverge(a, b, nil); d.Index != 0 || d.Setting != "provider" || d.SharedTokens != 0 {
		t.Errorf("anthropic, then openai-chat: %+v", d)
	}
}

// Hostile bodies are typed errors: a duplicate key, a cache_control twice,
// a tool that is not an object, invalid UTF-8, deep nesting.
func TestHostileBodies(t *testing.T) {
	for name, body := range map[string]string{
		"duplicate key":   `{"model":"m","model":"n","messages":[]}`,
		"mark twice":      `{"model":"m","system":[{"type":"text","text":"x","cache_control":{"type":"ephemeral"},"cache_control":{"type":"ephemeral"}}],"messages":[]}`,
		"tool not object": `{"model":"m","tools":[1],"messages":[]}`,
		"invalid UTF-8":   "{\"model\":\"m\xff\",\"messages\":[]}",
		"deep":            `{"model":"m","messages":[` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `]}`,
	} {
		_, err := newManifest([]byte(body), payload.Anthropic, nil)
		var pe *payload.Error
		if !errors.As(err, &pe) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A section of the wrong type is refused, naming it, not left out (a
	// diff of two such bodies would say nothing changed).
	for _, c := range []struct {
		body string
		p    payload.Provider
		path string
	}{
		{`{"model":"m","system":5,"messages":[]}`, payload.Anthropic, "/system"},
		{`{"model":"m","tools":{"name":"x"},"messages":[]}`, payload.Anthropic, "/tools"},
		{`{"model":"m","messages":{"role":"user"}}`, payload.OpenAIChat, "/messages"},
		{`{"model":"m","tools":"x","messages":[]}`, payload.OpenAIChat, "/tools"},
		{`{"systemInstruction":"Be nice.","contents":[]}`, payload.Gemini, "/systemInstruction"},
		{`{"systemInstruction":{"parts":"Be nice."},"contents":[]}`, payload.Gemini, "/systemInstruction/parts"},
		{`{"contents":"hi"}`, payload.Gemini, "/contents"},
		{`{"model":"m","input":5}`, payload.OpenAIResponses, "/input"},
	} {
		_, err := newManifest([]byte(c.body), c.p, nil)
		var pe *payload.Error
		if !errors.As(err, &pe) || !errors.Is(err, payload.ErrMalformed) || pe.Path != c.path {
			t.Errorf("%s as %s: %v, want malformed at %s", c.body, c.p, err, c.path)
		}
	}
}

// Many tiny blocks are bounded work: one segment each, and the
// allocations grow with the blocks, not faster.
func TestManyBlocks(t *testing.T) {
	body := func(n int) []byte {
		var b strings.Builder
		b.WriteString(`{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":[`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"type":"text","text":"x"}`)
		}
		b.WriteString(`]}]}`)
		return []byte(b.String())
	}
	allocs := func(n int) float64 {
		b := body(n)
		return testing.AllocsPerRun(1, func() {
			m, err := newManifest(b, payload.Anthropic, nil)
			if err != nil || len(m.Segments) != n {
				t.Fatalf("%d blocks: %v", n, err)
			}
		})
	}
	small, large := allocs(10_000), allocs(100_000)
	if large > 12*small {
		t.Errorf("allocations: %.0f for 10,000 blocks, %.0f for 100,000", small, large)
	}
	// A million, a 27 MB body: every block a segment, the memory a
	// bounded multiple of the body (each segment keeps its path, digest
	// and counts: about 45 bytes of it for each byte of a tiny block).
	b := body(1_000_000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	m, err := newManifest(b, payload.Anthropic, nil)
	runtime.ReadMemStats(&after)
	if err != nil || len(m.Segments) != 1_000_000 {
		t.Fatalf("a million blocks: %v", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64*uint64(len(b)) {
		t.Errorf("a million blocks allocated %d MB for a %d MB body", got>>20, len(b)>>20)
	}
	// Past 1,048,576 parts a body is refused, naming where it went over,
	// before its parts are all made: 64 MB of tiny blocks would be
	// millions of segments, and gigabytes.
	b = body(1<<20 + 1)
	if _, err := newManifest(b, payload.Anthropic, nil); !errors.Is(err, payload.ErrMalformed) || !strings.Contains(err.Error(), "/messages/0/content/1048576: more than 1048576 parts") {
		t.Errorf("%d blocks: %v", 1<<20+1, err)
	}
}

// The manifest's canonical bytes, written by hand, are the generic
// encoder's: every vector's manifest, hashed both ways.
func TestCanonicalIsTheEncoders(t *testing.T) {
	bodies, _ := filepath.Glob("testdata/*.body.json")
	for _, path := range bodies {
		body, _ := os.ReadFile(path)
		m, err := newManifest(body, payload.Auto, &request.Options{Model: "gemini-2.5-flash"})
		if err != nil {
			t.Fatal(err)
		}
		want, err := pjson.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if got := request.Canonical(m); string(got) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", path, got, want)
		}
	}
}

// Given the context manifest of the prompt it sends, a body's system
// segments are the prompt's fragments, each with the path of its block
// and its reason; a templated fragment whose binding changed is named
// down to the binding.
func TestAttributedSystem(t *testing.T) {
	explainOpts := func(date string) *manifest.Manifest {
		env := promptloom.Fragment{ID: "env", Source: "env", Bucket: promptloom.After, Body: "The date is " + date + ".",
			Template: &promptloom.Template{Digest: digest.Of("The date is {{ date }}."), Bindings: map[string]digest.Digest{"date": digest.Of(date)}}}
		r, err := promptloom.Reduce([]promptloom.Fragment{promptloom.Primary("You are terse."), env}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return manifest.New(r, "agent")
	}
	body := func(m *manifest.Manifest, date string) []byte {
		return []byte(`{"model":"claude-sonnet-4-5","system":"You are terse.\n\nThe date is ` + date + `.","messages":[{"role":"user","content":"hi"}]}`)
	}
	ma, mb := explainOpts("2026-12-03"), explainOpts("2026-12-04")
	a, err := newManifest(body(ma, "2026-12-03"), payload.Anthropic, &request.Options{System: ma})
	if err != nil {
		t.Fatal(err)
	}
	var frags []string
	for _, s := range a.Segments {
		if s.Section == "system" {
			frags = append(frags, s.Fragment+"@"+s.Path)
			if s.Reason == "" {
				t.Errorf("fragment %s has no reason", s.Fragment)
			}
		}
	}
	if strings.Join(frags, ",") != "primary@/system,env@/system" {
		t.Errorf("system segments %v", frags)
	}
	b, err := newManifest(body(mb, "2026-12-04"), payload.Anthropic, &request.Options{System: mb})
	if err != nil {
		t.Fatal(err)
	}
	d := request.Diverge(a, b, nil)
	if d.Path != "/system" || d.Reason != "fragment env: binding date changed" {
		t.Errorf("divergence %+v", d)
	}
	// A manifest that does not hold for the body is refused.
	if _, err := newManifest(body(ma, "2026-12-04"), payload.Anthropic, &request.Options{System: ma}); !errors.Is(err, request.ErrNotAttributed) {
		t.Errorf("a stale manifest: %v", err)
	}
}

// The estimate's length of a string token, without decoding it, is the
// decoded text's.
func TestUnquotedLen(t *testing.T) {
	for _, tok := range []string{`""`, `"abc"`, `"a\nb\t\"\\"`, `"\u0041\u00e9\u20ac"`, `"\ud83d\ude00!"`, `"é€😀"`, `"\/"`, `"\ud800"`, `"\ud800x"`, `"\udc00\ud800"`} {
		if got, want := request.UnquotedLen(tok), len(pjson.Unquote(tok)); got != want {
			t.Errorf("%s: %d, decoded %d", tok, got, want)
		}
	}
}

// Runs of text around escapes, at every place in the token, count as the
// decoded text's.
func TestUnquotedLenRuns(t *testing.T) {
	for _, esc := range []string{`\n`, `\\`, `\"`, `\u00e9`, `\ud83d\ude00`, `\ud800`, `\/`} {
		for _, text := range []string{"", "a", "héllo", "a long run of plain text"} {
			for _, tok := range []string{`"` + esc + text + `"`, `"` + text + esc + `"`, `"` + text + esc + text + esc + text + `"`, `"` + esc + esc + `"`} {
				if got, want := request.UnquotedLen(tok), len(pjson.Unquote(tok)); got != want {
					t.Errorf("%s: %d, decoded %d", tok, got, want)
				}
			}
		}
	}
}

// A block that is not an object (an array, a number in a content list) is
// counted as its JSON, like any block that is not text.
func TestBlocksThatAreNotObjects(t *testing.T) {
	body := `{"model":"m","messages":[{"role":"user","content":[[1,"x"],"text",5,{"type":"text","text":"hi"}]}]}`
	m, err := newManifest([]byte(body), payload.Anthropic, nil)
	if err != nil {
		t.Fatal(err)
	}
	var tokens []int
	for _, s := range m.Segments {
		tokens = append(tokens, s.Tokens)
	}
	if want := []int{2, 1, 1, 1}; !slices.Equal(tokens, want) {
		t.Errorf("tokens %v, want %v", tokens, want)
	}
}

// A setting is compared as canonical JSON: white space, key order and a
// number's spelling do not change the prefix; a setting given a key twice
// is refused.
func TestSettingsAreCanonical(t *testing.T) {
	mk := func(choice string) (*request.Manifest, error) {
		return newManifest([]byte(`{"model":"claude-sonnet-4-5","tool_choice":`+choice+`,"system":"Be brief.","messages":[{"role":"user","content":"hi"}]}`), payload.Anthropic, nil)
	}
	a, err := mk(`{"type":"auto","disable_parallel_tool_use":true}`)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{"tool_choice": "tools"}
	for _, same := range []string{`{ "type" : "auto", "disable_parallel_tool_use" : true }`, `{"disable_parallel_tool_use":true,"type":"auto"}`} {
		b, err := mk(same)
		if err != nil {
			t.Fatal(err)
		}
		if d := request.Diverge(a, b, settings); d.Index != len(a.Segments) || d.Setting != "" {
			t.Errorf("%s: %+v", same, d)
		}
	}
	b, _ := mk(`{"type":"any"}`)
	if d := request.Diverge(a, b, settings); d.Setting != "tool_choice" {
		t.Errorf("another tool_choice: %+v", d)
	}
	if _, err := mk(`{"type":"auto","type":"any"}`); !errors.Is(err, payload.ErrMalformed) {
		t.Errorf("a tool_choice with a key twice: %v", err)
	}
}

// A body whose shape nothing says, or that read as the shape named has
// none of its messages but another shape's, is refused, not explained as
// an empty request or as its tools alone.
func TestTheShapeHolds(t *testing.T) {
	for _, c := range []struct {
		body string
		p    payload.Provider
	}{
		{`{}`, payload.Auto},
		{`{"model":"m","max_tokens":5}`, payload.Auto},
		{`{"model":"m","messages":[{"role":"user","content":"hi"}]}`, payload.Gemini},
		{`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, payload.Anthropic},
		{`{"model":"m","input":"hi"}`, payload.OpenAIChat},
	} {
		if _, err := newManifest([]byte(c.body), c.p, nil); !errors.Is(err, payload.ErrMalformed) {
			t.Errorf("%s as %q: %v, want malformed", c.body, c.p, err)
		}
	}
	// A Responses call of a stored prompt has no input, and no other
	// shape's messages either.
	if _, err := newManifest([]byte(`{"model":"gpt-4o","prompt":{"id":"p"}}`), payload.OpenAIResponses, nil); err != nil {
		t.Error(err)
	}
}

// Google's own examples give Gemini one object where a list is expected
// ("parts": {"text": …}, "contents": {…}): read as a list of one, at the
// list's own place.
func TestGeminiLoneObjects(t *testing.T) {
	m, err := newManifest([]byte(`{"system_instruction":{"parts":{"text":"You are a cat."}},"contents":{"parts":{"text":"Hello there"}}}`), payload.Gemini, &request.Options{Model: "gemini-2.5-flash"})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, s := range m.Segments {
		paths = append(paths, s.Section+" "+s.Path)
	}
	if got := strings.Join(paths, ", "); got != "system /system_instruction/parts, messages /contents/parts" {
		t.Errorf("segments: %s", got)
	}
}

// A manifest's JSON (what `explain --request --format json` prints) keeps
// request_manifest.v1's members in their documented order, with the
// section totals and no member of the Go value's own (the raw blocks, the
// settings); a segment alone is written as the manifest writes it.
func TestManifestJSON(t *testing.T) {
	body := []byte(`{"model":"claude-sonnet-4-5","tool_choice":{"type":"auto"},"cache_control":{"type":"ephemeral"},` +
		`"tools":[{"name":"Bash","description":"run","input_schema":{"type":"object"}}],` +
		`"system":[{"type":"text","text":"Be brief.","cache_control":{"type":"ephemeral","ttl":"1h"}}],` +
		`"messages":[{"role":"user","content":"hi"}]}`)
	m, err := newManifest(body, payload.Anthropic, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	dec := json.NewDecoder(bytes.NewReader(got))
	dec.Token()
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var skip json.RawMessage
		dec.Decode(&skip)
	}
	want := []string{"schema", "provider", "model", "counter", "segments", "sections", "cache", "bytes", "tokens", "content_hash"}
	if !slices.Equal(keys, want) {
		t.Errorf("members %v, want %v", keys, want)
	}
	for _, s := range []string{`"schema":"promptloom.request_manifest.v1"`, `"cache":{"auto":{"type":"ephemeral"}}`,
		`"sections":[{"section":"tools","segments":1,`, `{"section":"system","path":"/system/0","type":"text","bytes":`} {
		if !bytes.Contains(got, []byte(s)) {
			t.Errorf("no %s in %s", s, got)
		}
	}
	if bytes.Contains(got, []byte("Raw")) || bytes.Contains(got, []byte("tool_choice")) {
		t.Errorf("a Go-only member is in the JSON: %s", got)
	}
	seg, err := json.Marshal(m.Segments[1])
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(got, seg) || !strings.HasSuffix(string(seg), `"cache":{"type":"ephemeral","ttl":"1h"}}`) {
		t.Errorf("a segment alone: %s", seg)
	}
	if m.Segments[0].Raw == nil || m.Cache.Settings["tool_choice"] != `{"type":"auto"}` {
		t.Errorf("raw %q, settings %v", m.Segments[0].Raw, m.Cache.Settings)
	}
}

// newManifest reads body as provider p and builds its request manifest:
// the two steps of a caller that holds a body (payload.Read, then
// request.FromPayload).
func newManifest(body []byte, p payload.Provider, o *request.Options) (*request.Manifest, error) {
	r, err := payload.Read(body, p)
	if err != nil {
		return nil, err
	}
	return request.FromPayload(r, o)
}
