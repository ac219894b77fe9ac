package reminder

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The lifecycle rules below are Harn's, as its docs/src/system-reminders.md
// states them and crates/harn-vm/src/orchestration/compact_lifecycle.rs
// (compact_reminder_events) and agent_sessions' apply_reminder_post_turn
// implement them.

func ids(rs []Reminder) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

// "When dedupe_key is set, injection first removes any pending reminder
// events with the same key": whatever their authority, since injection
// compares keys only.
func TestInjectReplacesTheSameKeyWhateverTheAuthority(t *testing.T) {
	var s Set
	s.Inject(Reminder{Body: "use tabs", DedupeKey: "style", Authority: contract})
	s.Inject(Reminder{Body: "run tests", DedupeKey: "tests"})
	s.Inject(Reminder{Body: "use tabs, really", DedupeKey: "style", Authority: contract})
	n, err := s.Inject(Reminder{Body: "use spaces", DedupeKey: "style", Authority: advisory})
	if err != nil || n != 1 {
		t.Fatalf("Inject removed %d (%v), want 1", n, err)
	}
	if diff := cmp.Diff([]string{"r2", "r4"}, ids(s.pending)); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
	if got := s.pending[0].Authority; got != contract {
		t.Errorf("an unmarked reminder has authority %q, want contract", got)
	}
}

func TestInjectRefusesInvalidReminders(t *testing.T) {
	var s Set
	for _, bad := range []struct {
		r    Reminder
		want error
	}{
		{Reminder{Body: " \n"}, ErrInvalid},
		{Reminder{Body: "x", Authority: "royal"}, ErrInvalid},
		{Reminder{Body: "x", TTLTurns: -1}, ErrInvalid},
	} {
		if _, err := s.Inject(bad.r); !errors.Is(err, bad.want) {
			t.Errorf("Inject(%+v) = %v, want %v", bad.r, err, bad.want)
		}
	}
	if len(s.pending) != 0 {
		t.Errorf("refused reminders are pending: %+v", s.pending)
	}
}

// "ttl_turns: 1 expires at the next post-turn boundary"; larger finite TTLs
// are decremented in place; nil (0 here) persists.
func TestTurnCountsDownFiniteTTLs(t *testing.T) {
	var s Set
	s.Inject(Reminder{Body: "once", TTLTurns: 1})
	s.Inject(Reminder{Body: "twice", TTLTurns: 2})
	s.Inject(Reminder{Body: "always"})
	if diff := cmp.Diff([]string{"r1"}, ids(s.Turn())); diff != "" {
		t.Errorf("first turn expired (-want +got):\n%s", diff)
	}
	if got := s.pending[0].TTLTurns; got != 1 {
		t.Errorf("twice has %d turns left, want 1", got)
	}
	if diff := cmp.Diff([]string{"r2"}, ids(s.Turn())); diff != "" {
		t.Errorf("second turn expired (-want +got):\n%s", diff)
	}
	s.Turn()
	if diff := cmp.Diff([]string{"r3"}, ids(s.pending)); diff != "" {
		t.Errorf("after three turns (-want +got):\n%s", diff)
	}
}

// transcript_compact: "finite TTLs decrement at the pre-compaction boundary;
// expired reminders are dropped; reminders sharing a dedupe_key collapse to
// the newest event; only preserve_on_compact: true reminders are copied".
func TestCompact(t *testing.T) {
	var s Set
	s.Inject(Reminder{Body: "expires now", TTLTurns: 1, PreserveOnCompact: true})                   // r1
	s.Inject(Reminder{Body: "older", DedupeKey: "k", Authority: contract})                          // r2
	s.Inject(Reminder{Body: "two left", TTLTurns: 3, PreserveOnCompact: true})                      // r3
	s.Inject(Reminder{Body: "scratch"})                                                             // r4
	s.Inject(Reminder{Body: "Run  the tests.", PreserveOnCompact: true})                            // r5
	s.Inject(Reminder{Body: "Run the\ntests.", PreserveOnCompact: true})                            // r6: bodies are not compared here
	s.Inject(Reminder{Body: "newer", DedupeKey: "k", Authority: advisory, PreserveOnCompact: true}) // r7 replaces r2
	expired, compacted := s.Compact()
	if diff := cmp.Diff([]string{"r3", "r5", "r6", "r7"}, ids(s.pending)); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	if got := s.pending[0].TTLTurns; got != 2 {
		t.Errorf("r3 has %d turns left, want 2", got)
	}
	wantExpired := []Reminder{{ID: "r1", Body: "expires now", TTLTurns: 1, PreserveOnCompact: true, Authority: contract}}
	if diff := cmp.Diff(wantExpired, expired); diff != "" {
		t.Errorf("expired (-want +got):\n%s", diff)
	}
	wantCompacted := []Reminder{{ID: "r4", Body: "scratch", Authority: contract}}
	if diff := cmp.Diff(wantCompacted, compacted); diff != "" {
		t.Errorf("compacted (-want +got):\n%s", diff)
	}
}

func TestRenderRowsLocateEscapedBodies(t *testing.T) {
	var s Set
	s.Inject(Reminder{Body: "be brief", TTLTurns: 3, Authority: advisory})
	s.Inject(Reminder{Body: " never <rm> & \"quote\" ", Tags: []string{"safety"}})
	r := s.Render(nil)
	want := envelope(
		"<directive authority=\"contract\">", " never &lt;rm&gt; &amp; \"quote\" ", "</directive>",
		"<directive authority=\"advisory\" ttl_turns=\"3\">", "be brief", "</directive>")
	if r.Message != want {
		t.Errorf("message\n got %q\nwant %q", r.Message, want)
	}
	bodies := map[string]string{"r1": "be brief", "r2": " never &lt;rm&gt; &amp; \"quote\" "}
	if diff := cmp.Diff([]string{"r2", "r1"}, []string{r.Rows[0].ID, r.Rows[1].ID}); diff != "" {
		t.Errorf("row order (-want +got):\n%s", diff)
	}
	for i, row := range r.Rows {
		if got := r.Message[row.Offset : row.Offset+row.Bytes]; got != bodies[row.ID] {
			t.Errorf("row %s points at %q", row.ID, got)
		}
		if !strings.Contains(r.Message, r.directives[i]) {
			t.Errorf("directive %d %q is not in the message", i, r.directives[i])
		}
	}
	if msg, _ := envelopeOf(r.directives); msg != r.Message {
		t.Errorf("the envelope of Directives = %q, want the message", msg)
	}
}

// Harn drops a pending reminder with a blank body ("invalid") rather than
// render it.
func TestRenderDropsInvalidReminders(t *testing.T) {
	r := render([]Reminder{{ID: "a", Body: "  "}, {ID: "b", Body: "x", Authority: "royal"}, {ID: "c", Body: "ok"}}, nil)
	if diff := cmp.Diff([]string{"a", "b"}, r.invalid); diff != "" {
		t.Errorf("invalid (-want +got):\n%s", diff)
	}
	if len(r.Rows) != 1 || r.Rows[0].ID != "c" {
		t.Errorf("rows %+v", r.Rows)
	}
}
