package manifest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/promptloom/promptloom/digest"
)

// ErrInvalid matches every *RuleError: a manifest that does not hold for
// its prompt, or a transcript that does not verify.
var ErrInvalid = errors.New("manifest does not hold")

// Rule names a rule of a manifest or of a transcript, as `promptloom
// verify` prints it ("FAIL segment_digest: ..."). A Rule is an error, so
// errors.Is(err, manifest.Rule("segment_digest")) asks whether err broke
// that rule.
//
// The rules of a manifest, in the order Validate checks them: call_role,
// system_prompt_bytes, whole_prompt_digest, duplicate_segment,
// replacement_root, scope, messages, join_separator_bytes, bucket,
// join_separator_count, byte_count, segment_boundary, segment_digest,
// join_separator. Package journal names the rules of a transcript (see its
// Verify).
type Rule string

// Error returns the rule's name.
func (r Rule) Error() string { return string(r) }

// RuleError is one broken rule: which, about what, and what was wanted
// and found. It is the one error type of manifest validation and of
// transcript verification.
type RuleError struct {
	Rule Rule `json:"rule"`
	// ID is the segment (or, in a transcript, the call) the rule broke
	// at; empty for the manifest or transcript as a whole.
	ID string `json:"id,omitempty"`
	// Line is the transcript line, from 1; 0 outside a transcript.
	Line int `json:"line,omitempty"`
	// Offset is the byte of the prompt the rule broke at; -1 when none.
	Offset int `json:"offset"`
	// Want and Got are what the rule wanted and what was found, as text
	// (a count, a digest, a field's value); empty when they say nothing.
	// Validating a manifest, Want is what the prompt (or the schema)
	// requires and Got what the manifest says: for system_prompt_bytes,
	// the prompt's length and the manifest's count.
	Want string `json:"want,omitempty"`
	Got  string `json:"got,omitempty"`
	// Detail is the message, worded as Harn words it where Harn has the
	// rule.
	Detail string `json:"detail"`
	// Located, on a whole_prompt_digest error, is the rule the prompt
	// breaks at its first differing segment, found when the segments'
	// bytes add up to the prompt's: Harn reports the whole digest first,
	// and Located says where.
	Located *RuleError `json:"located,omitempty"`
}

// Error is the rule's detail, worded as Harn words it.
func (e *RuleError) Error() string { return e.Detail }

// Is makes a RuleError match ErrInvalid and its own Rule.
func (e *RuleError) Is(target error) bool { return target == ErrInvalid || target == e.Rule }

// broke returns a RuleError of rule, with no segment or offset.
func broke(rule Rule, want, got, format string, args ...any) *RuleError {
	return &RuleError{Rule: rule, Offset: -1, Want: want, Got: got, Detail: fmt.Sprintf(format, args...)}
}

// brokeAt returns a RuleError of rule at segment id, byte off.
func brokeAt(rule Rule, id string, off int, want, got, format string, args ...any) *RuleError {
	e := broke(rule, want, got, format, args...)
	e.ID, e.Offset = id, off
	return e
}

// Validate checks that m is a complete, non-contradictory account of system,
// the exact bytes about to be sent (an absent prompt is ""). It returns nil
// or the first broken rule, in the order Harn's validate checks them
// (ContextAssemblyManifest::validate, prompt.rs), worded as Harn words them:
// call_role; the served prompt's byte count, then its whole digest; no two
// included segments sharing (id, digest); the replacement root's one
// segment; then promptloom's checks of fields Harn computes rather than
// reads (scope, messages, buckets, join_separator_bytes and _count); then
// the included segments' bytes and separators adding up to the prompt, and
// each segment, in order, ending on a character boundary, matching its
// digest and followed by the separator. So a served prompt with a byte
// changed is first a whole-digest mismatch, as in Harn.
//
// Ids are compared as the manifest holds them, redacted: they matter only to
// the rule that no two included segments share (id, digest), and two
// fragments whose ids redact alike and whose bodies are equal cannot be told
// apart in the manifest, so they break that rule. Every byte check is over
// the served prompt's slices and never reads an id.
func Validate(m *Manifest, system string) error { return validate(m, system, true) }

// ValidateStructure checks every rule of Validate except the two that hash
// (whole_prompt_digest and segment_digest), in the same order: the fields,
// the counts, the buckets, no two included segments sharing (id, digest),
// character boundaries and the join separator between included segments.
// It reads no byte of system but at the boundaries and separators, so it
// costs nothing next to a hash.
//
// It is for a manifest built by manifest.New from a reduction whose prompt
// is system, as explain does: the digests are the reducer's own, taken over
// the very bytes of system, so hashing them again proves nothing. Wherever
// the bytes could have drifted from the manifest (read back from a journal
// or a file, or changed before egress) use Validate.
func ValidateStructure(m *Manifest, system string) error { return validate(m, system, false) }

// validate is Validate, or with hash false ValidateStructure.
func validate(m *Manifest, system string, hash bool) error {
	if strings.TrimSpace(m.CallRole) == "" {
		return broke("call_role", "", m.CallRole, "call_role is empty")
	}
	if m.SystemPromptBytes != len(system) {
		return broke("system_prompt_bytes", itoa(len(system)), itoa(m.SystemPromptBytes),
			"manifest system_prompt_bytes=%d but provider request has %d bytes", m.SystemPromptBytes, len(system))
	}
	if hash {
		if whole := digest.Of(system); whole != m.WholePromptDigest {
			e := broke("whole_prompt_digest", whole.String(), m.WholePromptDigest.String(),
				"manifest whole_prompt_digest %s does not match provider request %s", m.WholePromptDigest, whole)
			e.Located = locate(m, system)
			return e
		}
	}
	included := m.IncludedCount()
	type key struct {
		id     string
		digest digest.Digest
	}
	seen := make(map[key]struct{}, included)
	for i := range m.Segments {
		s := &m.Segments[i]
		if !s.Included {
			continue
		}
		k := key{s.ID, s.Digest}
		if _, dup := seen[k]; dup {
			e := broke("duplicate_segment", "", s.Digest.String(), "duplicate included context segment (%s, %s)", s.ID, s.Digest)
			e.ID = s.ID
			return e
		}
		seen[k] = struct{}{}
	}
	if m.Root == RootReplacement &&
		(len(m.Segments) != 1 || included != 1 || m.Segments[0].ID != "replacement") {
		return broke("replacement_root", "1", itoa(included),
			"replacement root must contain exactly one included `replacement` segment")
	}
	switch {
	case m.Scope != scope:
		return broke("scope", scope, m.Scope, "scope is %q; only %q is defined", m.Scope, scope)
	case m.Messages != messages:
		return broke("messages", messages, m.Messages, "messages is %q; only %q is defined", m.Messages, messages)
	case m.JoinSeparatorBytes != joinSeparatorBytes:
		return broke("join_separator_bytes", itoa(joinSeparatorBytes), itoa(m.JoinSeparatorBytes),
			"join_separator_bytes is %d but the join separator has %d bytes", m.JoinSeparatorBytes, joinSeparatorBytes)
	}
	for i := range m.Segments {
		if s := &m.Segments[i]; s.Bucket != "before" && s.Bucket != "after" {
			e := broke("bucket", "before or after", s.Bucket, "segment %q has bucket %q; want \"before\" or \"after\"", s.ID, s.Bucket)
			e.ID = s.ID
			return e
		}
	}
	if want := max(included-1, 0); m.JoinSeparatorCount != want {
		return broke("join_separator_count", itoa(want), itoa(m.JoinSeparatorCount),
			"join_separator_count is %d but %d included segment(s) are joined by %d", m.JoinSeparatorCount, included, want)
	}
	sum, seps := 0, 0
	if included > 0 {
		seps = (included - 1) * len(joinSeparator)
	}
	byteCount := func(segments int) error {
		return broke("byte_count", itoa(len(system)), itoa(segments+seps),
			"included segment bytes (%d) + join separators (%d) do not reconcile with system prompt bytes (%d)", segments, seps, len(system))
	}
	for i := range m.Segments {
		s := &m.Segments[i]
		if s.Included {
			if s.Bytes < 0 || s.Bytes > len(system) {
				return byteCount(s.Bytes)
			}
			sum += s.Bytes
		}
	}
	if sum+seps != len(system) {
		return byteCount(sum)
	}
	if e := segmentsHold(m, system, included, hash); e != nil {
		return e // not as a nil *RuleError in an error
	}
	return nil
}

// segmentsHold checks each included segment in order against its slice of
// system (whose length the segments and separators add up to): it ends on
// character boundaries, matches its digest, and is followed by the
// separator unless it is the last. With hash false the digests are not
// checked.
func segmentsHold(m *Manifest, system string, included int, hash bool) *RuleError {
	off, seen := 0, 0
	for i := range m.Segments {
		s := &m.Segments[i]
		if !s.Included {
			continue
		}
		end := off + s.Bytes
		if !boundary(system, off) || !boundary(system, end) {
			return brokeAt("segment_boundary", s.ID, off, "", "",
				"included segment `%s` byte boundary does not align with the system prompt", s.ID)
		}
		if hash {
			if got := digest.Of(system[off:end]); got != s.Digest {
				return brokeAt("segment_digest", s.ID, off, s.Digest.String(), got.String(),
					"included segment `%s` digest %s does not match retained bytes %s", s.ID, s.Digest, got)
			}
		}
		off = end
		if seen++; seen < included {
			if sep := system[off : off+len(joinSeparator)]; sep != joinSeparator {
				return brokeAt("join_separator", s.ID, off, strconv.Quote(joinSeparator), strconv.Quote(sep),
					"included segment `%s` is not followed by the documented join separator", s.ID)
			}
			off += len(joinSeparator)
		}
	}
	return nil
}

// locate finds the included segment a served prompt differs in, once the
// segments' bytes add up to its length: the error the segment checks give,
// nil when none does or they do not add up.
func locate(m *Manifest, system string) *RuleError {
	included, sum := 0, 0
	for i := range m.Segments {
		if s := &m.Segments[i]; s.Included {
			if s.Bytes < 0 || s.Bytes > len(system) {
				return nil
			}
			included++
			sum += s.Bytes
		}
	}
	if included == 0 || sum+(included-1)*len(joinSeparator) != len(system) {
		return nil
	}
	return segmentsHold(m, system, included, true)
}

// boundary reports whether i is a character boundary of s, as Rust's
// str::get requires of a slice's ends: an end, or a byte that does not
// continue a UTF-8 sequence.
func boundary(s string, i int) bool {
	return i == 0 || i == len(s) || (i < len(s) && utf8.RuneStart(s[i]))
}

func itoa(n int) string { return strconv.Itoa(n) }
