package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/promptloom/promptloom/internal/testkit/chromiumtest"
	"github.com/promptloom/promptloom/internal/testkit/fakecache"
	"github.com/promptloom/promptloom/proxy"
)

// The live page in Chromium: the calls made before it loaded are its rows,
// and a call made once it is connected arrives by its events and becomes
// a row, by the page's own script.
func TestLivePageInChromium(t *testing.T) {
	bin := chromiumtest.Find(t)
	g := newRig(t, nil)
	a := fakecache.NewAgent()
	g.post(t, "/v1/messages", a.Turn("hi"))
	var once sync.Once
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/promptloom/events" {
			g.p.ServeHTTP(w, r)
			return
		}
		first := false
		once.Do(func() { first = true })
		if !first {
			// A reconnection: 204 tells an EventSource to stop, so the
			// browser goes idle and its virtual time runs out.
			w.WriteHeader(http.StatusNoContent)
			return
		}
		// The page has connected: make a call it must show, and end the
		// stream once its event is written.
		go func() {
			resp, err := http.Post(g.srv.URL+"/v1/messages", "application/json", bytes.NewReader(fakecache.NewAgent().Turn("a live one")))
			if err == nil {
				resp.Body.Close()
			}
		}()
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		g.p.ServeHTTP(&untilEvent{ResponseWriter: w, done: cancel, want: `"seq":2`}, r.WithContext(ctx))
	}))
	defer live.Close()
	dom := string(chromiumtest.RunURL(t, bin, live.URL+"/promptloom/", "--dump-dom", "--virtual-time-budget=10000"))
	if !strings.Contains(dom, `id="call-1"`) || !strings.Contains(dom, `id="call-2"`) {
		t.Fatalf("the page does not show both calls:\n%s", dom)
	}
}

// untilEvent ends an event stream (done) once an event holding want, done
// and flushed, has gone out.
type untilEvent struct {
	http.ResponseWriter
	done func()
	want string
	seen bool
}

func (u *untilEvent) Write(p []byte) (int, error) {
	u.seen = u.seen || strings.Contains(string(p), u.want)
	return u.ResponseWriter.Write(p)
}

func (u *untilEvent) Flush() {
	u.ResponseWriter.(http.Flusher).Flush()
	if u.seen {
		u.done()
	}
}

// screenshots, when set, has TestThePageInChromium write its screenshots
// to docs/images, as docs/page.md shows them (go test ./proxy -run
// ThePageInChromium -args -screenshots).
var screenshots = flag.Bool("screenshots", false, "write the page's screenshots to docs/images")

// An agent's run through the proxy as the docs show it: two sessions,
// the first with a tool's description changed at its fourth turn and the
// date in its system prompt at its sixth, each a miss the cache blames.
func agentRun(t *testing.T, g *rig) {
	t.Helper()
	a := fakecache.NewAgent()
	a.Model = "claude-sonnet-5" // one the price table prices
	for i, turn := range []string{"Read main.go and tell me what it does.", "Now add a --verbose flag.", "Run the tests.",
		"Fix the failing test.", "Update the README.", "Commit the change."} {
		switch i {
		case 3:
			a.Tools[3]["description"] = "Runs a shell command in the working directory, with a timeout of 120 seconds."
		case 5:
			a.System[2]["text"] = "The date is 2026-12-03T10:05:00Z. The working directory is /src/app."
		}
		if code, out := g.post(t, "/v1/messages", a.Turn(turn), "Promptloom-Call", fmt.Sprintf("coder/turn-%d", i+1), "Promptloom-Session", "coder"); code != 200 {
			t.Fatal(code, out)
		}
		a.Answer("Done: " + strings.ToLower(turn))
	}
	b := fakecache.NewAgent()
	b.Tools = b.Tools[:4]
	for i, turn := range []string{"Summarise the open issues.", "Which one is oldest?", "Draft a reply to it."} {
		if code, out := g.post(t, "/v1/messages", b.Turn(turn), "Promptloom-Call", fmt.Sprintf("triage/turn-%d", i+1), "Promptloom-Session", "triage"); code != 200 {
			t.Fatal(code, out)
		}
		b.Answer("Noted.")
	}
}

// The page in Chromium: every call's bar and every session's plot are in
// the document the browser builds, the blamed segments marked, and a
// call's page shows its words and its diff against the call before it.
func TestThePageInChromium(t *testing.T) {
	bin := chromiumtest.Find(t)
	g := newRig(t, &proxy.Options{Base: diagnose(map[string]string{
		"Fix the failing test.": "tools_changed", "Commit the change.": "system_changed"})})
	agentRun(t, g)
	// The events answered 204: an EventSource stops, and the browser goes
	// idle with the page as it loaded.
	still := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/promptloom/events" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		g.p.ServeHTTP(w, r)
	}))
	defer still.Close()
	dom := string(chromiumtest.RunURL(t, bin, still.URL+"/promptloom/", "--dump-dom", "--virtual-time-budget=5000"))
	if n := strings.Count(dom, `<svg class="bar"`); n != 9 {
		t.Errorf("%d bars in the page Chromium built, want 9", n)
	}
	if n := strings.Count(dom, `<circle class="pt"`); n != 9 {
		t.Errorf("%d points in the plots, want 9", n)
	}
	if n := strings.Count(dom, `class="blame-mark"`); n < 2 {
		t.Errorf("%d blamed segments marked, want the tool's and the system block's", n)
	}
	if !strings.Contains(dom, "the provider says tools_changed") || !strings.Contains(dom, "they agree") {
		t.Errorf("the provider's verdict is not beside promptloom's blame:\n%s", dom)
	}
	call := string(chromiumtest.RunURL(t, bin, still.URL+"/promptloom/call/4", "--dump-dom"))
	for _, want := range []string{"You are a careful coding agent.", `id="diff"`, "Runs a shell command in the working directory", `class="d changed"`} {
		if !strings.Contains(call, want) {
			t.Errorf("the call's page lacks %q", want)
		}
	}
	dir := t.TempDir()
	if *screenshots {
		dir = filepath.Join("..", "docs", "images")
	}
	for _, s := range []struct{ file, url, size string }{
		{"page-overview.png", "/promptloom/", "1440,820"},
		{"page-call-diff.png", "/promptloom/call/4", "1000,720"},
	} {
		path := filepath.Join(dir, s.file)
		chromiumtest.RunURL(t, bin, still.URL+s.url, "--screenshot="+path, "--window-size="+s.size, "--hide-scrollbars", "--virtual-time-budget=5000")
		shrink(t, path)
	}
}

// shrink writes the screenshot at path again in 256 colours: the page is
// flat colour and text, and the docs' images stay a few tens of KB.
func shrink(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatalf("the screenshot %s: %v", path, err)
	}
	b := img.Bounds()
	if b.Dx() < 100 || b.Dy() < 100 {
		t.Fatalf("the screenshot %s is %v", path, b)
	}
	pal := image.NewPaletted(b, popular(img, 96))
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			pal.Set(x, y, img.At(x, y))
		}
	}
	var out bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&out, pal); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// diagnose is the transport to the upstream, with the provider's cache
// diagnostics added to the answer of each request whose newest user
// block is a key of reasons: the reason as Anthropic gives it (the fake
// provider sends none).
func diagnose(reasons map[string]string) http.RoundTripper {
	return roundTrip(func(r *http.Request) (*http.Response, error) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err != nil {
			return resp, err
		}
		for key, reason := range reasons {
			// The newest user block, which holds the breakpoint.
			if !bytes.Contains(body, []byte(`{"type":"ephemeral"},"text":"`+key+`"`)) {
				continue
			}
			answer, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			d, _ := json.Marshal(map[string]any{"cache_miss_reason": map[string]any{"type": reason, "cache_missed_input_tokens": 2000}})
			answer = append([]byte(`{"diagnostics":`+string(d)+`,`), answer[1:]...)
			resp.Body = io.NopCloser(bytes.NewReader(answer))
			resp.ContentLength = int64(len(answer))
			resp.Header.Set("Content-Length", strconv.Itoa(len(answer)))
		}
		return resp, nil
	})
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// popular is img's n most frequent colours, a palette in which a page's
// flat colours stay as they are and its text's edges take the nearest.
func popular(img image.Image, n int) color.Palette {
	count := map[color.RGBA]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			count[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)]++
		}
	}
	cs := make([]color.RGBA, 0, len(count))
	for c := range count {
		cs = append(cs, c)
	}
	slices.SortFunc(cs, func(a, b color.RGBA) int {
		if d := count[b] - count[a]; d != 0 {
			return d
		}
		return int(a.R)<<16 | int(a.G)<<8 | int(a.B) - (int(b.R)<<16 | int(b.G)<<8 | int(b.B))
	})
	var pal color.Palette
	for _, c := range cs[:min(n, len(cs))] {
		pal = append(pal, c)
	}
	return pal
}
