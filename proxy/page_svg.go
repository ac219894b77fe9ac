package proxy

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/request"
)

// The bar and the plot are drawn as SVG by the page's templates from the
// figures here: every coordinate is computed in Go, and every text (a
// call's or a tool's name, a blame's reason) reaches the markup through
// html/template, which escapes it.

// barWidth is a bar's width in pixels: every bar has it, whatever the
// request's size (the tokens are written beside it), so the parts of a
// bar are to scale, not the bars to each other, and a bar drawn for a
// live event needs no other call's figures.
const barWidth = 320

// barView is one call's request as its bar draws it: the sections in
// cache order (tools, system, messages) above, the predicted read,
// write and uncached tokens in that order below them, the provider's
// report as a thin strip under those, and the blamed segments marked.
type barView struct {
	Width    float64
	Sections []span
	// Read, Written, Uncached are the predicted states, left to right.
	Read, Written, Uncached span
	// Reported is the provider's read, write and the rest (nil: no
	// report).
	Reported []span
	Blamed   []span
	Tokens   int
	Estimate bool
	// Title says the bar's figures in words, on hover: one title for the
	// bar, not one a part, as a page may hold thousands of bars.
	Title string
}

// span is a stretch of a bar: where it begins and how wide it is, in
// pixels, the tokens it stands for, and its label (a section's name, a
// blame's words).
type span struct {
	X, W   float64
	Tokens int
	Class  string
	Label  string
}

// px formats a coordinate for the SVG: two decimals are finer than a
// pixel.
func px(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }

// barOf draws m's bar from v, its verdict. The states are v's tokens
// (InputTokens, scaled to the provider's report where there is one);
// the sections and blamed segments are m's tokens, scaled to the same
// width, as the verdict's figures are m's counted and scaled.
func barOf(m *request.Manifest, v cache.Verdict) *barView {
	total := max(v.InputTokens, v.Predicted.Read+v.Predicted.Write)
	if total <= 0 || len(v.Problems) > 0 {
		return nil
	}
	b := &barView{Width: barWidth, Tokens: total, Estimate: v.Estimate}
	at := func(tokens int) float64 { return barWidth * float64(tokens) / float64(total) }
	read, written := v.Predicted.Read, v.Predicted.Write
	b.Read = span{X: 0, W: at(read), Tokens: read, Class: "read"}
	b.Written = span{X: b.Read.W, W: at(written), Tokens: written, Class: "written"}
	b.Uncached = span{X: b.Read.W + b.Written.W, Tokens: total - read - written, Class: "uncached"}
	b.Uncached.W = barWidth - b.Uncached.X
	if r := v.Reported; r != nil {
		rt := max(total, r.Read+r.Write)
		rat := func(tokens int) float64 { return barWidth * float64(tokens) / float64(rt) }
		b.Reported = []span{
			{X: 0, W: rat(r.Read), Tokens: r.Read, Class: "read"},
			{X: rat(r.Read), W: rat(r.Write), Tokens: r.Write, Class: "written"},
			{X: rat(r.Read + r.Write), W: barWidth - rat(r.Read+r.Write), Tokens: rt - r.Read - r.Write, Class: "uncached"},
		}
	}
	defer b.title()
	if m == nil || m.Tokens <= 0 {
		return b
	}
	// The manifest's tokens, laid on the same width.
	scale := float64(barWidth) / float64(m.Tokens)
	cum := 0
	for i, s := range m.Segments {
		if n := len(b.Sections); n == 0 || b.Sections[n-1].Class != s.Section {
			b.Sections = append(b.Sections, span{X: float64(cum) * scale, Class: s.Section, Label: s.Section})
		}
		last := &b.Sections[len(b.Sections)-1]
		last.Tokens += s.Tokens
		last.W = float64(cum+s.Tokens)*scale - last.X
		for _, bl := range v.Blame {
			if bl.Path == "" || !blames(bl.Path, s.Path) || (i > 0 && m.Segments[i-1].Path == s.Path) {
				continue
			}
			// The block's segments together (a system block's fragments).
			n := s.Tokens
			for j := i + 1; j < len(m.Segments) && m.Segments[j].Path == s.Path; j++ {
				n += m.Segments[j].Tokens
			}
			// At least two pixels, so that a small block's mark is seen.
			b.Blamed = append(b.Blamed, span{X: float64(cum) * scale, W: max(float64(n)*scale, 2), Tokens: n, Class: s.Section, Label: s.Path + ": " + bl.Kind + ": " + bl.Reason})
		}
		cum += s.Tokens
	}
	return b
}

// title says b's figures in words.
func (b *barView) title() {
	e := approx(b.Estimate)
	t := fmt.Sprintf("%s%s tokens: read %s%s, written %s%s, uncached %s%s", e, thousands(b.Tokens),
		e, thousands(b.Read.Tokens), e, thousands(b.Written.Tokens), e, thousands(b.Uncached.Tokens))
	if r := b.Reported; r != nil {
		t += fmt.Sprintf("; the provider reported read %s, written %s", thousands(r[0].Tokens), thousands(r[1].Tokens))
	}
	for i, s := range b.Sections {
		sep := ", "
		if i == 0 {
			sep = "; "
		}
		t += sep + s.Label + " " + e + thousands(s.Tokens)
	}
	b.Title = t
}

// blames reports whether a blame's path names the segment at path: the
// segment itself, or a member inside it.
func blames(blamed, path string) bool {
	return blamed == path || strings.HasPrefix(blamed, path+"/")
}

// plotWidth and plotHeight are a session's plot's size in pixels,
// plotPad its margin inside them, and plotLeft where its points begin
// (the scale's labels are left of it).
const (
	plotWidth  = 360
	plotHeight = 72
	plotPad    = 6
	plotLeft   = 34
)

// plotView is a session's hit rate over its calls: one point a call,
// the predicted read over the prompt, and the provider's where it
// reported one.
type plotView struct {
	Key, Session string
	Calls        int
	Width        float64
	Height       float64
	Points       []point
	Line         string // the predicted points joined
	Reported     []point
	// Rate is the session's predicted read over its prompts, in percent.
	Rate     string
	Estimate bool
}

// Mid and Bottom are the heights of the plot's 50% and 0% lines.
func (p *plotView) Mid() float64    { return plotHeight / 2 }
func (p *plotView) Bottom() float64 { return plotHeight - plotPad }

type point struct {
	X, Y  float64
	Seq   int
	Label string
}

// plotOf plots a session's verdicts, by call seq (those the page keeps).
func plotOf(id string, vs map[int]cache.Verdict) *plotView {
	seqs := make([]int, 0, len(vs))
	for seq, v := range vs {
		if v.InputTokens > 0 && len(v.Problems) == 0 {
			seqs = append(seqs, seq)
		}
	}
	slices.Sort(seqs)
	p := &plotView{Key: elementID(id), Session: id, Calls: len(seqs), Width: plotWidth, Height: plotHeight}
	x := func(i int) float64 {
		if len(seqs) == 1 {
			return (plotLeft + plotWidth - plotPad) / 2
		}
		return plotLeft + float64(i)*(plotWidth-plotLeft-plotPad)/float64(len(seqs)-1)
	}
	y := func(rate float64) float64 { return plotPad + (1-rate)*(plotHeight-2*plotPad) }
	var read, input int
	var line []string
	for i, seq := range seqs {
		v := vs[seq]
		rate := min(float64(v.Predicted.Read)/float64(v.InputTokens), 1)
		read += v.Predicted.Read
		input += v.InputTokens
		p.Estimate = p.Estimate || v.Estimate
		label := fmt.Sprintf("call %s: predicted %s%% read (%s%s of %s tokens)", v.Call, percent(rate), approx(v.Estimate), thousands(v.Predicted.Read), thousands(v.InputTokens))
		pt := point{X: x(i), Y: y(rate), Seq: seq, Label: label}
		p.Points = append(p.Points, pt)
		line = append(line, px(pt.X)+","+px(pt.Y))
		if r := v.Reported; r != nil {
			rrate := min(float64(r.Read)/float64(max(v.InputTokens, r.Read+r.Write)), 1)
			p.Reported = append(p.Reported, point{X: pt.X, Y: y(rrate), Seq: seq,
				Label: fmt.Sprintf("call %s: the provider reported %s%% read (%s tokens)", v.Call, percent(rrate), thousands(r.Read))})
		}
	}
	p.Line = strings.Join(line, " ")
	if input > 0 {
		p.Rate = percent(float64(read) / float64(input))
	}
	return p
}

// elementID is a session's element id on the page: its name is the
// harness's to choose, so the id is a digest of it.
func elementID(id string) string {
	h := fnv.New64a()
	h.Write([]byte(id))
	return fmt.Sprintf("session-%016x", h.Sum64())
}

func percent(f float64) string { return strconv.FormatFloat(100*f, 'f', 0, 64) }

// approx is the mark before a figure that is an estimate.
func approx(estimate bool) string {
	if estimate {
		return "~"
	}
	return ""
}

// thousands writes n with a comma between each three digits, as the
// cache package's texts do.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// dollars writes micro-dollars as the cache package does.
func dollars(micros int64) string {
	sign := ""
	u := uint64(micros)
	if micros < 0 {
		sign, u = "-", uint64(-(micros+1))+1
	}
	return fmt.Sprintf("%s$%d.%06d", sign, u/1_000_000, u%1_000_000)
}
