package manifest

import (
	"errors"
	"strings"
	"testing"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/digest"
)

// Tests ported from Harn's crates/harn-vm/src/llm/prompt.rs (mod tests), the
// ones about ContextAssemblyManifest::validate: each checks the words of
// Harn's error, so the messages here keep them.

func reduceHarn(t *testing.T, frags ...promptloom.Fragment) (*Manifest, string) {
	t.Helper()
	r, err := promptloom.Reduce(frags, nil)
	if err != nil {
		t.Fatal(err)
	}
	return New(r, "unattributed"), r.System
}

// duplicate_included_id_and_digest_is_rejected.
func TestDuplicateIncludedIDAndDigestIsRejected(t *testing.T) {
	m, system := reduceHarn(t, frag("same", promptloom.Before, "duplicate"), frag("same", promptloom.Before, "duplicate"))
	err := Validate(m, system)
	var dup *RuleError // duplicate_segment
	if !errors.As(err, &dup) || !strings.Contains(err.Error(), "duplicate included context segment") {
		t.Errorf("Validate = %v", err)
	}
}

// included_segment_digest_must_match_its_exact_prompt_slice.
func TestIncludedSegmentDigestMustMatchItsExactPromptSlice(t *testing.T) {
	m, system := reduceHarn(t, frag("first", promptloom.Before, "alpha"), frag("second", promptloom.After, "omega"))
	m.Segments[0].Digest = digest.Of("wrong")
	err := Validate(m, system)
	var sd *RuleError // segment_digest
	if !errors.As(err, &sd) || !strings.Contains(err.Error(), "does not match retained bytes") {
		t.Errorf("Validate = %v", err)
	}
}

// replacement_root_with_a_surviving_segment_is_rejected.
func TestReplacementRootWithASurvivingSegmentIsRejected(t *testing.T) {
	m, _ := reduceHarn(t, promptloom.Replacement("replacement"))
	m.Segments = append(m.Segments, Segment{ID: "leaked", Producer: "test", Bucket: "before", Included: true,
		Reason: "deliberate leak", Bytes: 4, Digest: digest.Of("leak")})
	system := "replacement\n\nleak"
	m.WholePromptDigest, m.SystemPromptBytes = digest.Of(system), len(system)
	m.JoinSeparatorCount = 1
	err := Validate(m, system)
	var rr *RuleError // replacement_root
	if !errors.As(err, &rr) || !strings.Contains(err.Error(), "replacement root must contain exactly one") {
		t.Errorf("Validate = %v", err)
	}
}

// replacement_root_preserves_exact_bytes_and_has_single_provenance_entry and
// empty_fragment_set_yields_none: both manifests validate.
func TestHarnManifestsValidate(t *testing.T) {
	m, system := reduceHarn(t, promptloom.Replacement("  exact replacement\n"))
	if err := Validate(m, system); err != nil || m.Segments[0].Bytes != 20 || m.Segments[0].Reason != "exclusive replacement root" {
		t.Errorf("replacement: %v %+v", err, m.Segments)
	}
	m, system = reduceHarn(t)
	if err := Validate(m, system); err != nil || len(m.Segments) != 0 {
		t.Errorf("empty: %v %+v", err, m.Segments)
	}
}

// The order Harn's validate checks in, with its words: call_role, then the
// byte count and the whole digest of the served prompt, then duplicates, the
// replacement root, the sum of the segments, each segment's digest and
// separator. A served prompt with one byte changed is first a whole-digest
// mismatch.
func TestValidateOrderAndWordsAreHarns(t *testing.T) {
	tests := []struct {
		name string
		edit func(m *Manifest, system *string)
		want string
	}{
		{"call role", func(m *Manifest, s *string) { m.CallRole = ""; *s = "x" }, "call_role is empty"},
		{"bytes", func(m *Manifest, s *string) { *s += "!" }, "manifest system_prompt_bytes=12 but provider request has 13 bytes"},
		{"whole digest", func(m *Manifest, s *string) { *s = "alphA\n\nomega" }, "manifest whole_prompt_digest " + digest.Of("alpha\n\nomega").String() +
			" does not match provider request " + digest.Of("alphA\n\nomega").String()},
		{"sum", func(m *Manifest, s *string) { m.Segments[0].Bytes = 4; m.Segments[1].Bytes = 4 },
			"included segment bytes (8) + join separators (2) do not reconcile with system prompt bytes (12)"},
		{"segment digest", func(m *Manifest, s *string) { m.Segments[0].Bytes = 6; m.Segments[1].Bytes = 4 },
			"included segment `first` digest " + digest.Of("alpha").String() + " does not match retained bytes " + digest.Of("alpha\n").String()},
		{"separator", func(m *Manifest, s *string) { *s = "alpha--omega"; m.WholePromptDigest = digest.Of(*s) },
			"included segment `first` is not followed by the documented join separator"},
		{"boundary", func(m *Manifest, s *string) {
			*s = "alph\u00e9\n\nomeg"
			m.WholePromptDigest = digest.Of(*s)
			m.Segments[0].Bytes = 5
		}, "included segment `first` byte boundary does not align with the system prompt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, system := reduceHarn(t, frag("first", promptloom.Before, "alpha"), frag("second", promptloom.After, "omega"))
			tt.edit(m, &system)
			if err := Validate(m, system); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate = %v, want %q", err, tt.want)
			}
		})
	}
}
