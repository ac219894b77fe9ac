package cache_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/internal/testkit/chromiumtest"
	"github.com/promptloom/promptloom/internal/testkit/fakecache"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/request"
)

// explain --request's page, as Chromium builds it: a row a segment in
// cache order, shaded by section, each with its path and origin on hover,
// the breakpoints listed.
func TestRequestPageInChromium(t *testing.T) {
	bin := chromiumtest.Find(t)
	a := fakecache.NewAgent()
	m, err := request.New(a.Turn("Where is main? <script>alert(1)</script>"), payload.Anthropic, nil)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "request.html")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := cache.Explain(m, nil, nil, true).WriteHTML(f, "body.json"); err != nil {
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
}
