package explain

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// No credential value can reach a fragment or a manifest: with real
// credential variables set in the environment (and a token in a git remote),
// the values appear nowhere in the explanation, its traces, the HTML page or
// the manifest; only the variables' names do.
func TestNoCredentialValueReachesThePrompt(t *testing.T) {
	secrets := map[string]string{
		"GITHUB_TOKEN":      "ghp_valueONE1234567890abcdefghijklmnopqrstu",
		"OPENAI_API_KEY":    "sk-valueTWO1234567890abcdefghijkl",
		"AWS_ACCESS_KEY_ID": "AKIAVALUETHREE000000",
		"HF_TOKEN":          "hf_valueFOUR1234567890abcdef",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".git"), 0o755)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/x\n"), 0o644)
	os.WriteFile(filepath.Join(dir, ".git", "config"),
		[]byte("[remote \"origin\"]\n\turl = https://bot:valueFIVEremote@github.com/acme/x.git\n"), 0o644)

	e, err := Explain([]byte(`{"system": "base"}`), &Options{Project: dir, EnvHas: nil})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	e.WriteJSON(&out)
	e.WriteText(&out)
	e.WriteTraces(&out)
	e.WriteHTML(&out, "x")
	m, _ := e.Manifest.Canonical()
	out.Write(m)
	for _, v := range append(mapValues(secrets), "valueFIVEremote") {
		for _, probe := range []string{v, v[len(v)/2:]} {
			if strings.Contains(out.String(), probe) {
				t.Errorf("credential value %q leaked", probe)
			}
		}
	}
	for name := range secrets {
		if !strings.Contains(e.System, "$"+name) {
			t.Errorf("the prompt does not name $%s", name)
		}
	}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
