package explain

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/harn/options"
)

// Tests ported from Harn's crates/harn-vm/src/llm/helpers/options/
// reminder_render_tests.rs, the ones about the system string (its
// reminder tests are in reminder/render_test.go). Harn's compose_system_prompt
// takes the primary text as an argument beside the options; promptloom reads
// it from the options, so a primary "base" given beside a system list is
// written here as the one-item _system_fragments
// [{"id":"primary","source":"primary","body":"base"}], which is the fragment
// Harn builds from the argument (same id, source, bucket and body).

const primaryBase = `"_system_fragments": [{"id": "primary", "source": "primary", "body": "base"}]`

func mustText(t *testing.T, in, want string) *Explanation {
	t.Helper()
	e := explainJSON(t, in)
	if e.absent() || e.System != want {
		t.Errorf("system = %v, want %q", e.System, want)
	}
	return e
}

func rowByID(t *testing.T, e *Explanation, id string) Row {
	t.Helper()
	for _, r := range e.Fragments {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no row %q in %+v", id, e.Fragments)
	return Row{}
}

// full_host_option_ordering_is_faithful.
func TestFullHostOptionOrderingIsFaithful(t *testing.T) {
	mustText(t, `{"system": ["P", "X", "C", "parts", {"content": "A", "position": "after"},
		{"content": "S", "position": "after"}], `+primaryBase+`}`, "P\n\nX\n\nC\n\nparts\n\nbase\n\nA\n\nS")
}

// system_text_reminders_are_excluded_from_system_string (the system half;
// the reminder half is reminder/render_test.go's).
func TestSystemTextRemindersAreExcludedFromSystemStringViaOptions(t *testing.T) {
	e := mustText(t, `{"system": ["parts", {"content": "appendix", "position": "after"}], `+primaryBase+`,
		"reminders": [{"body": "reminder"}]}`, "parts\n\nbase\n\nappendix")
	if e.Reminders == nil || !strings.Contains(e.Reminders.Message, "\nreminder\n") {
		t.Errorf("the reminder is rendered nowhere: %+v", e.Reminders)
	}
}

// fragment_position_override_moves_to_after.
func TestFragmentPositionOverrideMovesToAfter(t *testing.T) {
	mustText(t, `{"system": [{"content": "moved", "position": "after"}], `+primaryBase+`}`, "base\n\nmoved")
}

// fragment_with_title_renders_heading.
func TestFragmentWithTitleRendersHeading(t *testing.T) {
	mustText(t, `{"system": [{"content": "body", "title": "Title"}]}`, "## Title\nbody")
}

// string_fragments_expand_in_list_order.
func TestStringFragmentsExpandInListOrder(t *testing.T) {
	mustText(t, `{"system": ["one", "two"]}`, "one\n\ntwo")
}

// list_form_partitions_before_and_after_around_primary.
func TestListFormPartitionsBeforeAndAfterAroundPrimary(t *testing.T) {
	mustText(t, `{"system": ["head", {"content": "tail", "position": "after"},
		{"content": "head2", "position": "before"}], `+primaryBase+`}`, "head\n\nhead2\n\nbase\n\ntail")
}

// fragment_dict_alias_key_is_rejected and fragment_dict_unknown_key_is_rejected
// and system_replacement_rejects_noncanonical_shapes_at_the_assembly_boundary
// and system_fragments_reject_unknown_bucket: each error holds the words
// Harn's test looks for.
func TestHarnErrorWording(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"fragment_dict_alias_key_is_rejected", `{"system": [{"text": "body"}]}`,
			[]string{"`text` was removed", "use `content`", "content: string"}},
		{"fragment_dict_unknown_key_is_rejected", `{"system": [{"content": "body", "weight": "3"}]}`,
			[]string{"unknown fragment key `weight`", `position?: "before"|"after"`}},
		{"replacement mode", `{"system": {"mode": "append", "content": "prompt"}}`,
			[]string{`system.mode: expected "replace"`}},
		{"replacement alias", `{"system": {"mode": "replace", "text": "prompt"}}`,
			[]string{"unknown replacement key `text`"}},
		{"replacement content", `{"system": {"mode": "replace", "content": true}}`,
			[]string{"system.content: expected a string"}},
		{"system_fragments_reject_unknown_bucket", `{"_system_fragments": [{"id": "primary:bad", "body": "bad", "bucket": "middle"}]}`,
			[]string{"bucket must be"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Explain([]byte(tt.in), nil)
			var oe *options.Error
			if !errors.As(err, &oe) {
				t.Fatalf("err = %v, want *options.Error", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not contain %q", err, w)
				}
			}
		})
	}
}

// nil_system_arg_falls_back_to_opts_system.
func TestNilSystemArgFallsBackToOptsSystem(t *testing.T) {
	mustText(t, `{"system": "fromopts"}`, "fromopts")
}

// tool_guidance_is_injected_only_when_the_tool_is_present.
func TestToolGuidanceIsInjectedOnlyWhenTheToolIsPresent(t *testing.T) {
	mustText(t, `{"system": "base", "tools": [{"name": "todo", "description": "Track tasks",
		"guidance": "Always update the TODO tracker when working from a plan."}]}`,
		"base\n\nAlways update the TODO tracker when working from a plan.")
	e := mustText(t, `{"system": "base", "tools": [{"name": "read", "description": "Read files"}]}`, "base")
	if len(e.Fragments) != 1 {
		t.Errorf("a tool without guidance made a row: %+v", e.Fragments)
	}
}

// assemble_records_provenance_for_every_fragment.
func TestAssembleRecordsProvenanceForEveryFragment(t *testing.T) {
	e := explainJSON(t, `{"system": ["parts"], `+primaryBase+`, "tools": [{"name": "todo",
		"description": "Track tasks", "guidance": "Update the tracker."}]}`)
	for _, id := range []string{"system[0]", "primary", "tool:todo.guidance"} {
		rowByID(t, e, id)
	}
	todo := rowByID(t, e, "tool:todo.guidance")
	if !todo.Included || !strings.Contains(todo.Reason, "tool(s) present: todo") {
		t.Errorf("todo row %+v", todo)
	}
}

// system_fragments_expand_in_place_of_the_single_primary.
func TestSystemFragmentsExpandInPlaceOfTheSinglePrimary(t *testing.T) {
	host := `"system": [{"content": "X"}, {"content": "A", "position": "after"}]`
	part := func(id, body string) string {
		return `{"id": "` + id + `", "source": "primary", "body": "` + body + `"}`
	}
	decomposed := explainJSON(t, `{`+host+`, "_system_fragments": [`+part("primary:system", "base")+`, `+
		part("primary:active_skills", "## Active skills")+`, `+part("primary:loop_contract", "Keep going until done.")+`]}`)
	joined := explainJSON(t, `{`+host+`, "_system_fragments": [`+part("primary", `base\n\n## Active skills\n\nKeep going until done.`)+`]}`)
	want := "X\n\nbase\n\n## Active skills\n\nKeep going until done.\n\nA"
	if decomposed.System != want || joined.System != want {
		t.Errorf("decomposed %q, joined %q, want %q", decomposed.System, joined.System, want)
	}
	for _, id := range []string{"primary:system", "primary:active_skills", "primary:loop_contract"} {
		rowByID(t, decomposed, id)
	}
	for _, r := range decomposed.Fragments {
		if r.ID == "primary" {
			t.Errorf("an opaque primary row: %+v", r)
		}
	}
}

// system_fragments_supersede_the_system_arg.
func TestSystemFragmentsSupersedeTheSystemArg(t *testing.T) {
	mustText(t, `{"system": "ignored opts.system", "_system_fragments": [{"id": "primary:system",
		"source": "primary", "body": "decomposed"}]}`, "decomposed")
}

// empty_system_fragments_yield_no_primary.
func TestEmptySystemFragmentsYieldNoPrimary(t *testing.T) {
	e := explainJSON(t, `{"system": "should not appear", "_system_fragments": []}`)
	if !e.absent() || len(e.Fragments) != 0 {
		t.Errorf("system %v, rows %+v", e.System, e.Fragments)
	}
}

// system_fragments_honor_per_part_tool_gating.
func TestSystemFragmentsHonorPerPartToolGating(t *testing.T) {
	e := explainJSON(t, `{"_system_fragments": [{"id": "primary:todo_nudge",
		"body": "Keep the TODO list current.", "requires_tools": ["todo"]}]}`)
	r := rowByID(t, e, "primary:todo_nudge")
	if !e.absent() || r.Included || !strings.Contains(r.Reason, "requires tool `todo`") {
		t.Errorf("system %v, row %+v", e.System, r)
	}
}

// system_fragments_can_target_the_tail_bucket.
func TestSystemFragmentsCanTargetTheTailBucket(t *testing.T) {
	e := mustText(t, `{"_system_fragments": [{"id": "primary:system", "source": "primary", "body": "base"},
		{"id": "primary:scratchpad", "source": "primary", "body": "scratchpad tail", "bucket": "after"}],
		"system": [{"content": "host suffix", "position": "after"}]}`, "base\n\nhost suffix\n\nscratchpad tail")
	if r := rowByID(t, e, "primary:scratchpad"); r.Bucket != "after" {
		t.Errorf("bucket %q", r.Bucket)
	}
}

// context_profile_fragments_join_prompt_explain_provenance.
func TestContextProfileFragmentsJoinPromptExplainProvenance(t *testing.T) {
	e := mustText(t, `{"context_profile": {"caps": ["remote.github"], "prompt_fragments": [{"id": "profile:github",
		"source": "profile:github", "body": "Use GitHub-aware workflows.", "requires_caps": ["remote.github"]}]}}`,
		"Use GitHub-aware workflows.")
	if r := rowByID(t, e, "profile:github"); !r.Included || !strings.Contains(r.Reason, "capabilit") {
		t.Errorf("row %+v", r)
	}
}

// context_manifest_carries_the_current_delegated_actor_chain: Harn takes the
// chain from the current session; promptloom from the actor_chain option.
func TestContextManifestCarriesTheCurrentDelegatedActorChain(t *testing.T) {
	chain := `{"chain":["agent:reviewer"],"root":"user:test-owner"}` // keys sorted, as serde_json writes a Value
	e := explainJSON(t, `{"system": "review carefully", "actor_chain": `+chain+`}`)
	var buf bytes.Buffer
	if err := e.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if string(e.Manifest.ActorChain) != chain || !strings.Contains(buf.String(), `"actor_chain": {`) {
		t.Errorf("actor_chain %s / %s", e.Manifest.ActorChain, buf.String())
	}
}

// prompt.rs: manifest rows are in wire order, the before rows then the
// after ones, each bucket in declaration order (assemble's comment "Manifest
// order is wire order"), and an excluded row keeps the digest of its
// trimmed body.
func TestManifestOrderIsWireOrder(t *testing.T) {
	e := explainJSON(t, `{"system": [{"content": "a1", "position": "after"}, "b1",
		{"content": "  ", "position": "after"}, "b2"], "tools": [{"name": "t", "guidance": "g"}]}`)
	var ids []string
	for _, r := range e.Fragments {
		ids = append(ids, r.ID)
	}
	if got := strings.Join(ids, " "); got != "system[1] system[3] tool:t.guidance system[0] system[2]" {
		t.Errorf("row order %s", got)
	}
	empty := rowByID(t, e, "system[2]")
	if empty.Included || empty.Reason != "empty body" || empty.Bytes != 0 ||
		empty.Digest.String() != "blake3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262" {
		t.Errorf("empty row %+v", empty)
	}
}

// Harn's prompt-guidance demo (crates/harn-cli/assets/demo/prompt-guidance/
// scenario.harn, run by harn-cli's demo tests): prompt_explain with and
// without the todo tool; the guidance rides with the tool, and the rows say
// why.
func TestPromptGuidanceDemoScenario(t *testing.T) {
	const base = "You are Ness, a pragmatic engineering partner."
	const guidance = "Always update the TODO tracker after completing each item when working from a plan."
	read := `{"name": "read", "description": "Read a file"}`
	with := mustText(t, `{"system": "`+base+`", "tools": [{"name": "todo", "description": "Add/update/complete plan items",
		"guidance": "`+guidance+`"}, `+read+`]}`, base+"\n\n"+guidance)
	without := mustText(t, `{"system": "`+base+`", "tools": [`+read+`]}`, base)
	lines := func(e *Explanation) string {
		var b strings.Builder
		for _, r := range e.Fragments {
			b.WriteString(r.ID + " [" + r.Bucket + "] included=" + map[bool]string{true: "true", false: "false"}[r.Included] + " — " + r.Reason + "\n")
		}
		return b.String()
	}
	if got := lines(with); got != "primary [before] included=true — unconditional\ntool:todo.guidance [before] included=true — tool(s) present: todo\n" {
		t.Errorf("with todo:\n%s", got)
	}
	if got := lines(without); got != "primary [before] included=true — unconditional\n" {
		t.Errorf("without todo:\n%s", got)
	}
}
