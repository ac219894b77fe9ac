package cache_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/request"
)

// explained is one explanation in the three formats.
type explained struct {
	text, html string
	json       explainJSON
}

// explainJSON is the part of explain --request --format json these tests
// read.
type explainJSON struct {
	Segments []struct {
		Index       int     `json:"index"`
		Path        string  `json:"path"`
		Fragment    string  `json:"fragment"`
		Tokens      int     `json:"tokens"`
		Cache       string  `json:"cache"`
		Breakpoint  string  `json:"breakpoint"`
		Content     *string `json:"content"`
		ContentType string  `json:"content_type"`
		Note        string  `json:"content_note"`
	} `json:"segments"`
	Cost *struct {
		Model       string `json:"model"`
		Priced      bool   `json:"priced"`
		Unpriced    string `json:"unpriced"`
		Basis       string `json:"basis"`
		Cost        int64  `json:"cost_micro_usd"`
		WriteTokens int    `json:"write_tokens"`
		WriteCost   int64  `json:"write_cost_micro_usd"`
		MissTokens  int    `json:"miss_tokens"`
		MissCost    int64  `json:"miss_cost_micro_usd"`
	} `json:"cost"`
}

// render writes x as text, JSON and HTML.
func render(t *testing.T, x *cache.Explanation) explained {
	t.Helper()
	var text, js, page bytes.Buffer
	if err := x.WriteText(&text, "body.json"); err != nil {
		t.Fatal(err)
	}
	if err := x.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if err := x.WriteHTML(&page, "body.json"); err != nil {
		t.Fatal(err)
	}
	var e explained
	if err := json.Unmarshal(js.Bytes(), &e.json); err != nil {
		t.Fatalf("%v\n%s", err, js.String())
	}
	e.text, e.html = text.String(), page.String()
	return e
}

// explainBody builds body's manifest and explains it with its body.
func explainBody(t *testing.T, body string, since *request.Manifest) (*request.Manifest, explained) {
	t.Helper()
	m, err := newManifest([]byte(body), payload.Anthropic, nil)
	if err != nil {
		t.Fatal(err)
	}
	x := cache.Explain(m, since, nil, false)
	x.Body = []byte(body)
	return m, render(t, x)
}

// details is the content of each segment's folded element on the page,
// by its number.
func details(t *testing.T, page string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, d := range regexp.MustCompile(`(?s)<details id="segment-(\d+)"[^>]*>(.*?)</details>`).FindAllStringSubmatch(page, -1) {
		out[d[1]] = d[2]
	}
	return out
}

// textContent is the lines under segment n's heading in the text.
func textContent(text string, n int) string {
	_, rest, ok := strings.Cut(text, fmt.Sprintf("\n#%d ", n))
	if !ok {
		return ""
	}
	_, rest, _ = strings.Cut(rest, "\n")
	var lines []string
	for _, l := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(l, "      ") {
			break
		}
		lines = append(lines, strings.TrimPrefix(l, "      "))
	}
	return strings.Join(lines, "\n")
}

const (
	toolWords   = "Searches the repository for a pattern, quietly and well."
	systemWords = "Answer like a lighthouse keeper: brief, steady, and kind."
)

// The words of a system block and of a tool's description are in the
// text, the JSON and the page, each under its own segment.
func TestExplainShowsTheWords(t *testing.T) {
	body := `{"model":"claude-opus-5","max_tokens":64,
		"tools":[{"name":"grep_repo","description":"` + toolWords + `","input_schema":{"type":"object"}}],
		"system":[{"type":"text","text":"` + systemWords + `"}],
		"messages":[{"role":"user","content":"Where is main?"}]}`
	m, e := explainBody(t, body, nil)
	if len(e.json.Segments) != len(m.Segments) {
		t.Fatalf("%d segments in the JSON, %d in the manifest", len(e.json.Segments), len(m.Segments))
	}
	want := map[string]string{"/tools/0": toolWords, "/system/0": systemWords, "/messages/0/content": "Where is main?"}
	page := details(t, e.html)
	for i, s := range e.json.Segments {
		w := want[s.Path]
		if s.Path != m.Segments[i].Path || s.Index != i+1 || s.Tokens != m.Segments[i].Tokens {
			t.Errorf("segment %d: %+v, manifest %+v", i, s, m.Segments[i])
		}
		if s.Content == nil || !strings.Contains(*s.Content, w) {
			t.Errorf("%s: JSON content %v, want it to hold %q", s.Path, s.Content, w)
		}
		if !strings.Contains(textContent(e.text, i+1), w) {
			t.Errorf("%s: text content %q, want it to hold %q\n%s", s.Path, textContent(e.text, i+1), w, e.text)
		}
		if d := page[fmt.Sprint(i+1)]; !strings.Contains(d, w) || !strings.Contains(d, "<pre") {
			t.Errorf("%s: the page's details %q, want them to hold %q", s.Path, d, w)
		}
	}
	// A text block is its text, a tool its JSON.
	if s := e.json.Segments[1]; *s.Content != systemWords || s.ContentType != "text" {
		t.Errorf("the system block: %q (%s)", *s.Content, s.ContentType)
	}
	var tool map[string]any
	if s := e.json.Segments[0]; s.ContentType != "json" || json.Unmarshal([]byte(*s.Content), &tool) != nil || tool["description"] != toolWords || tool["name"] != "grep_repo" {
		t.Errorf("the tool: %q (%s)", *s.Content, s.ContentType)
	}

	// Without its body an explanation has the same segments and no word.
	x := cache.Explain(m, nil, nil, false)
	bare := render(t, x)
	if strings.Contains(bare.text, systemWords) || strings.Contains(bare.html, systemWords) || strings.Contains(bare.html, "<details") {
		t.Errorf("words shown with no body:\n%s", bare.text)
	}
	for _, s := range bare.json.Segments {
		if s.Content != nil {
			t.Errorf("%s has content with no body", s.Path)
		}
	}
}

// A body file's secrets are shown only as their placeholders: in a text
// block, in a tool's JSON, in a credential-like member; a body already
// redacted (as a transcript keeps it) is shown as it is.
func TestExplainRedactsTheBody(t *testing.T) {
	github := "ghp_" + strings.Repeat("a1B2", 9)
	aws := "AKIA" + strings.Repeat("Q7", 8)
	member := "hunter2-and-then-some"
	body := `{"model":"claude-opus-5","max_tokens":64,
		"tools":[{"name":"deploy","description":"Deploys with key ` + aws + ` only.","input_schema":{"type":"object","properties":{"api_key":{"type":"string","default":"` + member + `"}}}}],
		"system":[{"type":"text","text":"The token is ` + github + `, keep it."}],
		"messages":[{"role":"user","content":"Go."}]}`
	_, e := explainBody(t, body, nil)
	js, _ := json.Marshal(e.json)
	for _, secret := range []string{github, aws, member} {
		for format, out := range map[string]string{"text": e.text, "json": string(js), "html": e.html} {
			if strings.Contains(out, secret) {
				t.Errorf("%s shows the secret %q", format, secret)
			}
		}
	}
	gh := fmt.Sprintf("<redacted:github_token:%d>", len(github))
	ak := fmt.Sprintf("<redacted:aws_access_key:%d>", len(aws))
	if c := *e.json.Segments[1].Content; c != "The token is "+gh+", keep it." {
		t.Errorf("the system block: %q", c)
	}
	if c := *e.json.Segments[0].Content; !strings.Contains(c, ak) || !strings.Contains(c, `"api_key":"[redacted]"`) {
		t.Errorf("the tool: %q", c)
	}
	if !strings.Contains(e.text, gh) || !strings.Contains(e.text, ak) || !strings.Contains(e.html, "&lt;redacted:github_token:") {
		t.Errorf("a placeholder is missing:\n%s", e.text)
	}

	// The same body as a transcript keeps it: its placeholders stay.
	kept := strings.NewReplacer(github, gh, aws, ak, `"`+member+`"`, `"[redacted]"`).Replace(body)
	_, k := explainBody(t, kept, nil)
	for i := range e.json.Segments {
		if *k.json.Segments[i].Content != *e.json.Segments[i].Content {
			t.Errorf("%s: the redacted body shows %q, the body %q", e.json.Segments[i].Path, *k.json.Segments[i].Content, *e.json.Segments[i].Content)
		}
	}
}

// A segment's control characters and bidirectional controls reach
// neither the terminal nor the page raw; JSON gives the content exactly.
func TestExplainEscapesControls(t *testing.T) {
	hostile := "Title\x1b]0;owned\x07 then \x1b[2J\x1b[31mred\u202e fdp.exe\u0085"
	quoted, _ := json.Marshal(hostile)
	body := `{"model":"claude-opus-5","max_tokens":64,
		"tools":[{"name":"t\u001b[1m","description":"d","input_schema":{"type":"object"}}],
		"system":[{"type":"text","text":` + string(quoted) + `}],
		"messages":[{"role":"user","content":"Go."}]}`
	_, e := explainBody(t, body, nil)
	for format, out := range map[string]string{"text": e.text, "html": e.html} {
		if i := strings.IndexAny(out, "\x1b\x07\u202e\u0085"); i >= 0 {
			t.Errorf("%s has a raw control at %d: %q", format, i, out[max(i-40, 0):min(i+40, len(out))])
		}
	}
	if !strings.Contains(textContent(e.text, 2), `Title\x1b]0;owned\a then \x1b[2J\x1b[31mred\u202e fdp.exe\u0085`) {
		t.Errorf("the text's content: %q", textContent(e.text, 2))
	}
	if !strings.Contains(e.text, `#1 /tools/0: tools, tool t\x1b[1m,`) {
		t.Errorf("the tool's heading is not escaped:\n%s", e.text)
	}
	if !strings.Contains(e.html, `\x1b[2J\x1b[31mred\u202e`) {
		t.Errorf("the page's content is not escaped")
	}
	if c := e.json.Segments[1].Content; c == nil || *c != hostile {
		t.Errorf("JSON content %q, want %q", *c, hostile)
	}
}

// A long content is shortened in text, saying how many bytes are left
// out; JSON and the page have it whole.
func TestExplainShortensLongContentInText(t *testing.T) {
	long := strings.Repeat("Every word here is part of a long system block. ", 80)
	lines := strings.Repeat("one line of a tall block\n", 30)
	quoted, _ := json.Marshal(lines)
	body := `{"model":"claude-opus-5","max_tokens":64,
		"system":[{"type":"text","text":"` + long + `"},{"type":"text","text":` + string(quoted) + `}],
		"messages":[{"role":"user","content":"Go."}]}`
	_, e := explainBody(t, body, nil)
	left := regexp.MustCompile(`\[… ([0-9,]+) more bytes left out\]`)
	for i, whole := range []string{long, lines} {
		shown := textContent(e.text, i+1)
		m := left.FindStringSubmatch(shown)
		if m == nil {
			t.Fatalf("segment %d is not shortened:\n%s", i+1, shown)
		}
		kept := strings.TrimSuffix(shown, "\n"+m[0])
		var n int
		fmt.Sscan(strings.ReplaceAll(m[1], ",", ""), &n)
		// The lines shown are the start of the content, a newline of
		// the content each, and with the bytes left out make it whole.
		if !strings.HasPrefix(whole, kept) || len(kept) > 600 || strings.Count(kept, "\n") > 8 || n == 0 || len(strings.TrimRight(kept, " \n"))+n < len(whole)-1 || len(kept)+n > len(whole) {
			t.Errorf("segment %d: %d bytes shown, %d said left out, of %d", i+1, len(kept), n, len(whole))
		}
		if c := e.json.Segments[i].Content; *c != whole {
			t.Errorf("segment %d: JSON has %d of %d bytes", i+1, len(*c), len(whole))
		}
		if !strings.Contains(details(t, e.html)[fmt.Sprint(i+1)], whole) {
			t.Errorf("segment %d: the page does not have it whole", i+1)
		}
	}
	if s := textContent(e.text, 1); !strings.HasSuffix(strings.Split(s, "\n")[0], " ") {
		t.Errorf("not cut between words: %q", s)
	}
}

// An attributed system prompt is shown fragment by fragment, each its
// own words; where a secret runs across two fragments (Bearer and its
// token), redacting them apart would miss it, so the block is shown
// whole, redacted.
func TestExplainFragments(t *testing.T) {
	reduce := func(a, b string) *manifest.Manifest {
		env := promptloom.Fragment{ID: "env", Source: "env", Bucket: promptloom.After, Body: b,
			Template: &promptloom.Template{Digest: digest.Of("{{ b }}"), Bindings: map[string]digest.Digest{"b": digest.Of(b)}}}
		r, err := promptloom.Reduce([]promptloom.Fragment{promptloom.Primary(a), env}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return manifest.New(r, "agent")
	}
	token := "abcdefghijklmnop0123456789"
	for _, c := range []struct {
		a, b   string
		system string
		apart  bool
	}{
		{"You are terse.", "The date is 2026-12-03.", `"You are terse.\n\nThe date is 2026-12-03."`, true},
		{"You are terse.", "The date is 2026-12-03.", `[{"type":"text","text":"You are terse."},{"type":"text","text":"The date is 2026-12-03."}]`, true},
		{"Send the header Authorization: Bearer", token + " with each call.", `"Send the header Authorization: Bearer\n\n` + token + ` with each call."`, false},
	} {
		sys := reduce(c.a, c.b)
		body := `{"model":"claude-opus-5","max_tokens":64,"system":` + c.system + `,"messages":[{"role":"user","content":"Go."}]}`
		m, err := newManifest([]byte(body), payload.Anthropic, &request.Options{System: sys})
		if err != nil {
			t.Fatal(err)
		}
		if m.Segments[0].Fragment == "" || m.Segments[1].Fragment == "" {
			t.Fatalf("%s: not attributed: %+v", c.system, m.Segments)
		}
		x := cache.Explain(m, nil, nil, false)
		x.Body = []byte(body)
		e := render(t, x)
		s0, s1 := e.json.Segments[0], e.json.Segments[1]
		if c.apart {
			if s0.Content == nil || *s0.Content != c.a || s1.Content == nil || *s1.Content != c.b {
				t.Errorf("%s: fragments %v, %v", c.system, s0.Content, s1.Content)
			}
			continue
		}
		if strings.Contains(e.text, token) || strings.Contains(e.html, token) || s0.Content == nil || strings.Contains(*s0.Content, token) ||
			!strings.Contains(*s0.Content, "<redacted:bearer_token:") || s1.Content != nil || s1.Note == "" {
			t.Errorf("a secret across fragments: %+v %+v\n%s", s0, s1, e.text)
		}
	}
}

// A body that is not the one the manifest was read from shows no content,
// and says why.
func TestExplainOtherBody(t *testing.T) {
	m, err := newManifest([]byte(`{"model":"claude-opus-5","system":"`+systemWords+`","messages":[{"role":"user","content":"Go."}]}`), payload.Anthropic, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, other := range []string{`{"model":"claude-opus-5","system":"Another prompt altogether.","messages":[{"role":"user","content":"Go."}]}`, `not json`} {
		x := cache.Explain(m, nil, nil, false)
		x.Body = []byte(other)
		e := render(t, x)
		if s := e.json.Segments[0]; s.Content != nil || s.Note == "" || strings.Contains(e.text, "Another prompt") {
			t.Errorf("%s: %+v", other, s)
		}
	}
}

// rat is a decimal of the price table, exactly.
func rat(t *testing.T, n json.Number) *big.Rat {
	t.Helper()
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		t.Fatalf("price %q", n)
	}
	return r
}

// price is one model's prices, read from prices.json as this test reads
// the table (not as cache reads it).
type price struct {
	input, output, read *big.Rat
	write               map[string]*big.Rat
}

func tablePrices(t *testing.T, model string) price {
	t.Helper()
	data, err := os.ReadFile("prices.json")
	if err != nil {
		t.Fatal(err)
	}
	var table struct {
		Models []struct {
			Model      string                 `json:"model"`
			Input      json.Number            `json:"input"`
			Output     json.Number            `json:"output"`
			CacheRead  json.Number            `json:"cache_read"`
			CacheWrite map[string]json.Number `json:"cache_write"`
		} `json:"models"`
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(&table); err != nil {
		t.Fatal(err)
	}
	for _, r := range table.Models {
		if r.Model == model {
			p := price{input: rat(t, r.Input), output: rat(t, r.Output), read: rat(t, r.CacheRead), write: map[string]*big.Rat{}}
			for k, v := range r.CacheWrite {
				p.write[k] = rat(t, v)
			}
			return p
		}
	}
	t.Fatalf("no %s in prices.json", model)
	return price{}
}

// micros adds up tokens times prices (dollars per million tokens: so
// micro-dollars a token) and rounds once, half up.
func micros(terms ...any) int64 {
	sum := new(big.Rat)
	for i := 0; i < len(terms); i += 2 {
		sum.Add(sum, new(big.Rat).Mul(new(big.Rat).SetInt64(int64(terms[i].(int))), terms[i+1].(*big.Rat)))
	}
	sum.Add(sum, big.NewRat(1, 2))
	return new(big.Int).Quo(sum.Num(), sum.Denom()).Int64()
}

func usd(m int64) string { return fmt.Sprintf("$%d.%06d", m/1_000_000, m%1_000_000) }

// cumTokens is the manifest's tokens through the segment at path.
func cumTokens(m *request.Manifest, path string) int {
	n := 0
	for _, s := range m.Segments {
		n += s.Tokens
		if s.Path == path {
			return n
		}
	}
	return -1
}

// The request's cost, its write's and its misses' are the tokens times
// the table's prices: a request alone writes at both lifetimes, 1-hour
// first; after the request before it, it reads the tools that request
// cached and writes again the system block it changed, and that miss is
// priced as the write less the read.
func TestExplainCostsFromTheTable(t *testing.T) {
	p := tablePrices(t, "claude-opus-5")
	input, read, write := p.input, p.read, p.write
	sys := func(words string) string {
		return `{"model":"claude-opus-5","max_tokens":64,
		"tools":[{"name":"grep_repo","description":"` + strings.Repeat(toolWords+" ", 60) + `","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral","ttl":"1h"}}],
		"system":[{"type":"text","text":"` + strings.Repeat(words+" ", 40) + `","cache_control":{"type":"ephemeral"}}],
		"messages":[{"role":"user","content":"Where is main?"}]}`
	}
	before, _ := explainBody(t, sys("Be brief."), nil)
	m, e := explainBody(t, sys(systemWords), nil)
	long := cumTokens(m, "/tools/0")
	short := cumTokens(m, "/system/0") - long
	rest := m.Tokens - long - short
	if long < 512 || short <= 0 || rest <= 0 {
		t.Fatalf("the request's shape: %d, %d, %d tokens", long, short, rest)
	}
	c := e.json.Cost
	wantWrite := micros(long, write["1h"], short, write["5m"])
	wantCost := micros(rest, input, long, write["1h"], short, write["5m"])
	if c == nil || !c.Priced || c.Basis != "predicted" || c.Cost != wantCost || c.WriteCost != wantWrite || c.WriteTokens != long+short || c.MissCost != 0 {
		t.Errorf("alone: %+v, want cost %d, write %d", c, wantCost, wantWrite)
	}
	if !strings.Contains(e.text, "cost: "+usd(wantCost)+" ") || !strings.Contains(e.text, "its cache write "+usd(wantWrite)+" ") || !strings.Contains(e.html, usd(wantCost)) {
		t.Errorf("the text does not say %s and %s:\n%s", usd(wantCost), usd(wantWrite), e.text)
	}

	// After the request before it: the tools are read, the system block
	// written again.
	x := cache.Explain(m, before, nil, false)
	x.Body = []byte(sys(systemWords))
	e = render(t, x)
	c = e.json.Cost
	missed := cumTokens(before, "/system/0") - long
	wantMiss := micros(min(missed, short), write["5m"], missed-min(missed, short), input) - micros(missed, read)
	wantCost = micros(long, read, short, write["5m"], rest, input)
	if c == nil || c.Cost != wantCost || c.WriteCost != micros(short, write["5m"]) || c.MissTokens != missed || c.MissCost != wantMiss {
		t.Errorf("after: %+v, want cost %d, miss %d over %d tokens", c, wantCost, wantMiss, missed)
	}
	states := map[string]string{}
	for _, s := range e.json.Segments {
		states[s.Path] = s.Cache + "/" + s.Breakpoint
	}
	if want := map[string]string{"/tools/0": "read/1h", "/system/0": "written/5m", "/messages/0/content": "uncached/"}; fmt.Sprint(states) != fmt.Sprint(want) {
		t.Errorf("cache states %v, want %v", states, want)
	}
	if !strings.Contains(e.text, "its misses "+usd(wantMiss)+" ") || !strings.Contains(e.text, "/system/0 changed") {
		t.Errorf("the text does not say the miss:\n%s", e.text)
	}

	// A recorded call's verdict, priced from what the provider reported.
	at := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	u := &payload.Usage{InputTokens: 17, CacheReadTokens: 1000, CacheWriteTokens: 345, OutputTokens: 80}
	a := cache.Run([]cache.Call{{Name: "one", At: at, Request: before}, {Name: "two", At: at.Add(time.Minute), Request: m, Reported: u}}, nil)
	x = cache.Explain(m, nil, nil, false)
	x.Verdict = &a.Verdicts[1]
	e = render(t, x)
	wantCost = micros(17, input, 1000, read, 345, write["5m"], 80, p.output)
	if c = e.json.Cost; c == nil || c.Basis != "reported" || c.Cost != wantCost || c.WriteCost != micros(345, write["5m"]) || c.WriteTokens != 345 {
		t.Errorf("reported: %+v, want cost %d, write %d", c, wantCost, micros(345, write["5m"]))
	}
	if strings.Contains(e.text, "nothing cached before it") {
		t.Errorf("a recorded call's verdict is called the request's alone:\n%s", e.text)
	}
}

// A model the table does not price is named, and only tokens are shown.
func TestExplainUnpricedModel(t *testing.T) {
	body := `{"model":"claude-nonesuch-9","max_tokens":64,"system":[{"type":"text","text":"` + systemWords + `","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"Go."}]}`
	_, e := explainBody(t, body, nil)
	c := e.json.Cost
	if c == nil || c.Priced || !strings.Contains(c.Unpriced, `"claude-nonesuch-9"`) || c.Cost != 0 || c.WriteCost != 0 {
		t.Errorf("cost %+v", c)
	}
	_, line, _ := strings.Cut(e.text, "\ncost: ")
	line, _, _ = strings.Cut(line, "\n")
	if !strings.Contains(line, `"claude-nonesuch-9"`) || !strings.Contains(line, "tokens only") || strings.Contains(line, "$") {
		t.Errorf("the text's cost line: %q", line)
	}
	if !strings.Contains(e.html, "claude-nonesuch-9&#34; is not in the price table") && !strings.Contains(e.html, "claude-nonesuch-9&quot; is not in the price table") {
		t.Errorf("the page does not name the model")
	}
}

// Whatever a body holds, explaining it with its body, or with another,
// does not panic, and every text of it is escaped for the terminal.
func FuzzExplainBody(f *testing.F) {
	f.Add([]byte(`{"model":"claude-opus-5","system":[{"type":"text","text":"a\u001b[2J"}],"messages":[{"role":"user","content":"hi"}]}`), []byte(`{}`))
	f.Add([]byte(`{"model":"claude-opus-5","tools":[{"name":"x","description":"\u202e","input_schema":{}}],"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`), []byte(`{"model":"claude-opus-5","messages":[]}`))
	f.Add([]byte(`{"model":"gpt-5.6","messages":[{"role":"developer","content":"Bearer abcdefghijklmnop"},{"role":"user","content":"x"}]}`), []byte(`[]`))
	f.Fuzz(func(t *testing.T, body, other []byte) {
		m, err := newManifest(body, payload.Auto, nil)
		if err != nil {
			return
		}
		for _, b := range [][]byte{body, other} {
			x := cache.Explain(m, nil, nil, true)
			x.Body = b
			var text, js, page bytes.Buffer
			if x.WriteText(&text, "f") != nil || x.WriteJSON(&js) != nil || x.WriteHTML(&page, "f") != nil {
				t.Fatal("a write failed")
			}
			if bytes.ContainsAny(text.Bytes(), "\x1b\x07\u202e") {
				t.Errorf("a raw control in the text:\n%s", text.String())
			}
		}
	})
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
