package proxy

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/internal/seq"
	"github.com/promptloom/promptloom/internal/textsafe"
	"github.com/promptloom/promptloom/request"
)

// segText is a segment's words as cache.Explain shows them (redacted),
// with what the diff pairs it by.
type segText struct {
	Path, Section, What string
	Tokens              int
	Text                string
	Shown               bool // Text is the segment's content
	digest              string
}

// texts is each of m's segments with its content, read from body by
// the explanation (which redacts it): the call page shows the same words.
func texts(x *cache.Explanation) []segText {
	m := x.Manifest
	out := make([]segText, len(m.Segments))
	for i, s := range m.Segments {
		out[i] = segText{Path: s.Path, Section: s.Section, Tokens: s.Tokens, digest: s.Digest.String()}
	}
	var b bytes.Buffer
	if x.WriteJSON(&b) != nil {
		return out
	}
	var doc struct {
		Segments []struct {
			Content *string `json:"content"`
		} `json:"segments"`
	}
	if json.Unmarshal(b.Bytes(), &doc) != nil || len(doc.Segments) != len(out) {
		return out
	}
	for i, s := range doc.Segments {
		if s.Content != nil {
			out[i].Text, out[i].Shown = *s.Content, true
		}
	}
	return out
}

// diffEntry is one step of a request's diff against the call before it,
// in the later request's cache order: a run of segments kept, or one
// segment changed, added or removed.
type diffEntry struct {
	Op     string // same, changed, added, removed
	Path   string
	Tokens int
	// Count is the segments a run of kept ones holds.
	Count int
	Lines []diffLine
	// Note says why words are not shown.
	Note string
}

// diffLine is a line of a changed segment's diff: ' ' context, '-' the
// earlier call's, '+' this one's.
type diffLine struct {
	Op   string
	Text string
}

// Class is the line's class on the page.
func (l diffLine) Class() string {
	switch l.Op {
	case "-":
		return "del"
	case "+":
		return "add"
	}
	return "ctx"
}

// The diff shows what changed, not the whole of a large segment: at most
// diffLines lines a side of a changed segment, and diffContext lines (or
// bytes, in a one-line change) of what stayed around them.
const (
	diffLines   = 40
	diffContext = 2
	diffBytes   = 80
)

// requestDiff pairs b's segments with a's in cache order: those with the
// same content in the same order are kept (a longest increasing run over
// their digests, so a block inserted or removed does not unpair what
// follows it), and between them a segment at the same path is changed,
// anything else added or removed. Its cost is about linear in the
// segments and their words.
func requestDiff(a, b []segText) []diffEntry {
	byDigest := map[string][]int{}
	for i, s := range a {
		byDigest[s.digest] = append(byDigest[s.digest], i)
	}
	var ai, bj []int
	for j, s := range b {
		if is := byDigest[s.digest]; len(is) > 0 {
			ai, bj = append(ai, is[0]), append(bj, j)
			byDigest[s.digest] = is[1:]
		}
	}
	kept := seq.LongestIncreasing(ai)
	var out []diffEntry
	same := func(s segText) {
		if n := len(out); n > 0 && out[n-1].Op == "same" {
			out[n-1].Count++
			out[n-1].Tokens += s.Tokens
			return
		}
		out = append(out, diffEntry{Op: "same", Path: s.Path, Tokens: s.Tokens, Count: 1})
	}
	gap := func(as, bs []segText) {
		paired := map[int]bool{}
		byPath := map[string]int{}
		for i, s := range as {
			if _, ok := byPath[s.Path]; !ok {
				byPath[s.Path] = i
			}
		}
		var later []diffEntry
		for _, s := range bs {
			if i, ok := byPath[s.Path]; ok && !paired[i] {
				paired[i] = true
				later = append(later, changed(as[i], s))
				continue
			}
			later = append(later, added(s))
		}
		for i, s := range as {
			if !paired[i] {
				out = append(out, diffEntry{Op: "removed", Path: s.Path, Tokens: s.Tokens})
			}
		}
		out = append(out, later...)
	}
	pa, pb := 0, 0
	for _, k := range kept {
		i, j := ai[k], bj[k]
		gap(a[pa:i], b[pb:j])
		same(b[j])
		pa, pb = i+1, j+1
	}
	gap(a[pa:], b[pb:])
	return out
}

func added(s segText) diffEntry {
	e := diffEntry{Op: "added", Path: s.Path, Tokens: s.Tokens}
	if !s.Shown {
		e.Note = "its words are not shown"
		return e
	}
	lines := strings.Split(s.Text, "\n")
	for i, l := range lines {
		if i == diffLines {
			e.Note = thousands(len(lines)-i) + " more lines"
			break
		}
		e.Lines = append(e.Lines, diffLine{Op: "+", Text: clip(l)})
	}
	return e
}

// changed is a segment's change: its lines, the common first and last
// ones set aside, the rest shown removed then added; a change within one
// line is shown by its bytes, with some that stayed either side.
func changed(a, b segText) diffEntry {
	e := diffEntry{Op: "changed", Path: b.Path, Tokens: b.Tokens}
	if !a.Shown || !b.Shown {
		e.Note = "its words are not shown"
		return e
	}
	al, bl := strings.Split(a.Text, "\n"), strings.Split(b.Text, "\n")
	pre := 0
	for pre < len(al) && pre < len(bl) && al[pre] == bl[pre] {
		pre++
	}
	suf := 0
	for suf < len(al)-pre && suf < len(bl)-pre && al[len(al)-1-suf] == bl[len(bl)-1-suf] {
		suf++
	}
	am, bm := al[pre:len(al)-suf], bl[pre:len(bl)-suf]
	if len(am) == 1 && len(bm) == 1 {
		x, y := inLine(am[0], bm[0])
		e.Lines = []diffLine{{Op: "-", Text: x}, {Op: "+", Text: y}}
		return e
	}
	for _, l := range al[max(pre-diffContext, 0):pre] {
		e.Lines = append(e.Lines, diffLine{Op: " ", Text: clip(l)})
	}
	for _, side := range []struct {
		op    string
		lines []string
	}{{"-", am}, {"+", bm}} {
		for i, l := range side.lines {
			if i == diffLines {
				e.Lines = append(e.Lines, diffLine{Op: side.op, Text: "[… " + thousands(len(side.lines)-i) + " more lines]"})
				break
			}
			e.Lines = append(e.Lines, diffLine{Op: side.op, Text: clip(l)})
		}
	}
	for _, l := range bl[len(bl)-suf : min(len(bl)-suf+diffContext, len(bl))] {
		e.Lines = append(e.Lines, diffLine{Op: " ", Text: clip(l)})
	}
	return e
}

// inLine shows a change within one line: the bytes that differ, with at
// most diffBytes that stayed either side, cut between characters.
func inLine(a, b string) (string, string) {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	for pre > 0 && (pre < len(a) && !utf8.RuneStart(a[pre]) || pre < len(b) && !utf8.RuneStart(b[pre])) {
		pre--
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	for suf > 0 && (!utf8.RuneStart(a[len(a)-suf]) || !utf8.RuneStart(b[len(b)-suf])) {
		suf--
	}
	from := pre - diffBytes
	for from > 0 && !utf8.RuneStart(a[from]) {
		from--
	}
	side := func(s string) string {
		head := ""
		start := max(from, 0)
		if start > 0 {
			head = "…"
		}
		end := len(s) - suf + diffBytes
		for end < len(s) && !utf8.RuneStart(s[end]) {
			end++
		}
		tail := ""
		if end < len(s) {
			tail = "…"
		} else {
			end = len(s)
		}
		return clip(head + s[start:end] + tail)
	}
	return side(a), side(b)
}

// clip is a line as the diff shows it: control and bidirectional
// characters escaped, at most a few hundred bytes.
func clip(s string) string {
	const most = 400
	if len(s) > most {
		end := most
		for end > 0 && !utf8.RuneStart(s[end]) {
			end--
		}
		s = s[:end] + "[… " + thousands(len(s)-end) + " more bytes]"
	}
	return textsafe.Line(s)
}

// diffOf is the call's diff against prev (nil: no call before it the
// page keeps).
func diffOf(x *cache.Explanation, prev *request.Manifest, prevBody []byte, o *cache.Options) []diffEntry {
	if prev == nil {
		return nil
	}
	px := cache.Explain(prev, nil, o, false)
	px.Body = prevBody
	return requestDiff(texts(px), texts(x))
}
