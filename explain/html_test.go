package explain

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/promptloom/promptloom/harn/options"
	"github.com/promptloom/promptloom/internal/testkit/chromiumtest"
)

func TestHTMLRendersInChromium(t *testing.T) {
	bin := chromiumtest.Find(t)
	o, err := options.Parse([]byte(guidanceOpts), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := explainOpts(t, o)
	o.Tools[0].Active = false // todo
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

			dom := chromiumtest.Run(t, bin, file, "--dump-dom")
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
			chromiumtest.Run(t, bin, file, "--window-size=1280,1000", "--screenshot="+shot)
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
