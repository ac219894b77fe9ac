package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/payload"
)

// diff --without-tool's cache figure follows the provider's order: where
// the tools come before the system prompt (Anthropic, OpenAI), a tool
// removed leaves nothing of B's prompt to read from A's cache; where the
// system prompt comes first (Gemini) the system prompt's figure holds;
// with no provider known, diff says what its figure assumes.
func TestDiffCacheFollowsTheProvidersOrder(t *testing.T) {
	opts := filepath.Join(t.TempDir(), "opts.json")
	if err := os.WriteFile(opts, []byte(whyOptions), 0o644); err != nil {
		t.Fatal(err)
	}
	const (
		systemOnly = "cache: 79 bytes in common from the start; first change in tool:todo.guidance; B re-sends 18 bytes"
		nothing    = "cache: 0 bytes in common from the start; first change in tool:todo.guidance; B re-sends 97 bytes"
	)
	for _, c := range []struct {
		flags          []string
		figure, stderr string
	}{
		{nil, systemOnly, "give --provider or --model"},
		{[]string{"--provider", "anthropic"}, nothing, "anthropic reads the tools before the system prompt: nothing of B is read from A's cache (the system prompts alone share 79 bytes)"},
		{[]string{"--model", "claude-sonnet-4-5"}, nothing, "anthropic reads the tools before the system prompt"},
		{[]string{"--provider", "openai-responses"}, nothing, "openai-responses reads the tools before the system prompt"},
		{[]string{"--model", "gpt-5.6"}, nothing, "openai reads the tools before the system prompt"},
		{[]string{"--provider", "gemini"}, systemOnly, "gemini reads the system prompt before the tools, so the cache figure holds"},
		{[]string{"--model", "my-own-model"}, systemOnly, "give --provider or --model"},
	} {
		args := append([]string{"diff", opts, "--without-tool", "todo"}, c.flags...)
		code, out, errOut := run(t, args...)
		if code != ExitFail || !strings.Contains(out, "\n"+c.figure+"\n") || !strings.Contains(errOut, c.stderr) {
			t.Errorf("%v: exit %d\n%s%s\nwant %q and %q", c.flags, code, out, errOut, c.figure, c.stderr)
		}
	}
	// The JSON and the exit say the same: identical prompts, but a tool
	// without guidance removed, is a request that shares nothing.
	noGuidance := strings.Replace(whyOptions, `"tools": [{"name": "todo", "guidance": "Keep the todo list current."}]`,
		`"tools": [{"name": "todo", "guidance": "Keep the todo list current."}, {"name": "grep"}]`, 1)
	if noGuidance == whyOptions {
		t.Fatal("the options have moved")
	}
	if err := os.WriteFile(opts, []byte(noGuidance), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "diff", "--format", "json", opts, "--without-tool", "grep", "--provider", "anthropic")
	var d struct {
		Common    int  `json:"common_prefix_bytes"`
		Resend    int  `json:"resend_bytes"`
		Identical bool `json:"identical"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil || code != ExitFail || d.Common != 0 || d.Resend != 126 || d.Identical ||
		!strings.Contains(errOut, "(the system prompts are identical)") {
		t.Errorf("identical prompts, one tool fewer: exit %d %+v %v\n%s", code, d, err, errOut)
	}
	if code, _, errOut := run(t, "diff", opts, "--without-tool", "grep"); code != ExitOK || !strings.Contains(errOut, "changes nothing in the system prompt (the tools sent still differ)") {
		t.Errorf("no provider: exit %d %s", code, errOut)
	}
	for _, bad := range [][]string{{"--provider", "mistral"}, {"--provider", "gemini", "--model", "claude-sonnet-4-5"}} {
		if code, _, errOut := run(t, append([]string{"diff", opts, "--without-tool", "todo"}, bad...)...); code != ExitBadArgs || !strings.Contains(errOut, bad[1]) {
			t.Errorf("%v: exit %d %s", bad, code, errOut)
		}
	}
}

// toolsFirst is the request manifest's own cache order, provider by
// provider: whether a body's first segment is a tool when it has both
// tools and a system prompt.
func TestToolsFirstIsTheRequestOrder(t *testing.T) {
	for p, body := range map[payload.Provider]string{
		payload.Anthropic:       `{"model":"m","system":"s","tools":[{"name":"t"}],"messages":[{"role":"user","content":"u"}]}`,
		payload.OpenAIChat:      `{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}],"tools":[{"type":"function","function":{"name":"t"}}]}`,
		payload.OpenAIResponses: `{"model":"m","instructions":"s","input":"u","tools":[{"type":"function","name":"t"}]}`,
		payload.Gemini:          `{"systemInstruction":{"parts":[{"text":"s"}]},"contents":[{"role":"user","parts":[{"text":"u"}]}],"tools":[{"functionDeclarations":[{"name":"t"}]}]}`,
	} {
		m, err := newManifest([]byte(body), p, nil)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if got := m.Segments[0].Section == "tools"; got != toolsFirst(p) {
			t.Errorf("%s: the request's first segment is in %s; toolsFirst says %v", p, m.Segments[0].Section, toolsFirst(p))
		}
	}
}
