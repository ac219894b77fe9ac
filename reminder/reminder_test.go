package reminder

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ids(rs []Reminder) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

func TestInjectDedupes(t *testing.T) {
	var s Set
	s.Inject(Reminder{Body: "use tabs", DedupeKey: "style"})
	s.Inject(Reminder{Body: "run tests", DedupeKey: "tests"})
	s.Inject(Reminder{Body: "use tabs, really", DedupeKey: "style"})
	n, err := s.Inject(Reminder{Body: "use spaces", DedupeKey: "style", Authority: Contract})
	if err != nil || n != 1 {
		t.Fatalf("Inject removed %d (%v), want 1", n, err)
	}
	if diff := cmp.Diff([]string{"r2", "r4"}, ids(s.Pending())); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
	for _, bad := range []struct {
		r    Reminder
		want error
	}{{Reminder{Body: " "}, ErrEmptyBody}, {Reminder{Body: "x", Authority: "royal"}, ErrBadAuthority}, {Reminder{Body: "x", TTLTurns: -1}, ErrBadTTL}} {
		if _, err := s.Inject(bad.r); !errors.Is(err, bad.want) {
			t.Errorf("Inject(%+v) = %v, want %v", bad.r, err, bad.want)
		}
	}
}

func TestTurnCountsDownFiniteTTLs(t *testing.T) {
	var s Set
	s.Inject(Reminder{Body: "once", TTLTurns: 1})
	s.Inject(Reminder{Body: "twice", TTLTurns: 2})
	s.Inject(Reminder{Body: "always"})
	if diff := cmp.Diff([]string{"r1"}, ids(s.Turn())); diff != "" {
		t.Errorf("first turn expired (-want +got):\n%s", diff)
	}
	if got := s.Pending()[0].TTLTurns; got != 1 {
		t.Errorf("twice has %d turns left", got)
	}
	s.Turn()
	s.Turn()
	if diff := cmp.Diff([]string{"r3"}, ids(s.Pending())); diff != "" {
		t.Errorf("after three turns (-want +got):\n%s", diff)
	}
}

func TestCompact(t *testing.T) {
	var s Set
	s.Inject(Reminder{Body: "Run  the tests.", PreserveOnCompact: true})                              // r1: same body as r3, older
	s.Inject(Reminder{Body: "keep it", DedupeKey: "k", Authority: Contract, PreserveOnCompact: true}) // r2
	s.Inject(Reminder{Body: "Run the\ntests.", PreserveOnCompact: true})                              // r3: wins its body group (recency)
	s.Inject(Reminder{Body: "scratch", PreserveOnCompact: false})                                     // r4: not preserved
	s.pending = append(s.pending, Reminder{ID: "r5", Body: "weaker", DedupeKey: "k", Authority: Advisory, PreserveOnCompact: true, seq: 5})
	dropped := s.Compact()
	if diff := cmp.Diff([]string{"r2", "r3"}, ids(s.Pending())); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"r1", "r4", "r5"}, ids(dropped)); diff != "" {
		t.Errorf("dropped (-want +got):\n%s", diff)
	}
}

func TestRender(t *testing.T) {
	var s Set
	s.Inject(Reminder{Body: "be brief", TTLTurns: 3})
	s.Inject(Reminder{Body: "never <rm> & \"quote\"", Authority: Contract, Tags: []string{"safety"}})
	r := Render(s.Pending())
	want := "<context-directives>\n" +
		"<directive authority=\"contract\">never &lt;rm&gt; &amp; &#34;quote&#34;</directive>\n" +
		"<directive authority=\"advisory\" ttl_turns=\"3\">be brief</directive>\n" +
		"</context-directives>"
	if r.Message != want {
		t.Errorf("message:\n%s\nwant:\n%s", r.Message, want)
	}
	for _, row := range r.Rows {
		if got := r.Message[row.Offset : row.Offset+row.Bytes]; got == "" || got[0] == '<' {
			t.Errorf("row %s points at %q", row.ID, got)
		}
	}
	if Render(nil).Message != "" {
		t.Error("no reminders rendered a message")
	}
}
