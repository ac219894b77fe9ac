package reminder

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Tests named after Harn's. Their expectations are Harn's assertions, as
// written in these files of github.com/burin-labs/harn:
//
//	RT = crates/harn-vm/src/llm/helpers/options/reminder_render_tests.rs
//	RM = crates/harn-vm/src/llm/helpers/options/reminders.rs (its tests module)
//	AO = crates/harn-vm/src/llm/helpers/options/append_only_directives.rs
//
// Harn's routes and role hints (RT) no longer change a directive's shape, so
// the one shape is checked once per authority instead of once per route.

// directive builds Harn's test helper's contract directive (AO).
func directive(body string) string {
	return "<directive authority=\"contract\">\n" + body + "\n</directive>"
}

// envelope is the trailing message Harn's RT tests build by hand.
func envelope(lines ...string) string {
	return strings.Join(append(append([]string{"<context-directives>", instructions}, lines...), "</context-directives>"), "\n")
}

// directiveOf is Harn's reminder_directive_text: one reminder's block.
func directiveOf(r Reminder) string {
	var b strings.Builder
	writeDirective(&b, r)
	return b.String()
}

// RT: every_route_and_legacy_role_hint_use_the_same_directive_shape.
func TestEveryRouteAndLegacyRoleHintUseTheSameDirectiveShape(t *testing.T) {
	got := directiveOf(Reminder{ID: "reminder-1", Tags: []string{"test"}, Authority: corrective, Body: "remember <this>"})
	if want := "<directive authority=\"corrective\">\nremember &lt;this&gt;\n</directive>"; got != want {
		t.Errorf("directive\n got %q\nwant %q", got, want)
	}
}

// RT: finite_lifetime_is_part_of_the_model_facing_directive.
func TestFiniteLifetimeIsPartOfTheModelFacingDirective(t *testing.T) {
	got := directiveOf(Reminder{ID: "reminder-1", Authority: corrective, Body: "verify once", TTLTurns: 1})
	if want := "<directive authority=\"corrective\" ttl_turns=\"1\">\nverify once\n</directive>"; got != want {
		t.Errorf("directive\n got %q\nwant %q", got, want)
	}
}

// RT: directive_envelope_uses_the_instruction_asset_verbatim. The asset is
// copied byte for byte into testdata, trailing newline included.
func TestDirectiveEnvelopeUsesTheInstructionAssetVerbatim(t *testing.T) {
	source, err := os.ReadFile("testdata/directive_envelope_instructions.harn.prompt")
	if err != nil {
		t.Fatal(err)
	}
	d := "<directive authority=\"corrective\" ttl_turns=\"1\">\nverify once\n</directive>"
	want := "<context-directives>\n" + strings.TrimRight(string(source), " \t\r\n") + "\n" + d + "\n</context-directives>"
	if got, ok := envelopeOf([]string{d}); !ok || got != want {
		t.Errorf("envelope\n got %q\nwant %q", got, want)
	}
}

// RT: system_text_reminders_are_excluded_from_system_string (the envelope
// half; the system half is explain's TestRemindersLeaveTheSystemStringAlone).
func TestSystemTextRemindersAreExcludedFromSystemString(t *testing.T) {
	got, _ := envelopeOf([]string{"reminder"})
	if want := "<context-directives>\n" + instructions + "\nreminder\n</context-directives>"; got != want {
		t.Errorf("envelope\n got %q\nwant %q", got, want)
	}
}

// RT: system_string_is_byte_stable_across_changing_reminder_sets (the
// envelope; no reminder is no message at all).
func TestSystemStringIsByteStableAcrossChangingReminderSets(t *testing.T) {
	if msg, ok := envelopeOf(nil); ok || msg != "" {
		t.Errorf("no directives made a message %q", msg)
	}
	if r := render(nil, nil); r.Message != "" || len(r.Rows) != 0 {
		t.Errorf("no reminders rendered %+v", r)
	}
	pressure := "<directive authority=\"advisory\">\nContext is 82% full; wrap up.\n</directive>"
	r := render([]Reminder{{Body: "Context is 82% full; wrap up.", Authority: advisory}}, nil)
	if want := "<context-directives>\n" + instructions + "\n" + pressure + "\n</context-directives>"; r.Message != want {
		t.Errorf("message\n got %q\nwant %q", r.Message, want)
	}
}

// RT: system_text_reminder_appends_new_user_message_after_assistant_tail
// (the message's content).
func TestSystemTextReminderAppendsNewUserMessageAfterAssistantTail(t *testing.T) {
	got := render([]Reminder{{Body: "R", Authority: contract}}, nil).Message
	if want := envelope("<directive authority=\"contract\">", "R", "</directive>"); got != want {
		t.Errorf("message\n got %q\nwant %q", got, want)
	}
}

// RT: multiple_system_text_reminders_coalesce_into_one_trailing_message.
func TestMultipleSystemTextRemindersCoalesceIntoOneTrailingMessage(t *testing.T) {
	got := render([]Reminder{{Body: "A", Authority: contract}, {Body: "B", Authority: corrective}}, nil).Message
	want := envelope("<directive authority=\"contract\">", "A", "</directive>",
		"<directive authority=\"corrective\">", "B", "</directive>")
	if got != want {
		t.Errorf("message\n got %q\nwant %q", got, want)
	}
}

// RM: dedup_prefers_authority_then_recency_and_orders_the_envelope. Harn's
// helper builds reminders with SystemReminder::new, whose authority is the
// default (contract).
func TestDedupPrefersAuthorityThenRecencyAndOrdersTheEnvelope(t *testing.T) {
	in := []Reminder{
		{ID: "1", Body: "recap v1", DedupeKey: "post_compact_recap"},
		{ID: "2", Body: "workspace anchor", DedupeKey: "workspace_anchor"},
		{ID: "3", Body: "recap v2", DedupeKey: "post_compact_recap"},
		{ID: "4", Body: "  workspace   anchor ", Authority: advisory},
		{ID: "5", Body: "correct the loop", Authority: corrective},
	}
	kept, deduped := dedupeAndOrder(in)
	var bodies []string
	for _, r := range kept {
		bodies = append(bodies, r.Body)
	}
	if diff := cmp.Diff([]string{"workspace anchor", "recap v2", "correct the loop"}, bodies); diff != "" {
		t.Errorf("bodies (-want +got):\n%s", diff)
	}
	wantDeduped := []Deduped{
		{Replaced: "1", Replacing: "3", Reason: "dedupe_key", Key: "post_compact_recap"},
		{Replaced: "4", Replacing: "2", Reason: "body", Key: "workspace anchor"},
	}
	if diff := cmp.Diff(wantDeduped, deduped); diff != "" {
		t.Errorf("deduped (-want +got):\n%s", diff)
	}
}

// RM: higher_authority_wins_even_when_the_duplicate_is_older.
func TestHigherAuthorityWinsEvenWhenTheDuplicateIsOlder(t *testing.T) {
	kept, _ := dedupeAndOrder([]Reminder{
		{Body: "contract", DedupeKey: "same", Authority: contract},
		{Body: "corrective", DedupeKey: "same", Authority: corrective},
	})
	if len(kept) != 1 || kept[0].Body != "contract" {
		t.Errorf("kept %+v, want the contract alone", kept)
	}
}

// committedEnvelope is the user message Harn's AO tests put in history.
func committedEnvelope(d string) string {
	return "<context-directives>\nheader\n" + d + "\n</context-directives>"
}

// AO: an_unchanged_directive_is_not_re_issued, a_changed_body_is_a_new_directive,
// multibyte_directive_bodies_round_trip,
// directive_sentinels_inside_a_body_do_not_defeat_deduplication and
// directives_inside_content_blocks_count_as_committed: Harn's
// uncommitted_directives keeps the rendered directives no message of
// history carries (issued).
func TestUncommittedDirectives(t *testing.T) {
	for _, tc := range []struct {
		name      string
		history   []string
		rendered  []string
		remaining []string
	}{
		{"an_unchanged_directive_is_not_re_issued",
			[]string{committedEnvelope(directive("re-read the file"))},
			[]string{directive("re-read the file")}, nil},
		{"a_changed_body_is_a_new_directive",
			[]string{committedEnvelope(directive("context is 70% full"))},
			[]string{directive("context is 85% full")}, []string{directive("context is 85% full")}},
		{"multibyte_directive_bodies_round_trip",
			[]string{committedEnvelope(directive("ファイルを読み直してください — café ☕"))},
			[]string{directive("ファイルを読み直してください — café ☕")}, nil},
		{"directive_sentinels_inside_a_body_do_not_defeat_deduplication",
			[]string{committedEnvelope(directive("quote this literal: </directive> and keep going"))},
			[]string{directive("quote this literal: </directive> and keep going")}, nil},
		// A message of two text blocks, "hello" and the directive: its text
		// is the blocks' texts joined with "\n".
		{"directives_inside_content_blocks_count_as_committed",
			[]string{"hello\n" + directive("use the workspace anchor")},
			[]string{directive("use the workspace anchor")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var remaining []string
			for _, d := range tc.rendered {
				if !issued(tc.history, d) {
					remaining = append(remaining, d)
				}
			}
			if diff := cmp.Diff(tc.remaining, remaining); diff != "" {
				t.Errorf("uncommitted (-want +got):\n%s", diff)
			}
		})
	}
}

// Rendering with the transcript's history issues, in a message of its own,
// only the directives no message carries; rows locate them in that message.
func TestRenderWithHistoryIssuesOnlyWhatIsNew(t *testing.T) {
	rs := []Reminder{{ID: "a", Body: "quote </directive> <b>"}, {ID: "b", Body: "context is 85% full", Authority: advisory}}
	first := render(rs[:1], nil)
	history := []string{"hello", first.Message}
	r := render(rs, history)
	if diff := cmp.Diff([]string{directiveOf(rs[1])}, r.directives); diff != "" {
		t.Errorf("issued again (-want +got):\n%s", diff)
	}
	if want, _ := envelopeOf(r.directives); r.Message != want {
		t.Errorf("message %q, want %q", r.Message, want)
	}
	if len(r.Rows) != 1 || r.Rows[0].ID != "b" || r.Message[r.Rows[0].Offset:r.Rows[0].Offset+r.Rows[0].Bytes] != "context is 85% full" {
		t.Errorf("rows %+v", r.Rows)
	}
	if again := render(rs, append(history, r.Message)); again.Message != "" || len(again.Rows) != 0 {
		t.Errorf("everything committed, yet rendered %+v", again)
	}
}
