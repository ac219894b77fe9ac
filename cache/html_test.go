package cache_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/internal/testkit/chromiumtest"
	"github.com/promptloom/promptloom/internal/testkit/fakecache"
	"github.com/promptloom/promptloom/payload"
)

// explain --request's page, as Chromium builds it: a row a segment in
// cache order, shaded by section, each with its path and origin on hover,
// the breakpoints listed, and each segment's content folded under its
// heading, escaped.
func TestRequestPageInChromium(t *testing.T) {
	bin := chromiumtest.Find(t)
	a := fakecache.NewAgent()
	body := a.Turn("Where is main? <script>alert(1)</script>")
	m, err := newManifest(body, payload.Anthropic, nil)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "request.html")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	x := cache.Explain(m, nil, nil, true)
	x.Body = body
	if err := x.WriteHTML(f, "body.json"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	dom := string(chromiumtest.Run(t, bin, file, "--dump-dom"))
	rows := regexp.MustCompile(`<tr class="(tools|system|messages)( bp)?" title="([^"]*)"`).FindAllStringSubmatch(dom, -1)
	if len(rows) != len(m.Segments) {
		t.Fatalf("%d segment rows in the DOM, %d segments", len(rows), len(m.Segments))
	}
	for i, r := range rows {
		s := m.Segments[i]
		if r[1] != s.Section || (r[2] != "") != (s.Cache != nil) || !strings.HasPrefix(r[3], s.Path) || !strings.Contains(r[3], s.Digest.String()) {
			t.Errorf("row %d: %q for %s %s", i, r[0], s.Section, s.Path)
		}
	}
	if !strings.Contains(rows[3][3], "tool Bash") {
		t.Errorf("the Bash tool's row has no origin on hover: %q", rows[3][3])
	}
	if strings.Count(dom, `<li><code>/`) != 3 || strings.Contains(dom, "<script>alert") {
		t.Errorf("breakpoints or escaping: %s", dom)
	}
	folds := regexp.MustCompile(`(?s)<details id="segment-(\d+)" class="(tools|system|messages)( bp)?"><summary>(.*?)</summary>(.*?)</details>`).FindAllStringSubmatch(dom, -1)
	if len(folds) != len(m.Segments) {
		t.Fatalf("%d segments folded in the DOM, %d segments", len(folds), len(m.Segments))
	}
	for i, d := range folds {
		s := m.Segments[i]
		if d[1] != fmt.Sprint(i+1) || d[2] != s.Section || !strings.Contains(d[4], s.Path) || !strings.Contains(d[5], "<pre") {
			t.Errorf("fold %d: %q", i, d[0])
		}
	}
	if !strings.Contains(folds[3][5], "Tool 3 does its one thing well.") || !strings.Contains(folds[13][5], "Read a file before you edit it.") ||
		!strings.Contains(folds[len(folds)-1][5], "Where is main? &lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("a tool's, a system block's or the message's words are not in their folds")
	}
}
