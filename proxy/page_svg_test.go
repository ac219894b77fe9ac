package proxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/internal/testkit/fakecache"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/proxy"
	"github.com/promptloom/promptloom/request"
)

// svgNode is an SVG element as the tests read it back.
type svgNode struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Nodes   []svgNode  `xml:",any"`
	Text    string     `xml:",chardata"`
}

func (n svgNode) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func (n svgNode) num(t *testing.T, name string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(n.attr(name), 64)
	if err != nil {
		t.Fatalf("<%s %s=%q>: %v", n.XMLName.Local, name, n.attr(name), err)
	}
	return f
}

// all is every element under n (n too) whose class holds class.
func (n svgNode) all(class string) []svgNode {
	var out []svgNode
	if strings.Contains(" "+n.attr("class")+" ", " "+class+" ") {
		out = append(out, n)
	}
	for _, c := range n.Nodes {
		out = append(out, c.all(class)...)
	}
	return out
}

// svgIn parses the first <svg> element of class class in html: the page's
// markup, read as XML, which fails on anything unescaped.
func svgIn(t *testing.T, html, class string) svgNode {
	t.Helper()
	m := regexp.MustCompile(`(?s)<svg class="` + class + `".*?</svg>`).FindString(html)
	if m == "" {
		t.Fatalf("no <svg class=%q> in:\n%s", class, html)
	}
	var n svgNode
	if err := xml.Unmarshal([]byte(m), &n); err != nil {
		t.Fatalf("the SVG does not parse: %v\n%s", err, m)
	}
	return n
}

// rowIn is the overview's row of call seq.
func rowIn(t *testing.T, page string, seq int) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<tr id="call-` + strconv.Itoa(seq) + `".*?</tr>`).FindString(page)
	if m == "" {
		t.Fatalf("no row for call %d in:\n%s", seq, page)
	}
	return m
}

type callRow struct {
	Seq                     int
	Call                    string
	Read, Written, Uncached int
	Blame                   string
}

func callRows(t *testing.T, g *rig) []callRow {
	t.Helper()
	var rows []callRow
	if err := json.Unmarshal([]byte(get(t, g.srv.URL+"/promptloom/calls.json")), &rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

const near = 0.011 // the SVG's coordinates have two decimals

// Each call's bar draws its predicted read, write and uncached tokens,
// left to right, each as wide as its share of the bar; the blamed
// segment is marked where the request's tokens put it.
func TestTheBarsAreToScale(t *testing.T) {
	g := newRig(t, nil)
	a := fakecache.NewAgent()
	var bodies [][]byte
	for i, turn := range []string{"one", "two", "three"} {
		if i == 2 {
			a.Tools[3]["description"] = "changed"
		}
		body := a.Turn(turn)
		if i == 2 {
			// No breakpoint on the newest message: what follows the
			// system prompt's is not cached.
			delete(a.Messages[len(a.Messages)-1]["content"].([]map[string]any)[0], "cache_control")
			body, _ = json.Marshal(map[string]any{"model": a.Model, "max_tokens": 1024, "tools": a.Tools, "system": a.System, "messages": a.Messages})
		}
		bodies = append(bodies, body)
		g.post(t, "/v1/messages", bodies[i], "Promptloom-Session", "s")
		a.Answer("ok")
	}
	rows := callRows(t, g)
	page := get(t, g.srv.URL+"/promptloom/")
	if len(rows) != 3 {
		t.Fatalf("%d rows", len(rows))
	}
	seen := map[string]bool{}
	for _, r := range rows {
		bar := svgIn(t, rowIn(t, page, r.Seq), "bar")
		width := bar.num(t, "width")
		total := float64(r.Read + r.Written + r.Uncached)
		x := 0.0
		for _, s := range []struct {
			class  string
			tokens int
		}{{"read", r.Read}, {"written", r.Written}, {"uncached", r.Uncached}} {
			rects := bar.all("state")
			var rect *svgNode
			for i := range rects {
				if strings.Contains(rects[i].attr("class"), s.class) {
					rect = &rects[i]
				}
			}
			if rect == nil {
				t.Fatalf("call %d: no %s rect", r.Seq, s.class)
			}
			want := width * float64(s.tokens) / total
			if w := rect.num(t, "width"); math.Abs(w-want) > near {
				t.Errorf("call %d: %s is %.2f wide, want %.2f (%d of %.0f tokens)", r.Seq, s.class, w, want, s.tokens, total)
			}
			if got := rect.num(t, "x"); math.Abs(got-x) > near {
				t.Errorf("call %d: %s begins at %.2f, want %.2f", r.Seq, s.class, got, x)
			}
			x += want
			if s.tokens > 0 {
				seen[s.class] = true
			}
		}
		marks := bar.all("blame-mark")
		if r.Blame == "" {
			if len(marks) != 0 {
				t.Errorf("call %d, blamed for nothing, has %d marks", r.Seq, len(marks))
			}
			continue
		}
		if !strings.Contains(r.Blame, "/tools/3") || len(marks) != 1 {
			t.Fatalf("call %d: blame %q, %d marks", r.Seq, r.Blame, len(marks))
		}
		// Where /tools/3 lies in the request, by its manifest's tokens.
		pr, err := payload.Read(bodies[r.Seq-1], payload.Anthropic)
		if err != nil {
			t.Fatal(err)
		}
		m, err := request.FromPayload(pr, nil)
		if err != nil {
			t.Fatal(err)
		}
		before, in := 0, 0
		for i, s := range m.Segments {
			if s.Path == "/tools/3" {
				in = s.Tokens
				break
			}
			before += m.Segments[i].Tokens
		}
		mark := marks[0]
		if want := width * float64(before) / float64(m.Tokens); math.Abs(mark.num(t, "x")-want) > near {
			t.Errorf("the blamed segment's mark begins at %s, want %.2f", mark.attr("x"), want)
		}
		if want := max(width*float64(in)/float64(m.Tokens), 2); math.Abs(mark.num(t, "width")-want) > near {
			t.Errorf("the blamed segment's mark is %s wide, want %.2f", mark.attr("width"), want)
		}
	}
	if !seen["read"] || !seen["written"] || !seen["uncached"] {
		t.Errorf("the run drew %v: a bar of each state is wanted", seen)
	}
}

// A session's plot has one point a call, at the height of its predicted
// read over its prompt.
func TestThePlotHasAPointACall(t *testing.T) {
	g := newRig(t, nil)
	a, b := fakecache.NewAgent(), fakecache.NewAgent()
	for i := range 4 {
		g.post(t, "/v1/messages", a.Turn(fmt.Sprintf("a%d", i)), "Promptloom-Session", "a")
		a.Answer("ok")
		if i < 2 {
			g.post(t, "/v1/messages", b.Turn(fmt.Sprintf("b%d", i)), "Promptloom-Session", "b")
			b.Answer("ok")
		}
	}
	rows := callRows(t, g)
	page := get(t, g.srv.URL+"/promptloom/")
	plots := regexp.MustCompile(`(?s)<div class="session" id="[^"]*"><div><b>([^<]*)</b>.*?</svg>`).FindAllStringSubmatch(page, -1)
	if len(plots) != 2 {
		t.Fatalf("%d plots, want 2", len(plots))
	}
	for _, p := range plots {
		plot := svgIn(t, p[0], "plot")
		points := plot.all("pt")
		var want []callRow
		for _, r := range rows {
			if strings.HasPrefix(r.Call, p[1]+"/") {
				want = append(want, r)
			}
		}
		if len(points) != len(want) {
			t.Fatalf("session %s: %d points, want one a call (%d)", p[1], len(points), len(want))
		}
		height := plot.num(t, "height")
		for i, pt := range points {
			r := want[i]
			if pt.attr("data-seq") != strconv.Itoa(r.Seq) {
				t.Errorf("session %s: point %d is call %s, want %d", p[1], i, pt.attr("data-seq"), r.Seq)
			}
			rate := float64(r.Read) / float64(r.Read+r.Written+r.Uncached)
			if y, want := pt.num(t, "cy"), 6+(1-rate)*(height-12); math.Abs(y-want) > near {
				t.Errorf("session %s, call %d: at height %.2f, want %.2f (%.0f%% read)", p[1], r.Seq, y, want, 100*rate)
			}
			if i > 0 && pt.num(t, "cx") <= points[i-1].num(t, "cx") {
				t.Errorf("session %s: the points are not in call order", p[1])
			}
		}
	}
}

// Nothing a harness or an upstream sends becomes markup: a call's and a
// session's name, a tool's name and description, the provider's verdict
// are text on the page, in calls.json, in the events' HTML, and on the
// call's page with its diff.
func TestThePageEscapesWhatItIsSent(t *testing.T) {
	const evil = `"><script>alert(1)</script><img src=x onerror=alert(2)>`
	g := newRig(t, &proxy.Options{Base: diagnose(map[string]string{"two": "</title><script>alert(3)</script>"})})
	a := fakecache.NewAgent()
	a.Tools[3]["name"] = "Bash" + evil
	for i, turn := range []string{"one", "two"} {
		if i == 1 {
			a.Tools[3]["description"] = evil
			a.System[2]["text"] = evil
		}
		if code, out := g.post(t, "/v1/messages", a.Turn(turn), "Promptloom-Call", fmt.Sprintf("c%d%s", i+1, evil), "Promptloom-Session", "s"+evil); code != 200 {
			t.Fatal(code, out)
		}
		a.Answer(evil)
	}
	page := get(t, g.srv.URL+"/promptloom/")
	call := get(t, g.srv.URL+"/promptloom/call/2")
	for what, text := range map[string]string{"the page": page, "the call's page": call} {
		if strings.Contains(text, "<script>alert") || strings.Contains(text, "<img") {
			t.Errorf("%s holds markup it was sent:\n%s", what, text)
		}
	}
	if !strings.Contains(page, "the provider says &lt;/title&gt;&lt;script&gt;alert(3)") {
		t.Errorf("the provider's verdict is not on the page")
	}
	bar := svgIn(t, rowIn(t, page, 2), "bar")
	if len(bar.all("blame-mark")) == 0 {
		t.Errorf("the blamed tool is not marked:\n%s", rowIn(t, page, 2))
	}
	for _, m := range bar.all("blame-mark") {
		if len(m.Nodes) != 1 || !strings.Contains(m.Nodes[0].Text, evil) {
			t.Errorf("the mark's title does not hold the blame's words as text: %+v", m.Nodes)
		}
	}
	svgIn(t, page, "plot")
	if !strings.Contains(call, `id="diff"`) || !strings.Contains(call, "alert(2)") {
		t.Errorf("the call's page has no diff, or not its words:\n%s", call)
	}
}

// An event's row is drawn by the server as the page's are: what a
// harness sent is text in its HTML too.
func TestAnEventsRowIsEscaped(t *testing.T) {
	const evil = `<script>alert(1)</script>`
	g := newRig(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", g.srv.URL+"/promptloom/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	a := fakecache.NewAgent()
	a.Tools[3]["name"] = evil
	if code, out := g.post(t, "/v1/messages", a.Turn("hi"), "Promptloom-Call", evil, "Promptloom-Session", evil); code != 200 {
		t.Fatal(code, out)
	}
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev struct{ Call, HTML, Plot string }
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Call != evil || !strings.Contains(ev.HTML, `id="call-1"`) {
			t.Fatalf("the event: %s", data)
		}
		for _, html := range []string{ev.HTML, ev.Plot} {
			if strings.Contains(html, "<script") {
				t.Fatalf("the event's HTML holds markup it was sent: %s", html)
			}
		}
		if strings.Contains(ev.HTML, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			return
		}
		t.Fatalf("the event's row does not show the call's name as text: %s", ev.HTML)
	}
}
