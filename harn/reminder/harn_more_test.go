package reminder

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// More of Harn's reminder tests, ported. Each names its Harn test and file
// of github.com/burin-labs/harn; expectations are Harn's assertions, or, for
// conformance programs, their .expected output.

// crates/harn-vm/src/llm/helpers/options/directive_placement.rs:
// directive_blocks_survive_an_envelope_with_several_directives. Harn found
// both blocks of an envelope holding two; here both count as issued.
func TestDirectiveBlocksSurviveAnEnvelopeWithSeveralDirectives(t *testing.T) {
	first, second := directive("first"), directive("second")
	history := []string{"<context-directives>\nheader\n" + first + "\n" + second + "\n</context-directives>"}
	for _, d := range []string{first, second} {
		if !issued(history, d) {
			t.Errorf("%q is not found in the envelope", d)
		}
	}
}

// crates/harn-vm/src/orchestration/compact_lifecycle.rs:
// preserve_on_compact_reminder_survives_lifecycle.
func TestPreserveOnCompactReminderSurvivesLifecycle(t *testing.T) {
	var s Set
	s.Inject(Reminder{Body: "keep me", PreserveOnCompact: true})
	s.Inject(Reminder{Body: "drop me"})
	expired, compacted := s.Compact()
	if len(expired) != 0 || len(compacted) != 1 || len(s.pending) != 1 || s.pending[0].Body != "keep me" {
		t.Errorf("expired %+v, compacted %+v, kept %+v", expired, compacted, s.pending)
	}
}

// crates/harn-vm/src/orchestration/compact_lifecycle.rs:
// ttl_one_reminder_expires_during_lifecycle.
func TestTTLOneReminderExpiresDuringLifecycle(t *testing.T) {
	var s Set
	s.Inject(Reminder{Body: "ephemeral", TTLTurns: 1})
	expired, _ := s.Compact()
	if len(expired) != 1 || len(s.pending) != 0 {
		t.Errorf("expired %+v, kept %+v", expired, s.pending)
	}
}

// crates/harn-vm/src/orchestration/compact_lifecycle.rs:
// ttl_above_one_decrements_and_keeps: the TTL goes down, and the reminder,
// not marked preserve_on_compact, is compacted away with its new TTL.
func TestTTLAboveOneDecrementsAndKeeps(t *testing.T) {
	var s Set
	s.Inject(Reminder{Body: "keep ttl", TTLTurns: 3})
	expired, compacted := s.Compact()
	if len(expired) != 0 || len(s.pending) != 0 || len(compacted) != 1 || compacted[0].TTLTurns != 2 {
		t.Errorf("expired %+v, compacted %+v, kept %+v", expired, compacted, s.pending)
	}
}

// conformance/tests/reminders/reminder_inject_basic.harn: one pending
// reminder, nothing deduped, an ID assigned.
func TestReminderInjectBasic(t *testing.T) {
	var s Set
	n, err := s.Inject(Reminder{Body: "hello reminder"})
	if err != nil || n != 0 {
		t.Fatalf("Inject = %d, %v", n, err)
	}
	if len(s.pending) != 1 || s.pending[0].Body != "hello reminder" || s.pending[0].ID == "" {
		t.Errorf("pending %+v", s.pending)
	}
}

// conformance/tests/reminders/reminder_inject_dedupe_replaces.harn
// (expected "1 1 new new 3").
func TestReminderInjectDedupeReplaces(t *testing.T) {
	var s Set
	s.Inject(Reminder{Body: "old", DedupeKey: "slot", TTLTurns: 2})
	n, err := s.Inject(Reminder{Body: "new", DedupeKey: "slot", TTLTurns: 3})
	if err != nil || n != 1 {
		t.Fatalf("Inject = %d, %v, want 1 deduped", n, err)
	}
	if len(s.pending) != 1 || s.pending[0].Body != "new" || s.pending[0].TTLTurns != 3 {
		t.Errorf("pending %+v", s.pending)
	}
}

// conformance/tests/reminders/reminder_ttl_post_turn.harn: one expired, one
// decremented, "stay" left with one turn.
func TestReminderTTLPostTurn(t *testing.T) {
	var s Set
	s.Inject(Reminder{Body: "expire", TTLTurns: 1})
	s.Inject(Reminder{Body: "stay", TTLTurns: 2})
	expired := s.Turn()
	if diff := cmp.Diff([]string{"expire"}, bodies(expired)); diff != "" {
		t.Errorf("expired (-want +got):\n%s", diff)
	}
	if len(s.pending) != 1 || s.pending[0].Body != "stay" || s.pending[0].TTLTurns != 1 {
		t.Errorf("pending %+v", s.pending)
	}
}

// conformance/tests/reminders/reminder_inject_ttl_expires.harn: one
// reminder with ttl 1 before the turn, none after, one expired.
func TestReminderInjectTTLExpires(t *testing.T) {
	var s Set
	s.Inject(Reminder{Body: "expire me", TTLTurns: 1})
	if len(s.pending) != 1 || s.pending[0].TTLTurns != 1 {
		t.Fatalf("pending %+v", s.pending)
	}
	if expired := s.Turn(); len(expired) != 1 || len(s.pending) != 0 {
		t.Errorf("expired %+v, pending %+v", expired, s.pending)
	}
}

// conformance/tests/reminders/reminder_compact_expire_at_pre_compact.harn
// (expected "0 ... 1 pre_compact"): a ttl 1 reminder expires at the
// compaction boundary even when preserve_on_compact is set, with its TTL of
// 1 before expiry.
func TestReminderCompactExpireAtPreCompact(t *testing.T) {
	var s Set
	s.Inject(Reminder{Body: "expire at compaction boundary", DedupeKey: "ttl", TTLTurns: 1, PreserveOnCompact: true})
	expired, _ := s.Compact()
	if len(s.pending) != 0 || len(expired) != 1 || expired[0].TTLTurns != 1 {
		t.Errorf("expired %+v, kept %+v", expired, s.pending)
	}
}

// conformance/tests/reminders/reminder_compact_preserve_custom.harn
// (expected "true 1 durable"): only the preserve_on_compact reminder stays.
func TestReminderCompactPreserveCustom(t *testing.T) {
	var s Set
	s.Inject(Reminder{Body: "durable", DedupeKey: "durable", TTLTurns: 2, PreserveOnCompact: true})
	s.Inject(Reminder{Body: "compactable", DedupeKey: "compactable", TTLTurns: 2})
	_, compacted := s.Compact()
	if diff := cmp.Diff([]string{"durable"}, bodies(s.pending)); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"compactable"}, bodies(compacted)); diff != "" {
		t.Errorf("compacted (-want +got):\n%s", diff)
	}
}

// conformance/tests/reminders/reminder_compact_dedupe_during.harn (expected
// "1 newer copy slot 2"): two reminders with one dedupe key leave the newer
// one, its TTL counted down once. (A Set drops the older one at injection,
// where Harn's crafted transcript carries both until compaction.)
func TestReminderCompactDedupeDuring(t *testing.T) {
	var s Set
	s.Inject(Reminder{Body: "older copy", DedupeKey: "slot", TTLTurns: 3, PreserveOnCompact: true})
	s.Inject(Reminder{Body: "newer copy", DedupeKey: "slot", TTLTurns: 3, PreserveOnCompact: true})
	s.Compact()
	if len(s.pending) != 1 || s.pending[0].Body != "newer copy" || s.pending[0].DedupeKey != "slot" || s.pending[0].TTLTurns != 2 {
		t.Errorf("kept %+v", s.pending)
	}
}

func bodies(rs []Reminder) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Body)
	}
	return out
}
