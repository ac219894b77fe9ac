package cli

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/internal/testkit/fakeprovider"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/proxy"
	"github.com/tidwall/gjson"
	"github.com/zeebo/blake3"
)

// proxiedSecret is an Anthropic key a user pasted into a message: the
// transcript keeps it redacted, and nothing printed may hold it.
const proxiedSecret = "sk-ant-api03-" + "Zq7Xw2Lp9Rt4Yv8Bn3Mk6Hj1Gf5Ds0Aa-Qe2Wr7Ty4Ui9Op3As8Df1Gh6Jk0Lz5Xc2Vb7Nm4Qw9Er3Ty8AA"

// proxiedTranscript records a three-call agent conversation through the
// proxy, as a harness in any language would make it (no prompt, so every
// call is unattributed, its body kept redacted): one tool whose long
// description, with the first system block, is cached behind a
// breakpoint; a second system block that says the time, changed at the
// third call; and a message that holds a secret.
func proxiedTranscript(t *testing.T) string {
	t.Helper()
	up := fakeprovider.New(
		fakeprovider.Reply{Text: "It parses.", Usage: fakeprovider.Usage{Input: 40, Output: 3, CacheWrite: 1500}},
		fakeprovider.Reply{Text: "It lexes.", Usage: fakeprovider.Usage{Input: 50, Output: 3, CacheRead: 1500}},
		fakeprovider.Reply{Text: "They pass.", Usage: fakeprovider.Usage{Input: 60, Output: 3, CacheRead: 1500}},
	)
	defer up.Close()
	u, err := url.Parse(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "proxied.jsonl")
	p, err := proxy.New(&proxy.Options{Upstream: u, Open: func(s string) (*journal.Journal, error) {
		return journal.Open(path, &journal.Options{Session: s})
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	tools := []any{map[string]any{
		"name":         "Bash",
		"description":  "Run a shell command in the repository. " + strings.Repeat("Prefer the project's own scripts to ad hoc pipelines. ", 120),
		"input_schema": map[string]any{"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}}},
	}}
	var messages []any
	send := func(now, user, answer string) {
		t.Helper()
		messages = append(messages, map[string]any{"role": "user", "content": user})
		body, err := json.Marshal(map[string]any{
			"model": "claude-sonnet-4-5", "max_tokens": 64, "tools": tools,
			"system": []any{
				map[string]any{"type": "text", "text": "You are a coding agent. Keep the todo list current.", "cache_control": map[string]any{"type": "ephemeral"}},
				map[string]any{"type": "text", "text": "Current time: " + now + ". The working directory is /src/app."},
			},
			"messages": messages,
		})
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequest("POST", srv.URL+"/v1/messages", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(proxy.SessionHeader, "S")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
		messages = append(messages, map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": answer}}})
	}
	send("2026-12-07 09:00", "What does the parser do?", "It parses.")
	send("2026-12-07 09:00", "And the lexer? My key is "+proxiedSecret+", in case.", "It lexes.")
	send("2026-12-07 09:05", "Now run the tests.", "They pass.")
	srv.Close()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// whyAnswer is why --format json's answer on whole requests, read as a
// user's program reads it.
type whyAnswer struct {
	Call      string `json:"call"`
	InRequest int    `json:"in_request"`
	Places    []struct {
		Call      string `json:"call"`
		Path      string `json:"path"`
		Segment   string `json:"segment"`
		Name      string `json:"name"`
		FirstCall string `json:"first_call"`
		FirstLine int    `json:"first_line"`
		Cached    bool   `json:"cached"`
		Calls     int    `json:"calls"`
	} `json:"places"`
}

// whyPlaces runs why --format json and returns its answer.
func whyPlaces(t *testing.T, want int, args ...string) whyAnswer {
	t.Helper()
	code, out, errOut := run(t, append([]string{"why", "--format", "json"}, args...)...)
	if code != want {
		t.Fatalf("why %q: exit %d, want %d: %s%s", args, code, want, out, errOut)
	}
	var got whyAnswer
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("why %q: %v: %s", args, err, out)
	}
	return got
}

// why finds a sentence of a proxied call's system block and of a tool's
// description, each with its path, the call that first sent it, and
// whether the call read it from the cache.
func TestWhyInAProxiedRequest(t *testing.T) {
	path := proxiedTranscript(t)
	type place struct {
		Path, Segment, Name, FirstCall string
		FirstLine                      int
		Cached                         bool
	}
	for _, tt := range []struct {
		text, call string
		want       []place
	}{
		// Behind the breakpoint on /system/0: read from the cache.
		{"Keep the todo list current.", "S/3", []place{{"/system/0", "/system/0", "", "S/1", 2, true}}},
		// The time changed at S/3: a new segment, past the cached prefix.
		{"Current time: 2026-12-07 09:05", "S/3", []place{{"/system/1", "/system/1", "", "S/3", 6, false}}},
		{"Current time", "S/2", []place{{"/system/1", "/system/1", "", "S/1", 2, false}}},
		// A tool's description is a member of its definition.
		{"Run a shell command in the repository.", "S/3", []place{{"/tools/0/description", "/tools/0", "Bash", "S/1", 2, true}}},
		{"It parses.", "S/3", []place{{"/messages/1/content/0", "/messages/1/content/0", "", "S/2", 4, false}}},
	} {
		got := whyPlaces(t, ExitOK, tt.text, "--transcript", path, "--call", tt.call)
		var places []place
		for _, p := range got.Places {
			places = append(places, place{p.Path, p.Segment, p.Name, p.FirstCall, p.FirstLine, p.Cached})
		}
		if got.InRequest != len(tt.want) || !reflect.DeepEqual(places, tt.want) || got.Call != tt.call {
			t.Errorf("why %q --call %s: %d place(s) %+v, want %+v", tt.text, tt.call, got.InRequest, places, tt.want)
		}
	}

	// The text says the same, a row a place.
	code, out, errOut := run(t, "why", "Run a shell command", "--transcript", path, "--call", "S/2")
	if code != ExitOK || !strings.Contains(out, `"Run a shell command" is in the request of call S/2 once:`) ||
		!regexp.MustCompile(`(?m)^/tools/0/description +tools +tool Bash +0-19 +S/1 \(line 2\) +yes$`).MatchString(out) {
		t.Errorf("text: exit %d\n%s%s", code, out, errOut)
	}

	// Without --call, each segment is listed at the call that first sent
	// it, with the calls that sent it.
	got := whyPlaces(t, ExitOK, "What does the parser do?", "--transcript", path)
	if len(got.Places) != 1 || got.Places[0].Call != "S/1" || got.Places[0].Path != "/messages/0/content" || got.Places[0].Calls != 3 {
		t.Errorf("without --call: %+v", got)
	}
	if code, out, _ := run(t, "why", "Prefer the project", "--transcript", path, "--limit", "2"); code != ExitOK ||
		!strings.Contains(out, "is in the requests of "+path+" 120 times") || !strings.Contains(out, "... and 118 more not listed (--limit)") ||
		!regexp.MustCompile(`(?m)^S/1 \(line 2\) +/tools/0/description +tools +tool Bash +39-57 +3 call\(s\)$`).MatchString(out) {
		t.Errorf("without --call, --limit 2: exit %d\n%s", code, out)
	}

	// Nowhere: exit 1. The secret was redacted before it was recorded:
	// it is not there to find, and its placeholder is.
	if got := whyPlaces(t, ExitFail, "no such words", "--transcript", path, "--call", "S/3"); got.InRequest != 0 || len(got.Places) != 0 {
		t.Errorf("nowhere: %+v", got)
	}
	if code, out, _ := run(t, "why", proxiedSecret, "--transcript", path); code != ExitFail || !strings.Contains(out, "is nowhere in the requests of") {
		t.Errorf("the secret: exit %d\n%s", code, out)
	}
	if got := whyPlaces(t, ExitOK, "My key is <redacted:", "--transcript", path, "--call", "S/3"); len(got.Places) != 1 || got.Places[0].Path != "/messages/2/content" || got.Places[0].FirstCall != "S/2" {
		t.Errorf("the placeholder: %+v", got)
	}

	// A call that is not there is named.
	if code, _, errOut := run(t, "why", "x", "--transcript", path, "--call", "S/9"); code != ExitBadArgs || !strings.Contains(errOut, `no call "S/9"`) {
		t.Errorf("no such call: exit %d: %s", code, errOut)
	}
}

// explain --request --format raw writes a recorded call's body as its
// transcript keeps it, redacted, and nothing else's.
func TestExplainRequestRaw(t *testing.T) {
	path := proxiedTranscript(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The body as kept is whatever hashes to the line's receipt: checked
	// with BLAKE3 here, apart from the journal's reader of bodies.
	line, _ := nthLine(data, 4)
	want := gjson.GetBytes(line, "request.body_content_hash").Str
	code, out, errOut := run(t, "explain", "--request", "--format", "raw", "--transcript", path, "--call", "S/2")
	if got := "blake3:" + hex.EncodeToString(sum256([]byte(out))); code != ExitOK || got != want || errOut != "" {
		t.Fatalf("exit %d: %q%s hashes to %s, want %s", code, out, errOut, got, want)
	}
	if strings.Contains(out, proxiedSecret) || !strings.Contains(out, "<redacted:") {
		t.Errorf("the body is not the redacted one: %s", out)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"explain", "--request", "--format", "raw", path}, "give --transcript FILE --call NAME"},
		{[]string{"explain", "--request", "--format", "raw", "--transcript", path}, "give --call NAME"},
		{[]string{"explain", "--request", "--format", "raw", "--lint", "--transcript", path, "--call", "S/2"}, "--lint, --strict and --since do not apply"},
		{[]string{"explain", "--request", "--format", "raw", "--transcript", path, "--call", "S/9"}, `no call "S/9"`},
	} {
		if code, out, errOut := run(t, tt.args...); code != ExitBadArgs || out != "" || !strings.Contains(errOut, tt.want) {
			t.Errorf("%q: exit %d: %s%s, want %q", tt.args, code, out, errOut, tt.want)
		}
	}
}

// A place in a member whose key holds "/" or "~" is named by the RFC 6901
// pointer that reaches it; an array item by its index; a text block by
// its segment's pointer alone, and a tool is never a text block, whatever
// its members are named.
func TestWhyRequestPointers(t *testing.T) {
	var got []string
	tool := payload.Part{Section: "tools", Path: "/tools/2", Name: "t",
		Raw: []byte(`{"name":"t","text":"find me not in a text block","input_schema":{"properties":{"a/b~c":{"description":"find me"},"list":{"enum":["x","find me too"]}}}}`)}
	occurrences(tool, "find me", func(path string, start int) { got = append(got, fmt.Sprintf("%s@%d", path, start)) })
	text := payload.Part{Section: "messages", Path: "/messages/1/content/0", Type: "text", Raw: []byte(`{"type":"text","text":"we find me, find me"}`)}
	occurrences(text, "find me", func(path string, start int) { got = append(got, fmt.Sprintf("%s@%d", path, start)) })
	want := []string{
		"/tools/2/text@0",
		"/tools/2/input_schema/properties/a~1b~0c/description@0",
		"/tools/2/input_schema/properties/list/enum/1@0",
		"/messages/1/content/0@3", "/messages/1/content/0@12",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// sum256 is BLAKE3-256 of b, from the library the digest package does not
// wrap here, so the check does not lean on the code it checks.
func sum256(b []byte) []byte {
	s := blake3.Sum256(b)
	return s[:]
}
