package proxy

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// The diff of two requests' segments: kept runs folded, a changed
// segment by its lines with two either side, one inserted ahead of the
// others not unpairing what follows it, one dropped shown removed.
func TestRequestDiff(t *testing.T) {
	seg := func(path, digest, text string) segText {
		return segText{Path: path, Tokens: 10, Text: text, Shown: true, digest: digest}
	}
	a := []segText{seg("/tools/0", "t0", "a"), seg("/tools/1", "t1", "b"), seg("/system/0", "s0", "one\ntwo\nthree\nfour\nfive\nsix\nseven"),
		seg("/messages/0/content/0", "m0", "hi"), seg("/messages/1/content/0", "m1", "gone")}
	b := []segText{seg("/tools/0", "tn", "new"), seg("/tools/1", "t0", "a"), seg("/tools/2", "t1", "b"),
		seg("/system/0", "s1", "one\ntwo\nTHREE\nFOUR\nfive\nsix\nseven"), seg("/messages/0/content/0", "m0", "hi")}
	var got []string
	for _, e := range requestDiff(a, b) {
		line := e.Op + " " + e.Path
		if e.Op == "same" {
			line += " x" + strconv.Itoa(e.Count)
		}
		for _, l := range e.Lines {
			line += " |" + l.Op + l.Text
		}
		got = append(got, line)
	}
	want := []string{
		"added /tools/0 |+new",
		"same /tools/1 x2",
		"changed /system/0 | one | two |-three |-four |+THREE |+FOUR | five | six",
		"same /messages/0/content/0 x1",
		"removed /messages/1/content/0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the diff:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A change within one line is shown by the bytes that differ, cut
// between characters, with some that stayed either side.
func TestInLine(t *testing.T) {
	a := strings.Repeat("é", 100) + "the date is 10:00." + strings.Repeat("ü", 100)
	b := strings.Repeat("é", 100) + "the date is 10:05." + strings.Repeat("ü", 100)
	x, y := inLine(a, b)
	if !strings.Contains(x, "10:00.") || !strings.Contains(y, "10:05.") || !strings.HasPrefix(x, "…") || !strings.HasSuffix(y, "…") ||
		!utf8.ValidString(x) || !utf8.ValidString(y) || len(x) > 2*diffBytes+40 {
		t.Errorf("%q\n%q", x, y)
	}
}

// No pair of texts makes the diff panic, or show invalid UTF-8 of valid
// texts.
func FuzzChanged(f *testing.F) {
	f.Add("one\ntwo", "one\nthree")
	f.Add("ééé", "éeé")
	f.Add("", "\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		e := changed(segText{Text: a, Shown: true}, segText{Text: b, Shown: true})
		for _, l := range e.Lines {
			if utf8.ValidString(a) && utf8.ValidString(b) && !utf8.ValidString(l.Text) {
				t.Fatalf("%q", l.Text)
			}
		}
		added(segText{Text: b, Shown: true})
	})
}
