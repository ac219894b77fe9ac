package explain

import (
	"bytes"
	"context"

	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom/options"
)

// chromiumFlags are those a headless Chromium needs on a closed, root-run
// machine: no sandbox, no GPU, no background connections.
var chromiumFlags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--enable-logging=stderr", "--v=0",
}

func findChromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium binary on PATH: the HTML page is not rendered (.ci/run installs Debian's chromium)")
	return ""
}

// runChromium loads file and returns what Chromium wrote to stdout and
// stderr, failing on an uncaught script error in the console.
func runChromium(t *testing.T, bin, file string, extra ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append(append([]string{}, chromiumFlags...), "--user-data-dir="+t.TempDir())
	args = append(append(args, extra...), "file://"+file)
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

func TestHTMLRendersInChromium(t *testing.T) {
	bin := findChromium(t)
	o, err := options.Parse([]byte(guidanceOpts))
	if err != nil {
		t.Fatal(err)
	}
	a := explainOpts(t, o)
	if err := o.WithoutTool("todo"); err != nil {
		t.Fatal(err)
	}
	b := explainOpts(t, o)

	pages := map[string]func(*bytes.Buffer) error{
		"explain.html": func(w *bytes.Buffer) error { return a.WriteHTML(w, "opts.json") },
		"diff.html":    func(w *bytes.Buffer) error { return Diff(a, b, "a.json", "b.json").WriteHTML(w, "a.json", "b.json") },
	}
	for name, write := range pages {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := write(&buf); err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(buf.Bytes(), []byte("http://")) || bytes.Contains(buf.Bytes(), []byte("https://")) {
				t.Error("the page refers to the network; it must be self-contained")
			}
			file := filepath.Join(t.TempDir(), name)
			if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}

			dom := runChromium(t, bin, file, "--dump-dom")
			// The page's script marks the body when it has run to the end.
			if m := regexp.MustCompile(`data-ready="(\d+)"`).FindSubmatch(dom); m == nil || string(m[1]) == "0" {
				t.Errorf("the page's script did not run to completion (no data-ready mark)")
			}
			for _, r := range append(append([]Row{}, a.Fragments...), b.Fragments...) {
				if !bytes.Contains(dom, []byte(`data-id="`+r.ID+`"`)) {
					t.Errorf("fragment %s is not in the rendered DOM", r.ID)
				}
			}

			shot := filepath.Join(t.TempDir(), "shot.png")
			runChromium(t, bin, file, "--window-size=1280,1000", "--screenshot="+shot)
			if n := distinctColors(t, shot); n < 8 {
				t.Errorf("the screenshot has %d colours; the page looks blank", n)
			}
		})
	}
}

func distinctColors(t *testing.T, file string) int {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[[4]uint32]bool{}
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 4 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 4 {
			r, g, b, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, b, a}] = true
		}
	}
	return len(seen)
}
