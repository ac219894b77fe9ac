package explain

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Tests ported from Harn's crates/harn-vm/src/llm/prompt.rs (mod tests),
// driven through options as prompt_explain is.

// before_then_after_join_is_blank_line_separated: before fragments in
// declaration order, then after fragments, joined by a blank line.
func TestBeforeThenAfterJoinIsBlankLineSeparated(t *testing.T) {
	e := explainJSON(t, `{"system": ["parts", {"content": "appendix", "position": "after"}, "base", "reminder"]}`)
	if got := e.System; got != "parts\n\nbase\n\nreminder\n\nappendix" {
		t.Errorf("system = %q", got)
	}
}

// empty_and_whitespace_bodies_are_excluded_with_reason.
func TestEmptyAndWhitespaceBodiesAreExcludedWithReason(t *testing.T) {
	e := explainJSON(t, `{"system": ["  \n  ", "kept"]}`)
	if e.System != "kept" || e.Fragments[0].Included || e.Fragments[0].Reason != "empty body" || !e.Fragments[1].Included {
		t.Errorf("got %q %+v", e.System, e.Fragments)
	}
}

// requires_tools_gates_inclusion.
func TestRequiresToolsGatesInclusion(t *testing.T) {
	gated := `{"body": "update the tracker", "id": "todo.guidance", "source": "tool:todo", "requires_tools": ["todo"]}`
	e := explainJSON(t, `{"_system_fragments": [`+gated+`]}`)
	if !e.absent() || e.Fragments[0].Included || !strings.Contains(e.Fragments[0].Reason, "requires tool `todo`") {
		t.Errorf("tool absent: %+v", e.Fragments)
	}
	e = explainJSON(t, `{"_system_fragments": [`+gated+`], "tools": [{"name": "todo"}]}`)
	if e.System != "update the tracker" || !strings.Contains(e.Fragments[0].Reason, "tool(s) present: todo") {
		t.Errorf("tool present: %q %+v", e.System, e.Fragments)
	}
}

// empty_fragment_set_yields_none.
func TestEmptyFragmentSetYieldsNone(t *testing.T) {
	e := explainJSON(t, `{}`)
	if !e.absent() || len(e.Fragments) != 0 || e.Manifest.JoinSeparatorCount != 0 {
		t.Errorf("got %+v", e)
	}
}

// replacement_root_preserves_exact_bytes_and_has_single_provenance_entry.
func TestReplacementRootPreservesExactBytesAndHasSingleProvenanceEntry(t *testing.T) {
	e := explainJSON(t, `{"system": {"mode": "replace", "content": "  exact replacement\n"}}`)
	if e.System != "  exact replacement\n" || e.Manifest.Root != "replacement" || len(e.Fragments) != 1 ||
		e.Fragments[0].Bytes != 20 || e.Fragments[0].Reason != "exclusive replacement root" {
		t.Errorf("got %q %+v", e.System, e.Fragments)
	}
}

// duplicate_included_id_and_digest_is_rejected.
func TestDuplicateIncludedIDAndDigestIsRejected(t *testing.T) {
	_, err := Explain([]byte(`{"_system_fragments": [{"id": "same", "body": "duplicate"}, {"id": "same", "body": "duplicate"}]}`), nil)
	if err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("err = %v", err)
	}
}

// The JSON form carries every field of Harn's provenance_json (prompt.rs,
// AssembledPrompt::provenance_json), with Harn's constant values, and each
// row carries a producer equal to its source.
func TestJSONCarriesHarnProvenanceFields(t *testing.T) {
	e := explainJSON(t, `{"system": ["a", "b", " "], "actor_chain": [{"id": "x"}]}`)
	var buf bytes.Buffer
	if err := e.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"schema": "harn.llm.context_manifest.v1", "scope": "system_prompt",
		"boundary": "observed_llm_call_pre_egress", "messages": "served_context_digest_only",
		"call_role": "unattributed", "actor_chain": []any{map[string]any{"id": "x"}}, "root": "composed",
		"system_prompt_bytes": float64(4), "join_separator": "\n\n", "join_separator_bytes": float64(2),
		"join_separator_count": float64(1), "included": float64(2), "excluded": float64(1),
	}
	for k, w := range want {
		if diff := cmp.Diff(w, got[k]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", k, diff)
		}
	}
	for _, k := range []string{"fragments", "whole_prompt_digest", "system"} {
		if _, ok := got[k]; !ok {
			t.Errorf("no %q", k)
		}
	}
	for _, r := range got["fragments"].([]any) {
		row := r.(map[string]any)
		for _, k := range []string{"id", "source", "bucket", "included", "reason", "bytes", "digest", "producer"} {
			if _, ok := row[k]; !ok {
				t.Errorf("row %v has no %q", row["id"], k)
			}
		}
		if row["producer"] != row["source"] {
			t.Errorf("row %v: producer %v, source %v", row["id"], row["producer"], row["source"])
		}
	}
	e = explainJSON(t, `{}`)
	buf.Reset()
	_ = e.WriteJSON(&buf)
	if !strings.Contains(buf.String(), `"actor_chain": null`) || !strings.Contains(buf.String(), `"join_separator_count": 0`) {
		t.Errorf("empty prompt JSON:\n%s", buf.String())
	}
}

// Lint puts the options' warnings first, with their paths.
func TestLintReportsOptionsWarnings(t *testing.T) {
	e := explainJSON(t, `{"_system_fragments": [{"body": "x", "requires_tool": ["t"]}]}`)
	ws := Lint(e, nil)
	if len(ws) != 1 || ws[0].Path != "_system_fragments[0].requires_tool" || !strings.HasPrefix(ws[0].Message, "options: _system_fragments[0].requires_tool: ") {
		t.Errorf("Lint = %+v", ws)
	}
}

// A prompt is absent (JSON null) when no fragment is included, and
// present, if empty, for a replacement root of "": System alone does not
// tell them apart, the rows do.
func TestAbsentAndEmptyPrompts(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{}`, `"system": null`},
		{`{"system": {"mode": "replace", "content": ""}}`, `"system": ""`},
	} {
		e := explainJSON(t, tt.in)
		var b strings.Builder
		if err := e.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		raw, err := e.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tt.want) || !strings.Contains(string(raw), strings.ReplaceAll(tt.want, " ", "")) {
			t.Errorf("%s: %s\n%s", tt.in, b.String(), raw)
		}
	}
}
