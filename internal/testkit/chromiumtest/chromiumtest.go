// Package chromiumtest renders self-contained HTML pages in a real headless
// Chromium for tests: explain's pages and the journal's run report are
// checked by what the browser builds from them, not by string matching
// alone. Without a chromium binary on PATH the calling test is skipped, with
// a message naming what .ci/run installs.
package chromiumtest

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// flags are those a headless Chromium needs on a closed, root-run machine:
// no sandbox, no GPU, no background connections.
var flags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--enable-logging=stderr", "--v=0",
}

// Find returns the path of a Chromium binary, or skips t.
func Find(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium binary on PATH: the HTML page is not rendered (.ci/run installs Debian's chromium)")
	return ""
}

// Run loads file in the Chromium at bin with the extra flags (--dump-dom,
// --screenshot=...) and returns what it wrote to stdout. An uncaught script
// error in the page's console fails t.
func Run(t testing.TB, bin, file string, extra ...string) []byte {
	t.Helper()
	return RunURL(t, bin, "file://"+file, extra...)
}

// RunURL is Run for a page served over HTTP (a live page, whose scripts
// connect back to its server).
func RunURL(t testing.TB, bin, url string, extra ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append(append([]string{}, flags...), "--user-data-dir="+t.TempDir())
	args = append(append(args, extra...), url)
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, ":CONSOLE") && (strings.Contains(line, "Uncaught") || strings.Contains(line, "Error")) {
			t.Errorf("script error in the page: %s", line)
		}
	}
	return stdout.Bytes()
}
