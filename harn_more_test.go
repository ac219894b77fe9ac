package promptloom

import (
	"strings"
	"testing"

	"github.com/promptloom/promptloom/digest"
)

// Tests ported from the tests module of Harn's crates/harn-vm/src/llm/
// prompt.rs (assemble and replace), each named after the Harn test it
// ports and holding Harn's expectation. The halves that check
// ContextAssemblyManifest::validate are manifest validation's, ported in
// manifest/harn_test.go.

// before_then_after_join_is_blank_line_separated: before fragments in
// declaration order, then after fragments, joined by a blank line.
func TestBeforeThenAfterJoinIsBlankLineSeparated(t *testing.T) {
	r, err := Reduce([]Fragment{
		frag("parts", Before, "parts"),
		frag("appendix", After, "appendix"),
		frag("base", Before, "base"),
		frag("reminder", Before, "reminder"),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "parts\n\nbase\n\nreminder\n\nappendix"; !r.Present || r.System != want {
		t.Errorf("system = %q (present %v), want %q", r.System, r.Present, want)
	}
}

// replacement_root_preserves_exact_bytes_and_has_single_provenance_entry:
// the replacement's bytes are the prompt, untrimmed, with one row of 20
// bytes whose reason is "exclusive replacement root". (Harn's validate call
// is manifest/harn_test.go's; what it reconciles is checked here on the
// row: the whole prompt, from offset 0, with the whole prompt's digest.)
func TestReplacementRootPreservesExactBytesAndHasSingleProvenanceEntry(t *testing.T) {
	r, err := Reduce([]Fragment{Replacement("  exact replacement\n")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.System != "  exact replacement\n" || !r.Present {
		t.Errorf("system = %q (present %v)", r.System, r.Present)
	}
	if r.Root != RootReplacement {
		t.Errorf("root = %s, want %s", r.Root, RootReplacement)
	}
	if len(r.Rows) != 1 {
		t.Fatalf("%d rows, want 1", len(r.Rows))
	}
	row := r.Rows[0]
	if row.Bytes != 20 || row.Reason != "exclusive replacement root" || !row.Included {
		t.Errorf("row = bytes %d, reason %q, included %v", row.Bytes, row.Reason, row.Included)
	}
	if row.Offset != 0 || row.Digest != r.WholeDigest || r.WholeDigest != digest.Of("  exact replacement\n") {
		t.Errorf("row offset %d, digest %v; whole digest %v", row.Offset, row.Digest, r.WholeDigest)
	}
}

// empty_and_whitespace_bodies_are_excluded_with_reason.
func TestEmptyAndWhitespaceBodiesAreExcludedWithReason(t *testing.T) {
	r, err := Reduce([]Fragment{frag("a", Before, "  \n  "), frag("b", Before, "kept")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.System != "kept" {
		t.Errorf("system = %q, want %q", r.System, "kept")
	}
	if r.Rows[0].Included || r.Rows[0].Reason != "empty body" {
		t.Errorf("row a: included %v, reason %q; want excluded, %q", r.Rows[0].Included, r.Rows[0].Reason, "empty body")
	}
	if !r.Rows[1].Included {
		t.Error("row b is excluded")
	}
}

// requires_tools_gates_inclusion: a fragment gated on a tool is excluded,
// and the prompt absent, without it, and included with it.
func TestRequiresToolsGatesInclusion(t *testing.T) {
	gated := Fragment{ID: "todo.guidance", Source: "tool:todo", Body: "update the tracker", RequiresTools: []string{"todo"}}

	r, err := Reduce([]Fragment{gated}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Present {
		t.Errorf("without the tool the prompt is %q, want none", r.System)
	}
	if r.Rows[0].Included || !strings.Contains(r.Rows[0].Reason, "requires tool `todo`") {
		t.Errorf("without the tool: included %v, reason %q", r.Rows[0].Included, r.Rows[0].Reason)
	}

	r, err = Reduce([]Fragment{gated}, &Options{Tools: []string{"todo"}})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Present || r.System != "update the tracker" {
		t.Errorf("with the tool the prompt is %q (present %v)", r.System, r.Present)
	}
	if !r.Rows[0].Included || !strings.Contains(r.Rows[0].Reason, "tool(s) present: todo") {
		t.Errorf("with the tool: included %v, reason %q", r.Rows[0].Included, r.Rows[0].Reason)
	}
}

// empty_fragment_set_yields_none: no fragment, no prompt and no row; the
// manifest of it (validated in manifest/harn_test.go) holds the digest of
// the empty string.
func TestEmptyFragmentSetYieldsNone(t *testing.T) {
	for _, frags := range [][]Fragment{nil, {}} {
		r, err := Reduce(frags, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Present || r.System != "" || len(r.Rows) != 0 {
			t.Errorf("Reduce(%v): system %q (present %v), %d rows", frags, r.System, r.Present, len(r.Rows))
		}
		if r.Root != RootComposed || r.WholeDigest != digest.String("") {
			t.Errorf("Reduce(%v): root %s, whole digest %v", frags, r.Root, r.WholeDigest)
		}
	}
}

// duplicate_included_id_and_digest_is_rejected, its assembly half: Harn's
// assemble reduces two copies of one fragment to two included rows with one
// id and one digest, and it is validation (manifest/harn_test.go) that
// refuses them. Reduce does the same: it does not refuse them itself.
func TestDuplicateIncludedIDAndDigestIsRejected(t *testing.T) {
	repeated := frag("same", Before, "duplicate")
	r, err := Reduce([]Fragment{repeated, repeated}, nil)
	if err != nil {
		t.Fatalf("Reduce refused what Harn's assemble reduces: %v", err)
	}
	if r.System != "duplicate\n\nduplicate" {
		t.Errorf("system = %q", r.System)
	}
	if len(r.Rows) != 2 || !r.Rows[0].Included || !r.Rows[1].Included ||
		r.Rows[0].Fragment.ID != r.Rows[1].Fragment.ID || r.Rows[0].Digest != r.Rows[1].Digest {
		t.Errorf("rows: %+v", r.Rows)
	}
}
