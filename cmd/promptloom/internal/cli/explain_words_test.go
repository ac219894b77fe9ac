package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// explain --request shows each segment's words: a recorded call's from
// the transcript's body, with the figures cache gives the call in its run
// (one figure for one call), and a body file's redacted.
func TestExplainRequestShowsTheWords(t *testing.T) {
	path := agentTranscript(t)
	code, out, errOut := run(t, "explain", "--request", "--transcript", path, "--call", "turn-4")
	if code != ExitOK || !strings.Contains(out, "The date is 2026-12-03T10:02:00Z.") || !strings.Contains(out, "Read a file before you edit it.") {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	code, js, _ := run(t, "explain", "--request", "--transcript", path, "--call", "turn-4", "--format", "json")
	var x struct {
		Verdict struct {
			Predicted struct {
				Write int `json:"write_tokens"`
			} `json:"predicted"`
		} `json:"verdict"`
	}
	if code != ExitOK || json.Unmarshal([]byte(js), &x) != nil {
		t.Fatalf("json: exit %d: %s", code, js)
	}
	_, cj, _ := run(t, "cache", "--transcript", path, "--call", "turn-4", "--format", "json")
	var an struct {
		Calls []struct {
			Predicted struct {
				Write int `json:"write_tokens"`
			} `json:"predicted"`
		} `json:"calls"`
	}
	if json.Unmarshal([]byte(cj), &an) != nil || len(an.Calls) != 1 || an.Calls[0].Predicted.Write != x.Verdict.Predicted.Write || x.Verdict.Predicted.Write == 0 {
		t.Errorf("explain predicts a write of %d, cache of %+v", x.Verdict.Predicted.Write, an.Calls)
	}
	// A body file's words are shown redacted.
	secret := "ghp_" + strings.Repeat("A1b2C3d4", 5)
	body := filepath.Join(t.TempDir(), "body.json")
	if err := os.WriteFile(body, []byte(`{"model":"claude-sonnet-4-5","max_tokens":8,"system":"You are careful. The token is `+secret+`.","messages":[{"role":"user","content":"hi"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "json", "html"} {
		code, out, errOut := run(t, "explain", "--request", "--format", format, body)
		if code != ExitOK || !strings.Contains(out, "You are careful.") || strings.Contains(out, secret) || !strings.Contains(out, "redacted") {
			t.Errorf("%s: exit %d: %s%s", format, code, out, errOut)
		}
	}
}
