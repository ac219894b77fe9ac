package proxy_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/internal/testkit/fakeprovider"
	"github.com/promptloom/promptloom/proxy"
)

// The official TypeScript SDKs through the proxy, each on the fake
// provider: two turns with a tool call, a stream, a retry after a 429, a
// stale prompt refused. The SDKs come from npm: .ci/run installs them
// into a directory it names in PROMPTLOOM_TEST_NODE_MODULES (its
// node_modules), and without node or that directory these tests skip,
// saying so.
func TestTypeScriptSDKs(t *testing.T) {
	dir := os.Getenv("PROMPTLOOM_TEST_NODE_MODULES")
	node, err := exec.LookPath("node")
	switch {
	case err != nil:
		t.Skip("no node on PATH: the TypeScript SDKs are not run (.ci/run installs Debian's nodejs)")
	case dir == "":
		t.Skip("PROMPTLOOM_TEST_NODE_MODULES is not set: the TypeScript SDKs are not run (.ci/run installs them from npm)")
	}
	x, err := explain.Explain([]byte(`{"system":"You are terse."}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, sdk := range []struct{ name, pkg, script string }{
		{"anthropic", "@anthropic-ai/sdk", "anthropic.mjs"},
		{"openai", "openai", "openai.mjs"},
		{"genai", "@google/genai", "genai.mjs"},
	} {
		t.Run(sdk.name, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(dir, "node_modules", sdk.pkg, "package.json")); err != nil {
				t.Skipf("%s is not installed in %s", sdk.pkg, dir)
			}
			g := newRig(t, &proxy.Options{Prompt: func(string) (*explain.Explanation, error) { return x, nil }})
			g.up.Push(
				fakeprovider.Reply{ToolCalls: []fakeprovider.ToolCall{{ID: "call_1", Name: "read_file", Arguments: `{"path":"main.go"}`}}},
				fakeprovider.Reply{Text: "main.go starts the server."},
				fakeprovider.Reply{Text: strings.Repeat("streamed ", 8)},
				fakeprovider.Reply{Status: 429, Header: fakeprovider.RetryAfter(10 * time.Millisecond)},
				fakeprovider.Reply{Text: "after the retry"},
			)
			// ESM resolves packages from the script's directory: the script
			// runs from inside the SDKs' directory.
			src, err := os.ReadFile(filepath.Join("testdata", "node", sdk.script))
			if err != nil {
				t.Fatal(err)
			}
			script := filepath.Join(dir, "promptloom-"+sdk.name+"-"+filepath.Base(t.TempDir())+".mjs")
			if err := os.WriteFile(script, src, 0o644); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(script)
			const key = "sk-ant-api03-nodeSDKkeynodeSDKkeynodeSDKkeynodeSDKkey"
			cmd := exec.Command(node, script)
			cmd.Env = append(os.Environ(), "BASE_URL="+g.srv.URL, "API_KEY="+key)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("node %s: %v\n%s", sdk.script, err, stderr.String())
			}
			var got struct {
				Tool struct {
					Name  string
					Input map[string]any
				}
				Turn2, Stream, Retry string
				Stale                struct {
					Status  int
					Type    string
					Error   string
					Message string
				}
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if got.Tool.Name != "read_file" || got.Tool.Input["path"] != "main.go" || got.Turn2 != "main.go starts the server." ||
				got.Stream != strings.Repeat("streamed ", 8) || got.Retry != "after the retry" {
				t.Errorf("the SDK returned %s", out)
			}
			if got.Stale.Status != 400 || !strings.Contains(got.Stale.Message, "promptloom refused") {
				t.Errorf("the stale prompt: %+v", got.Stale)
			}
			// Five requests reached the upstream: two turns, a stream, the
			// 429 and its retry; the stale one never left.
			if n := len(g.up.Requests()); n != 5 {
				t.Errorf("%d requests at the upstream, want 5", n)
			}
			rep, data := g.closeAndVerify(t)
			ok, _, failed := rep.Counts()
			if len(rep.Calls) != 5 || ok != 5 || failed != 0 || rep.Unattributed != 0 {
				t.Errorf("%d calls: %d ok, %d failed, %d unattributed", len(rep.Calls), ok, failed, rep.Unattributed)
			}
			if !bytes.Contains(data, []byte("429")) {
				t.Error("the 429 is not in the transcript")
			}
			if bytes.Contains(data, []byte(key)) {
				t.Error("the API key reached the transcript")
			}
		})
	}
}
