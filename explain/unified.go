package explain

import (
	"fmt"
	"strings"

	"github.com/promptloom/promptloom/internal/textsafe"

	dmp "github.com/sergi/go-diff/diffmatchpatch"
)

// line is one line of a hunk: Op is ' ' (both), '-' (A only) or '+' (B
// only). A changed line paired with its counterpart on the other side has
// Spans: the characters that stayed (' ') and those that changed ('-' or
// '+').
type line struct {
	Op    byte
	Text  string
	Spans []span
	// coarse marks a line of a region too large to align (maxGapLines).
	coarse bool
}

// span is a run of characters inside a changed line.
type span struct {
	Op   byte
	Text string
}

// hunk is one region of change with its context, as in a unified diff.
// Starts are 1-based line numbers. Coarse says that part of the hunk was
// too large to align line by line (see maxGapLines): its lines are all
// shown, A's removed and then B's added, but unpaired.
type hunk struct {
	AStart, ALines, BStart, BLines int
	Lines                          []line
	Coarse                         bool
}

// lineHunks diffs two prompts line by line (diffLines: Myers' diff between
// unique-line anchors, bounded), then character by character inside each
// pair of changed lines. The final line of each side is compared as if it
// ended with a newline: prompts are trimmed, and a missing newline is not a
// change worth a line of noise.
func lineHunks(a, b string, context int) []hunk {
	d := dmp.New()
	d.DiffTimeout = 0 // no deadline: the same inputs must give the same diff
	ids := map[string]int32{}
	var table []string
	la, lb := splitLines(a, ids, &table), splitLines(b, ids, &table)
	ops := diffLines(la, lb, d)
	all := make([]line, len(ops))
	for i, o := range ops {
		all[i] = line{Op: o.op, Text: table[o.id], coarse: o.coarse}
	}
	return group(all, context, d)
}

func withNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// group cuts the line ops into hunks: each change with up to context
// unchanged lines around it, hunks whose context would touch merged.
func group(all []line, context int, d *dmp.DiffMatchPatch) []hunk {
	// aBefore[i], bBefore[i]: lines of A and of B before all[i].
	aBefore := make([]int, len(all)+1)
	bBefore := make([]int, len(all)+1)
	for i, l := range all {
		aBefore[i+1], bBefore[i+1] = aBefore[i], bBefore[i]
		if l.Op != '+' {
			aBefore[i+1]++
		}
		if l.Op != '-' {
			bBefore[i+1]++
		}
	}
	var hunks []hunk
	charWork := maxTotalCharWork
	for i := 0; i < len(all); i++ {
		if all[i].Op == ' ' {
			continue
		}
		start, end := max(0, i-context), min(len(all), i+context+1)
		// take in the next change while at most 2*context unchanged lines
		// stand between, as diff(1) does
		for j := i + 1; j < min(len(all), end+context+1); j++ {
			if all[j].Op != ' ' {
				end = min(len(all), j+context+1)
			}
		}
		lines := append([]line(nil), all[start:end]...)
		pairChanges(lines, d, &charWork)
		h := hunk{
			AStart: aBefore[start] + 1, ALines: aBefore[end] - aBefore[start],
			BStart: bBefore[start] + 1, BLines: bBefore[end] - bBefore[start],
			Lines: lines,
		}
		for _, l := range lines {
			h.Coarse = h.Coarse || l.coarse
		}
		hunks = append(hunks, h)
		i = end - 1
	}
	return hunks
}

// pairChanges pairs the k-th removed line of each run of removals with the
// k-th added line that follows, and marks the characters that differ.
// Lines of a coarse region are not paired. work is what is left of the
// whole diff's budget for character diffs (maxTotalCharWork).
func pairChanges(lines []line, d *dmp.DiffMatchPatch, work *int) {
	for i := 0; i < len(lines); {
		if lines[i].Op != '-' || lines[i].coarse {
			i++
			continue
		}
		del := i
		for i < len(lines) && lines[i].Op == '-' {
			i++
		}
		ins := i
		for i < len(lines) && lines[i].Op == '+' {
			i++
		}
		for k := 0; del+k < ins && ins+k < i; k++ {
			da, db := &lines[del+k], &lines[ins+k]
			diffs := charDiff(d, da.Text, db.Text, work)
			for _, x := range diffs {
				switch x.Type {
				case dmp.DiffEqual:
					da.Spans = append(da.Spans, span{' ', x.Text})
					db.Spans = append(db.Spans, span{' ', x.Text})
				case dmp.DiffDelete:
					da.Spans = append(da.Spans, span{'-', x.Text})
				case dmp.DiffInsert:
					db.Spans = append(db.Spans, span{'+', x.Text})
				}
			}
		}
	}
}

// maxCharWork bounds the character diff of one pair of lines. Myers' diff
// costs about the product of the lengths of what differs, and there is no
// deadline (a deadline would make the output depend on the machine), so
// two long unrelated lines would take seconds. Past the bound, the pair is
// shown as its
// common prefix and suffix around one removal and one insertion.
const maxCharWork = 1 << 22

// maxTotalCharWork bounds the character diffs of a whole diff the same way,
// so many pairs of long lines cannot add up to seconds: once it is spent,
// every further pair is shown in the bounded form.
const maxTotalCharWork = 1 << 25

func charDiff(d *dmp.DiffMatchPatch, a, b string, work *int) []dmp.Diff {
	ra, rb := []rune(a), []rune(b)
	p := d.DiffCommonPrefix(a, b) // in runes
	s := d.DiffCommonSuffix(string(ra[p:]), string(rb[p:]))
	ma, mb := ra[p:len(ra)-s], rb[p:len(rb)-s]
	if cost := len(ma) * len(mb); cost <= maxCharWork && cost <= *work {
		*work -= cost
		return d.DiffCleanupSemantic(d.DiffMain(a, b, false))
	}
	var out []dmp.Diff
	for _, x := range []dmp.Diff{
		{Type: dmp.DiffEqual, Text: string(ra[:p])},
		{Type: dmp.DiffDelete, Text: string(ma)},
		{Type: dmp.DiffInsert, Text: string(mb)},
		{Type: dmp.DiffEqual, Text: string(ra[len(ra)-s:])},
	} {
		if x.Text != "" {
			out = append(out, x)
		}
	}
	return out
}

// renderUnified writes hunks in the unified diff format.
func renderUnified(hunks []hunk, aName, bName string) string {
	if len(hunks) == 0 {
		return ""
	}
	var b strings.Builder
	// the names are labels: a newline in one must not start a line
	fmt.Fprintf(&b, "--- %s\n+++ %s\n", textsafe.Line(aName), textsafe.Line(bName))
	for _, h := range hunks {
		b.WriteString(hunkHeader(h))
		b.WriteByte('\n')
		for _, l := range h.Lines {
			b.WriteByte(l.Op)
			b.WriteString(l.Text)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// hunkHeader is a hunk's "@@ -a,n +b,m @@" line, with coarseLabel after it
// when part of the hunk was too large to align.
func hunkHeader(h hunk) string {
	head := "@@ -" + rangeOf(h.AStart, h.ALines) + " +" + rangeOf(h.BStart, h.BLines) + " @@"
	if h.Coarse {
		head += " " + coarseLabel
	}
	return head
}

// rangeOf formats a hunk range as diff(1) does: "start,count", with an empty
// range written as the line before it.
func rangeOf(start, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", start-1)
	}
	if count == 1 {
		return fmt.Sprintf("%d", start)
	}
	return fmt.Sprintf("%d,%d", start, count)
}
