package options_test

import (
	"strings"
	"testing"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/harn/options"
)

// Tests ported from Harn's crates/harn-vm/src/llm/helpers/options/
// reminder_render_tests.rs, the ones about the system string, run here on
// Parse and promptloom.Reduce alone (explain/harn_system_test.go runs them
// through explain). Each is named after the Harn test it ports and holds
// Harn's expectation.
//
// Harn's compose_system_prompt takes the primary text as an argument beside
// the options. Where Harn's test passes "base" beside a string-less options
// dict, the options' string system carries it (both become the one
// fragment "primary"); beside a system list, which leaves no room for a
// string, it is the one-item _system_fragments below: the fragment Harn
// builds from the argument (id and source primary, before bucket, body
// base).

const primaryBase = `"_system_fragments": [{"id": "primary", "source": "primary", "body": "base"}]`

// assemble is Harn's assemble_system_prompt over Parse: the options read,
// their fragments reduced under their own tools and capabilities.
func assemble(t *testing.T, in string) (*promptloom.Reduction, *options.Options) {
	t.Helper()
	o, err := options.Parse([]byte(in), nil)
	if err != nil {
		t.Fatalf("Parse(%s): %v", in, err)
	}
	r, err := promptloom.Reduce(o.Fragments(), &promptloom.Options{Tools: o.ActiveTools(), Capabilities: o.AllCapabilities()})
	if err != nil {
		t.Fatalf("Reduce(%s): %v", in, err)
	}
	return r, o
}

// system is compose_system_prompt: the prompt, which must be present.
func system(t *testing.T, in string) string {
	t.Helper()
	r, _ := assemble(t, in)
	if !r.Present {
		t.Fatalf("%s: no prompt", in)
	}
	return r.System
}

func wantSystem(t *testing.T, in, want string) {
	t.Helper()
	if got := system(t, in); got != want {
		t.Errorf("%s:\nsystem = %q\nwant     %q", in, got, want)
	}
}

func rowByID(t *testing.T, r *promptloom.Reduction, id string) promptloom.Row {
	t.Helper()
	for _, row := range r.Rows {
		if row.Fragment.ID == id {
			return row
		}
	}
	t.Fatalf("no row %q", id)
	return promptloom.Row{}
}

func ids(r *promptloom.Reduction) map[string]bool {
	out := map[string]bool{}
	for _, row := range r.Rows {
		out[row.Fragment.ID] = true
	}
	return out
}

// wantError is Harn's unwrap_err with the words its assertion looks for.
func wantError(t *testing.T, in string, words ...string) {
	t.Helper()
	_, err := options.Parse([]byte(in), nil)
	if err == nil {
		t.Fatalf("Parse(%s) accepted what Harn refuses", in)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("Parse(%s): error %q does not hold %q", in, err, w)
		}
	}
}

// system_text_reminders_are_excluded_from_system_string, its system half:
// a directive never enters the system string (it is rendered to the
// trailing user envelope, harn/reminder's tests).
func TestSystemTextRemindersAreExcludedFromSystemString(t *testing.T) {
	r, o := assemble(t, `{"system": ["parts", {"content": "appendix", "position": "after"}], `+primaryBase+`,
		"reminders": [{"body": "reminder"}]}`)
	if want := "parts\n\nbase\n\nappendix"; r.System != want {
		t.Errorf("system = %q, want %q", r.System, want)
	}
	if len(o.Reminders) != 1 || o.Reminders[0].Body != "reminder" {
		t.Errorf("reminders = %+v, want the one directive, read beside the system string", o.Reminders)
	}
}

// full_host_option_ordering_is_faithful.
func TestFullHostOptionOrderingIsFaithful(t *testing.T) {
	got := system(t, `{"system": ["P", "X", "C", "parts", {"content": "A", "position": "after"},
		{"content": "S", "position": "after"}], `+primaryBase+`, "reminders": [{"body": "R"}]}`)
	if want := "P\n\nX\n\nC\n\nparts\n\nbase\n\nA\n\nS"; got != want {
		t.Errorf("system = %q, want %q", got, want)
	}
	if strings.Contains(got, "R") {
		t.Errorf("the reminder is in the system string %q", got)
	}
}

// system_string_is_byte_stable_across_changing_reminder_sets, its system
// half: turn N without reminders and turn N+1 with a token-pressure one give
// byte-identical system strings.
func TestSystemStringIsByteStableAcrossChangingReminderSets(t *testing.T) {
	base := `"system": ["parts", {"content": "appendix", "position": "after"}], ` + primaryBase
	turnN := system(t, `{`+base+`}`)
	turnN1 := system(t, `{`+base+`, "reminders": [{"body": "Context is 82% full; wrap up.", "authority": "advisory"}]}`)
	if turnN != turnN1 {
		t.Errorf("system string changed with the reminder set: %q, then %q", turnN, turnN1)
	}
	if strings.Contains(turnN, "context-directives") {
		t.Errorf("system string %q holds the directive envelope", turnN)
	}
}

// fragment_position_override_moves_to_after.
func TestFragmentPositionOverrideMovesToAfter(t *testing.T) {
	wantSystem(t, `{"system": [{"content": "moved", "position": "after"}], `+primaryBase+`}`, "base\n\nmoved")
}

// fragment_with_title_renders_heading.
func TestFragmentWithTitleRendersHeading(t *testing.T) {
	wantSystem(t, `{"system": [{"content": "body", "title": "Title"}]}`, "## Title\nbody")
}

// string_fragments_expand_in_list_order.
func TestStringFragmentsExpandInListOrder(t *testing.T) {
	wantSystem(t, `{"system": ["one", "two"]}`, "one\n\ntwo")
}

// list_form_partitions_before_and_after_around_primary.
func TestListFormPartitionsBeforeAndAfterAroundPrimary(t *testing.T) {
	wantSystem(t, `{"system": ["head", {"content": "tail", "position": "after"},
		{"content": "head2", "position": "before"}], `+primaryBase+`}`, "head\n\nhead2\n\nbase\n\ntail")
}

// fragment_dict_alias_key_is_rejected.
func TestFragmentDictAliasKeyIsRejected(t *testing.T) {
	wantError(t, `{"system": [{"text": "body"}]}`, "`text` was removed", "use `content`", "content: string")
}

// fragment_dict_unknown_key_is_rejected.
func TestFragmentDictUnknownKeyIsRejected(t *testing.T) {
	wantError(t, `{"system": [{"content": "body", "weight": "3"}]}`, "unknown fragment key `weight`", `position?: "before"|"after"`)
}

// nil_system_arg_falls_back_to_opts_system.
func TestNilSystemArgFallsBackToOptsSystem(t *testing.T) {
	wantSystem(t, `{"system": "fromopts"}`, "fromopts")
}

// tool_guidance_is_injected_only_when_the_tool_is_present.
func TestToolGuidanceIsInjectedOnlyWhenTheToolIsPresent(t *testing.T) {
	wantSystem(t, `{"system": "base", "tools": [{"name": "todo", "description": "Track tasks",
		"guidance": "Always update the TODO tracker when working from a plan."}]}`,
		"base\n\nAlways update the TODO tracker when working from a plan.")
	wantSystem(t, `{"system": "base", "tools": [{"name": "read", "description": "Read files"}]}`, "base")
}

// assemble_records_provenance_for_every_fragment.
func TestAssembleRecordsProvenanceForEveryFragment(t *testing.T) {
	r, _ := assemble(t, `{"system": ["parts"], `+primaryBase+`, "tools": [{"name": "todo",
		"description": "Track tasks", "guidance": "Update the tracker."}]}`)
	got := ids(r)
	for _, id := range []string{"system[0]", "primary", "tool:todo.guidance"} {
		if !got[id] {
			t.Errorf("no row %q in %v", id, got)
		}
	}
	todo := rowByID(t, r, "tool:todo.guidance")
	if !todo.Included || !strings.Contains(todo.Reason, "tool(s) present: todo") {
		t.Errorf("todo guidance: included %v, reason %q", todo.Included, todo.Reason)
	}
}

// system_fragments_expand_in_place_of_the_single_primary: the decomposed
// primary gives the bytes of the joined one, each part its own row and no
// opaque primary.
func TestSystemFragmentsExpandInPlaceOfTheSinglePrimary(t *testing.T) {
	host := `"system": [{"content": "X"}, {"content": "A", "position": "after"}]`
	decomposed := `{` + host + `, "_system_fragments": [
		{"id": "primary:system", "source": "primary", "body": "base"},
		{"id": "primary:active_skills", "source": "primary", "body": "## Active skills"},
		{"id": "primary:loop_contract", "source": "primary", "body": "Keep going until done."}]}`
	baseline := `{` + host + `, "_system_fragments": [{"id": "primary", "source": "primary",
		"body": "base\n\n## Active skills\n\nKeep going until done."}]}`
	fromFragments, fromString := system(t, decomposed), system(t, baseline)
	if fromFragments != fromString {
		t.Errorf("decomposed %q, joined %q", fromFragments, fromString)
	}
	if want := "X\n\nbase\n\n## Active skills\n\nKeep going until done.\n\nA"; fromFragments != want {
		t.Errorf("system = %q, want %q", fromFragments, want)
	}
	r, _ := assemble(t, decomposed)
	got := ids(r)
	for _, id := range []string{"primary:system", "primary:active_skills", "primary:loop_contract"} {
		if !got[id] {
			t.Errorf("no row %q in %v", id, got)
		}
	}
	if got["primary"] {
		t.Error("an opaque primary row beside the decomposed parts")
	}
}

// system_fragments_supersede_the_system_arg: with _system_fragments the
// string system contributes nothing.
func TestSystemFragmentsSupersedeTheSystemArg(t *testing.T) {
	wantSystem(t, `{"system": "ignored opts.system", "_system_fragments": [{"id": "primary:system",
		"source": "primary", "body": "decomposed"}]}`, "decomposed")
}

// empty_system_fragments_yield_no_primary: an empty list still claims the
// primary block, so the string system does not leak back in.
func TestEmptySystemFragmentsYieldNoPrimary(t *testing.T) {
	r, _ := assemble(t, `{"system": "should not appear", "_system_fragments": []}`)
	if r.Present {
		t.Errorf("system = %q, want none", r.System)
	}
}

// system_fragments_honor_per_part_tool_gating.
func TestSystemFragmentsHonorPerPartToolGating(t *testing.T) {
	r, _ := assemble(t, `{"_system_fragments": [{"id": "primary:todo_nudge",
		"body": "Keep the TODO list current.", "requires_tools": ["todo"]}]}`)
	if r.Present {
		t.Errorf("system = %q, want none", r.System)
	}
	nudge := rowByID(t, r, "primary:todo_nudge")
	if nudge.Included || !strings.Contains(nudge.Reason, "requires tool `todo`") {
		t.Errorf("nudge: included %v, reason %q", nudge.Included, nudge.Reason)
	}
}

// system_fragments_can_target_the_tail_bucket.
func TestSystemFragmentsCanTargetTheTailBucket(t *testing.T) {
	in := `{"_system_fragments": [{"id": "primary:system", "source": "primary", "body": "base"},
		{"id": "primary:scratchpad", "source": "primary", "body": "scratchpad tail", "bucket": "after"}],
		"system": [{"content": "host suffix", "position": "after"}]}`
	wantSystem(t, in, "base\n\nhost suffix\n\nscratchpad tail")
	r, _ := assemble(t, in)
	if b := rowByID(t, r, "primary:scratchpad").Fragment.Bucket; b.String() != "after" {
		t.Errorf("scratchpad bucket = %s, want after", b)
	}
}

// system_fragments_reject_unknown_bucket.
func TestSystemFragmentsRejectUnknownBucket(t *testing.T) {
	wantError(t, `{"_system_fragments": [{"id": "primary:bad", "body": "bad", "bucket": "middle"}]}`, "bucket must be")
}

// system_replacement_rejects_noncanonical_shapes_at_the_assembly_boundary.
func TestSystemReplacementRejectsNoncanonicalShapesAtTheAssemblyBoundary(t *testing.T) {
	for in, want := range map[string]string{
		`{"system": {"mode": "append", "content": "prompt"}}`: `system.mode: expected "replace"`,
		`{"system": {"mode": "replace", "text": "prompt"}}`:   "unknown replacement key `text`",
		`{"system": {"mode": "replace", "content": true}}`:    "system.content: expected a string",
	} {
		wantError(t, in, want)
	}
}

// context_profile_fragments_join_prompt_explain_provenance.
func TestContextProfileFragmentsJoinPromptExplainProvenance(t *testing.T) {
	r, _ := assemble(t, `{"context_profile": {"caps": ["remote.github"], "prompt_fragments": [
		{"id": "profile:github", "source": "profile:github", "body": "Use GitHub-aware workflows.",
		"requires_caps": ["remote.github"]}]}}`)
	if !r.Present || r.System != "Use GitHub-aware workflows." {
		t.Errorf("system = %q (present %v)", r.System, r.Present)
	}
	row := rowByID(t, r, "profile:github")
	if !row.Included || !strings.Contains(row.Reason, "capabilit") {
		t.Errorf("profile row: included %v, reason %q", row.Included, row.Reason)
	}
}

// assemble_system_prompt returns the replacement root before it reads
// _system_fragments or context_profile (its "exclusive replacement root":
// no other contributor participates), so nothing in them is an error beside
// a replacement root, not even a bucket Harn would refuse; they are
// ignored, with a warning.
func TestReplacementRootReadsNoOtherContributor(t *testing.T) {
	r, o := assemble(t, `{"system": {"mode": "replace", "content": " whole "},
		"_system_fragments": [{"id": "primary:bad", "body": "bad", "bucket": "middle"}],
		"context_profile": {"caps": ["c"], "prompt_fragments": [{"body": "p"}]}}`)
	if r.Root != promptloom.RootReplacement || r.System != " whole " || len(r.Rows) != 1 {
		t.Errorf("root %s, system %q, %d rows", r.Root, r.System, len(r.Rows))
	}
	var paths []string
	for _, w := range o.Warnings {
		paths = append(paths, w.Path)
	}
	if want := "_system_fragments context_profile.prompt_fragments"; strings.Join(paths, " ") != want {
		t.Errorf("warnings at %v, want at %s", paths, want)
	}
}
