package cli

import (
	"strings"
	"testing"
)

// report shows each proxied call's request, in cache order with its
// redacted text, and its reply, in text and on the page, where it showed
// "(no role)" and an empty fragment table.
func TestReportShowsAProxiedCallsText(t *testing.T) {
	path := proxiedTranscript(t)
	code, out, errOut := run(t, "report", "--transcript", path)
	if code != ExitOK {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	for _, want := range []string{
		"\n    /tools/0 tools tool Bash (~",
		"\n      You are a coding agent. Keep the todo list current.\n",
		"\n    /system/1 system (~17 tokens):\n      Current time: 2026-12-07 09:05. The working directory is /src/app.\n",
		"\n    /tools/0 to /system/0: 2 segment(s) as shown for S/1 (line 2)\n",
		"\n      And the lexer? My key is <redacted:",
		"\n  reply: They pass.\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, proxiedSecret) {
		t.Errorf("the text holds the secret:\n%s", out)
	}
	code, page, errOut := run(t, "report", "--transcript", path, "--format", "html")
	if code != ExitOK {
		t.Fatalf("html: exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"<h2>session S · 3 call(s)</h2>",
		`<div class="segment sec-system" data-path="/system/1" data-section="system">`,
		"<pre>Current time: 2026-12-07 09:05. The working directory is /src/app.</pre>",
		`<div class="reply">They pass.</div>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, "(no role)") || strings.Contains(page, "<th>fragment</th>") || strings.Contains(page, proxiedSecret) {
		t.Errorf("the page shows no role, an empty fragment table, or the secret")
	}
}
