package manifest

import (
	"errors"
	"fmt"
	"strings"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/redact"
	"github.com/promptloom/promptloom/reducer"
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

// WholeDigestError: whole_prompt_digest does not match the served prompt.
type WholeDigestError struct{ Manifest, Served string }

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
	return fmt.Sprintf("replacement root must have exactly one included `replacement` segment, has %d segment(s), %d included", e.Segments, e.Included)
}
func (e *DuplicateSegmentError) Error() string {
	return fmt.Sprintf("duplicate included segment (%s, %s)", e.ID, e.Digest)
}
func (e *SystemBytesError) Error() string {
	return fmt.Sprintf("system_prompt_bytes is %d but the served prompt has %d bytes", e.Manifest, e.Served)
}
func (e *ByteCountError) Error() string {
	return fmt.Sprintf("included segment bytes (%d) + join separators (%d) do not add up to the served prompt's %d bytes", e.Segments, e.Separators, e.Served)
}
func (e *SegmentDigestError) Error() string {
	return fmt.Sprintf("segment %q digest %s does not match its bytes at offset %d (%s)", e.ID, e.Manifest, e.Offset, e.Served)
}
func (e *SeparatorError) Error() string {
	return fmt.Sprintf("segment %q is not followed by the join separator at offset %d", e.ID, e.Offset)
}
func (e *WholeDigestError) Error() string {
	return fmt.Sprintf("whole_prompt_digest %s does not match the served prompt (%s)", e.Manifest, e.Served)
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
func (e *WholeDigestError) Is(t error) bool        { return t == ErrInvalid }

// Validate checks that m is a complete, non-contradictory account of system,
// the exact bytes about to be sent (an absent prompt is ""). It returns nil
// or the first broken rule, checking structure before bytes and each segment
// before the whole, so that the error names the most specific culprit.
//
// Ids are compared as the manifest holds them, redacted: they matter only to
// the rule that no two included segments share (id, digest), and two
// fragments whose ids redact alike and whose bodies are equal cannot be told
// apart in the manifest, so they break that rule. Every byte check is over
// the served prompt's slices and never reads an id.
func Validate(m *Manifest, system string) error {
	included, err := structure(m, system)
	if err != nil {
		return err
	}
	pieces := make([]redact.Text, 0, included)
	off, seen2 := 0, 0
	for i := range m.Segments {
		s := &m.Segments[i]
		if !s.Included {
			continue
		}
		body := system[off : off+s.Bytes]
		p := redact.Piece(body)
		if got := digest.String(p.Redacted); !got.Is(s.Digest) {
			return &SegmentDigestError{ID: s.ID, Offset: off, Manifest: s.Digest, Served: got.String()}
		}
		pieces = append(pieces, p)
		off += s.Bytes
		if seen2++; seen2 < included {
			if system[off:off+len(JoinSeparator)] != JoinSeparator {
				return &SeparatorError{ID: s.ID, Offset: off}
			}
			off += len(JoinSeparator)
		}
	}
	whole := digest.Empty // no included segment: the byte count says system is ""
	if included > 0 {
		whole = digest.String(redact.Joined(pieces, JoinSeparator, system))
	}
	if !whole.Is(m.WholePromptDigest) {
		return &WholeDigestError{Manifest: m.WholePromptDigest, Served: whole.String()}
	}
	return nil
}

// ValidateStructure checks every rule of Validate except the two that hash
// (segment_digest and whole_prompt_digest): the fields, the buckets, no two
// included segments sharing (id, digest), the counts, and the join
// separator between included segments. It reads no byte of system but the
// separators, so it costs nothing next to a hash.
//
// It is for a manifest built by manifest.New from a reduction whose prompt
// is system, as explain does: the digests are the reducer's own, taken over
// the very bytes of system, so hashing them again proves nothing. Wherever
// the bytes could have drifted from the manifest (read back from a journal
// or a file, or changed before egress) use Validate.
func ValidateStructure(m *Manifest, system string) error {
	included, err := structure(m, system)
	if err != nil {
		return err
	}
	off, seen := 0, 0
	for i := range m.Segments {
		s := &m.Segments[i]
		if !s.Included {
			continue
		}
		off += s.Bytes
		if seen++; seen < included {
			if system[off:off+len(JoinSeparator)] != JoinSeparator {
				return &SeparatorError{ID: s.ID, Offset: off}
			}
			off += len(JoinSeparator)
		}
	}
	return nil
}

// structure checks the rules that read no byte of system, in Validate's
// order, and returns the number of included segments.
func structure(m *Manifest, system string) (int, error) {
	switch {
	case strings.TrimSpace(m.CallRole) == "":
		return 0, &CallRoleError{}
	case m.Scope != Scope:
		return 0, &ScopeError{Scope: m.Scope}
	case m.Messages != Messages:
		return 0, &MessagesError{Messages: m.Messages}
	case m.JoinSeparatorBytes != joinSeparatorBytes:
		return 0, &JoinSeparatorBytesError{Manifest: m.JoinSeparatorBytes, Separator: joinSeparatorBytes}
	}
	included := m.IncludedCount()
	if m.Root == string(reducer.Replacement) &&
		(len(m.Segments) != 1 || included != 1 || m.Segments[0].ID != "replacement") {
		return 0, &ReplacementRootError{Segments: len(m.Segments), Included: included}
	}
	for i := range m.Segments {
		if b := m.Segments[i].Bucket; b != "before" && b != "after" {
			return 0, &BucketError{ID: m.Segments[i].ID, Bucket: b}
		}
	}
	type key struct{ id, digest string }
	seen := make(map[key]struct{}, included)
	for i := range m.Segments {
		s := &m.Segments[i]
		if !s.Included {
			continue
		}
		k := key{s.ID, s.Digest}
		if _, dup := seen[k]; dup {
			return 0, &DuplicateSegmentError{ID: s.ID, Digest: s.Digest}
		}
		seen[k] = struct{}{}
	}
	if want := max(included-1, 0); m.JoinSeparatorCount != want {
		return 0, &JoinSeparatorCountError{Manifest: m.JoinSeparatorCount, Included: included}
	}
	if m.SystemPromptBytes != len(system) {
		return 0, &SystemBytesError{Manifest: m.SystemPromptBytes, Served: len(system)}
	}
	sum, seps := 0, 0
	if included > 0 {
		seps = (included - 1) * len(JoinSeparator)
	}
	for i := range m.Segments {
		s := &m.Segments[i]
		if s.Included {
			if s.Bytes < 0 || s.Bytes > len(system) {
				return 0, &ByteCountError{Segments: s.Bytes, Separators: seps, Served: len(system)}
			}
			sum += s.Bytes
		}
	}
	if sum+seps != len(system) {
		return 0, &ByteCountError{Segments: sum, Separators: seps, Served: len(system)}
	}

	return included, nil
}
