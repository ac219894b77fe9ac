package manifest

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/digest"
)

// ErrInvalid matches every validation failure: errors.Is(err, ErrInvalid).
// errors.As with the rule's own type tells which rule broke.
var ErrInvalid = errors.New("manifest does not hold")

// Rule is implemented by every validation error.
type Rule interface {
	error
	// Rule names the broken rule, e.g. "segment_digest".
	Rule() string
}

// CallRoleError: call_role is empty.
type CallRoleError struct{}

// ReplacementRootError: a replacement root must have exactly one segment,
// included, with id "replacement".
type ReplacementRootError struct{ Segments, Included int }

// DuplicateSegmentError: two included segments share (id, digest).
type DuplicateSegmentError struct{ ID, Digest string }

// SystemBytesError: system_prompt_bytes is not the served prompt's length.
type SystemBytesError struct{ Manifest, Served int }

// ByteCountError: included segments' bytes plus separators do not add up to
// the served prompt's length.
type ByteCountError struct{ Segments, Separators, Served int }

// SegmentDigestError: an included segment's digest does not match its slice
// of the served prompt.
type SegmentDigestError struct {
	ID               string
	Offset           int
	Manifest, Served string
}

// SeparatorError: the join separator is missing after an included segment.
type SeparatorError struct {
	ID     string
	Offset int
}

// BoundaryError: an included segment starts or ends inside a character of
// the served prompt (Harn's str::get finds no slice there).
type BoundaryError struct {
	ID     string
	Offset int
}

// WholeDigestError: whole_prompt_digest does not match the served prompt.
// Located, when not nil, is the first segment the prompt differs in (the
// error its own checks give), found when the segments' bytes add up to the
// prompt's: Harn reports the whole digest first, and Located says where.
// It is not wrapped: errors.As finds the WholeDigestError only.
type WholeDigestError struct {
	Manifest, Served string
	Located          Rule
}

// ScopeError: scope is not "system_prompt", the only scope defined.
type ScopeError struct{ Scope string }

// MessagesError: messages is not "served_context_digest_only", the only
// value defined.
type MessagesError struct{ Messages string }

// JoinSeparatorBytesError: join_separator_bytes is not the length of the
// join separator.
type JoinSeparatorBytesError struct{ Manifest, Separator int }

// BucketError: a segment's bucket is neither "before" nor "after".
type BucketError struct{ ID, Bucket string }

// JoinSeparatorCountError: join_separator_count is not one less than the
// number of included segments (0 when none is included).
type JoinSeparatorCountError struct{ Manifest, Included int }

func (e *CallRoleError) Error() string { return "call_role is empty" }
func (e *ScopeError) Error() string {
	return fmt.Sprintf("scope is %q; only %q is defined", e.Scope, Scope)
}
func (e *MessagesError) Error() string {
	return fmt.Sprintf("messages is %q; only %q is defined", e.Messages, Messages)
}
func (e *JoinSeparatorBytesError) Error() string {
	return fmt.Sprintf("join_separator_bytes is %d but the join separator has %d bytes", e.Manifest, e.Separator)
}
func (e *BucketError) Error() string {
	return fmt.Sprintf("segment %q has bucket %q; want \"before\" or \"after\"", e.ID, e.Bucket)
}
func (e *JoinSeparatorCountError) Error() string {
	return fmt.Sprintf("join_separator_count is %d but %d included segment(s) are joined by %d", e.Manifest, e.Included, max(e.Included-1, 0))
}
func (e *ReplacementRootError) Error() string {
	return "replacement root must contain exactly one included `replacement` segment"
}
func (e *DuplicateSegmentError) Error() string {
	return fmt.Sprintf("duplicate included context segment (%s, %s)", e.ID, e.Digest)
}
func (e *SystemBytesError) Error() string {
	return fmt.Sprintf("manifest system_prompt_bytes=%d but provider request has %d bytes", e.Manifest, e.Served)
}
func (e *ByteCountError) Error() string {
	return fmt.Sprintf("included segment bytes (%d) + join separators (%d) do not reconcile with system prompt bytes (%d)", e.Segments, e.Separators, e.Served)
}
func (e *SegmentDigestError) Error() string {
	return fmt.Sprintf("included segment `%s` digest %s does not match retained bytes %s", e.ID, e.Manifest, e.Served)
}
func (e *SeparatorError) Error() string {
	return fmt.Sprintf("included segment `%s` is not followed by the documented join separator", e.ID)
}
func (e *BoundaryError) Error() string {
	return fmt.Sprintf("included segment `%s` byte boundary does not align with the system prompt", e.ID)
}
func (e *WholeDigestError) Error() string {
	return fmt.Sprintf("manifest whole_prompt_digest %s does not match provider request %s", e.Manifest, e.Served)
}

func (e *CallRoleError) Rule() string           { return "call_role" }
func (e *ScopeError) Rule() string              { return "scope" }
func (e *MessagesError) Rule() string           { return "messages" }
func (e *JoinSeparatorBytesError) Rule() string { return "join_separator_bytes" }
func (e *BucketError) Rule() string             { return "bucket" }
func (e *JoinSeparatorCountError) Rule() string { return "join_separator_count" }
func (e *ReplacementRootError) Rule() string    { return "replacement_root" }
func (e *DuplicateSegmentError) Rule() string   { return "duplicate_segment" }
func (e *SystemBytesError) Rule() string        { return "system_prompt_bytes" }
func (e *ByteCountError) Rule() string          { return "byte_count" }
func (e *SegmentDigestError) Rule() string      { return "segment_digest" }
func (e *BoundaryError) Rule() string           { return "segment_boundary" }
func (e *SeparatorError) Rule() string          { return "join_separator" }
func (e *WholeDigestError) Rule() string        { return "whole_prompt_digest" }

func (e *CallRoleError) Is(t error) bool           { return t == ErrInvalid }
func (e *ScopeError) Is(t error) bool              { return t == ErrInvalid }
func (e *MessagesError) Is(t error) bool           { return t == ErrInvalid }
func (e *JoinSeparatorBytesError) Is(t error) bool { return t == ErrInvalid }
func (e *BucketError) Is(t error) bool             { return t == ErrInvalid }
func (e *JoinSeparatorCountError) Is(t error) bool { return t == ErrInvalid }
func (e *ReplacementRootError) Is(t error) bool    { return t == ErrInvalid }
func (e *DuplicateSegmentError) Is(t error) bool   { return t == ErrInvalid }
func (e *SystemBytesError) Is(t error) bool        { return t == ErrInvalid }
func (e *ByteCountError) Is(t error) bool          { return t == ErrInvalid }
func (e *SegmentDigestError) Is(t error) bool      { return t == ErrInvalid }
func (e *SeparatorError) Is(t error) bool          { return t == ErrInvalid }
func (e *BoundaryError) Is(t error) bool           { return t == ErrInvalid }
func (e *WholeDigestError) Is(t error) bool        { return t == ErrInvalid }

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
		return &CallRoleError{}
	}
	if m.SystemPromptBytes != len(system) {
		return &SystemBytesError{Manifest: m.SystemPromptBytes, Served: len(system)}
	}
	if hash {
		if whole := digest.Of(system); !whole.Is(m.WholePromptDigest) {
			return &WholeDigestError{Manifest: m.WholePromptDigest, Served: whole.String(), Located: locate(m, system)}
		}
	}
	included := m.IncludedCount()
	type key struct{ id, digest string }
	seen := make(map[key]struct{}, included)
	for i := range m.Segments {
		s := &m.Segments[i]
		if !s.Included {
			continue
		}
		k := key{s.ID, s.Digest}
		if _, dup := seen[k]; dup {
			return &DuplicateSegmentError{ID: s.ID, Digest: s.Digest}
		}
		seen[k] = struct{}{}
	}
	if m.Root == string(promptloom.RootReplacement) &&
		(len(m.Segments) != 1 || included != 1 || m.Segments[0].ID != "replacement") {
		return &ReplacementRootError{Segments: len(m.Segments), Included: included}
	}
	switch {
	case m.Scope != Scope:
		return &ScopeError{Scope: m.Scope}
	case m.Messages != Messages:
		return &MessagesError{Messages: m.Messages}
	case m.JoinSeparatorBytes != joinSeparatorBytes:
		return &JoinSeparatorBytesError{Manifest: m.JoinSeparatorBytes, Separator: joinSeparatorBytes}
	}
	for i := range m.Segments {
		if b := m.Segments[i].Bucket; b != "before" && b != "after" {
			return &BucketError{ID: m.Segments[i].ID, Bucket: b}
		}
	}
	if want := max(included-1, 0); m.JoinSeparatorCount != want {
		return &JoinSeparatorCountError{Manifest: m.JoinSeparatorCount, Included: included}
	}
	sum, seps := 0, 0
	if included > 0 {
		seps = (included - 1) * len(JoinSeparator)
	}
	for i := range m.Segments {
		s := &m.Segments[i]
		if s.Included {
			if s.Bytes < 0 || s.Bytes > len(system) {
				return &ByteCountError{Segments: s.Bytes, Separators: seps, Served: len(system)}
			}
			sum += s.Bytes
		}
	}
	if sum+seps != len(system) {
		return &ByteCountError{Segments: sum, Separators: seps, Served: len(system)}
	}

	return segmentsHold(m, system, included, hash)
}

// segmentsHold checks each included segment in order against its slice of
// system (whose length the segments and separators add up to): it ends on
// character boundaries, matches its digest, and is followed by the
// separator unless it is the last. With hash false the digests are not
// checked.
func segmentsHold(m *Manifest, system string, included int, hash bool) error {
	off, seen2 := 0, 0
	for i := range m.Segments {
		s := &m.Segments[i]
		if !s.Included {
			continue
		}
		end := off + s.Bytes
		if !boundary(system, off) || !boundary(system, end) {
			return &BoundaryError{ID: s.ID, Offset: off}
		}
		if hash {
			if got := digest.Of(system[off:end]); !got.Is(s.Digest) {
				return &SegmentDigestError{ID: s.ID, Offset: off, Manifest: s.Digest, Served: got.String()}
			}
		}
		off = end
		if seen2++; seen2 < included {
			if system[off:off+len(JoinSeparator)] != JoinSeparator {
				return &SeparatorError{ID: s.ID, Offset: off}
			}
			off += len(JoinSeparator)
		}
	}
	return nil
}

// locate finds the included segment a served prompt differs in, once the
// segments' bytes add up to its length: the error the segment checks give,
// nil when none does or they do not add up.
func locate(m *Manifest, system string) Rule {
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
	if included == 0 || sum+(included-1)*len(JoinSeparator) != len(system) {
		return nil
	}
	if err := segmentsHold(m, system, included, true); err != nil {
		return err.(Rule)
	}
	return nil
}

// boundary reports whether i is a character boundary of s, as Rust's
// str::get requires of a slice's ends: an end, or a byte that does not
// continue a UTF-8 sequence.
func boundary(s string, i int) bool {
	return i == 0 || i == len(s) || (i < len(s) && utf8.RuneStart(s[i]))
}
