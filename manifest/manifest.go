// Package manifest is the bill of materials of one system prompt: the
// harn.llm.context_manifest.v1 value that accounts for every byte.
//
// New builds a manifest from a reduction; Validate checks one against the
// exact bytes about to be sent and fails closed, with one error type per
// rule; Canonical and ContentHash give it a name any language can recompute;
// Read takes manifests written by other tools, tolerantly.
//
// Vocabulary: a Segment is one fragment's row (id, producer, bucket,
// included, reason, bytes, digest); the root says what produced the prompt
// (composed, replacement, or transformed at egress); the content hash is the
// BLAKE3 digest of the canonical, redacted JSON, and it is the manifest's
// name in transcripts and in everything the CLI prints. ForEgress projects a
// manifest onto bytes an adapter changed on the way out. The fields and
// validation rules are listed in docs/rules.md.
package manifest

import (
	"encoding/json"
	"fmt"
	"iter"
	"strings"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/harn/redact"
	"github.com/promptloom/promptloom/internal/fit"
)

// The fields of a manifest that hold one of few values: Harn's words.
const (
	schema             = "harn.llm.context_manifest.v1"
	scope              = "system_prompt"
	messages           = "served_context_digest_only"
	boundaryPreEgress  = "observed_llm_call_pre_egress"
	boundaryEgress     = "llm_request_payload_egress"
	joinSeparator      = promptloom.Separator
	joinSeparatorBytes = len(joinSeparator)
)

// The roots, what produced a prompt (Manifest.Root): its fragments,
// composed by the reducer; a replacement root, the caller's whole prompt;
// or an adapter's change at egress (ForEgress).
const (
	RootComposed    = "composed"
	RootReplacement = "replacement"
	RootTransformed = "transformed"
)

// Manifest is one harn.llm.context_manifest.v1 value.
type Manifest struct {
	Schema             string          `json:"schema"`
	Scope              string          `json:"scope"`
	Boundary           string          `json:"boundary"`
	Messages           string          `json:"messages"`
	CallRole           string          `json:"call_role"`
	ActorChain         json.RawMessage `json:"actor_chain"`
	Root               string          `json:"root"`
	Segments           []Segment       `json:"segments"`
	WholePromptDigest  digest.Digest   `json:"whole_prompt_digest"`
	SystemPromptBytes  int             `json:"system_prompt_bytes"`
	JoinSeparator      string          `json:"join_separator"`
	JoinSeparatorBytes int             `json:"join_separator_bytes"`
	JoinSeparatorCount int             `json:"join_separator_count"`
	EgressDelta        *EgressDelta    `json:"egress_delta,omitempty"`

	// promptloom's own, set when a budget was applied: the counter's
	// encoding, the exact count of the whole prompt, and the total it was
	// held to.
	TokenEncoding      string `json:"token_encoding,omitempty"`
	SystemPromptTokens *int   `json:"system_prompt_tokens,omitempty"`
	BudgetTotal        *int   `json:"budget_total,omitempty"`
}

// Segment is one fragment's row. It is the one row type shared across the
// library: explain.Row embeds it, and journal pins keep their calls'
// segments. (promptloom.Row is the reducer's working row, with the
// fragment, its body and its offset; provenance.DescribedPart keeps the
// field names and order of its golden files.)
type Segment struct {
	ID       string        `json:"id"`
	Producer string        `json:"producer"`
	Bucket   string        `json:"bucket"`
	Included bool          `json:"included"`
	Reason   string        `json:"reason"`
	Bytes    int           `json:"bytes"`
	Digest   digest.Digest `json:"digest"`

	// promptloom's own: how the fragment ranks under a budget and what it
	// was built from. Register and Rank are written when either differs from
	// binding/0 or the fragment cites sources.
	Register string   `json:"register,omitempty"`
	Rank     *int     `json:"rank,omitempty"`
	Sources  []string `json:"sources,omitempty"`
	// Tokens is the fragment's own count under a budget: set on every row
	// then, 0 for rows never counted (gated out, empty).
	Tokens *int `json:"tokens,omitempty"`
	// Template is set for a fragment rendered from a template: the
	// template's file and digest, the files it included and the bindings
	// it read, each path with the digest of its redacted value (no spans:
	// they are the explanation's). A manifest without templates has no
	// such member, so its bytes are what they were.
	Template *promptloom.Template `json:"template,omitempty"`
}

// State is what became of the segment's fragment: "included", "shed" (by
// a budget) or "excluded" (by a gate, or for an empty body). The manifest
// has no field for shedding (Harn's schema has none), so it is read from
// the reason the reducer gave; it agrees with promptloom.Row.Shed for
// every manifest New makes. Test this, not the reason's wording.
func (s *Segment) State() string {
	switch {
	case s.Included:
		return "included"
	case strings.HasPrefix(s.Reason, fit.ShedPrefix):
		return "shed"
	}
	return "excluded"
}

// EgressDelta records how the bytes sent differ from the assembled prompt.
type EgressDelta struct {
	Producer                 string        `json:"producer"`
	InputSystemPromptDigest  digest.Digest `json:"input_system_prompt_digest"`
	InputSystemPromptBytes   int           `json:"input_system_prompt_bytes"`
	OutputSystemPromptDigest digest.Digest `json:"output_system_prompt_digest"`
	OutputSystemPromptBytes  int           `json:"output_system_prompt_bytes"`
	BytesAdded               int           `json:"bytes_added"`
	BytesRemoved             int           `json:"bytes_removed"`
}

var nullJSON = json.RawMessage("null")

// defaultCallRole is the call role of a manifest made for no named call, as
// options that name none get (options.defaultCallRole).
const defaultCallRole = "unattributed"

// New returns the manifest of a reduction, attributed to callRole, with
// every string redacted (redact.String). Digests are of redacted text
// already; bytes count the raw text, as Validate checks them.
// A blank callRole is defaultCallRole, as in options that name no
// call_role: New never makes a manifest that Validate refuses for its call
// role. (Validate still refuses an empty call_role in a manifest read from
// elsewhere.)
func New(r *promptloom.Reduction, callRole string) *Manifest {
	if strings.TrimSpace(callRole) == "" {
		callRole = defaultCallRole
	}
	m := &Manifest{
		Schema:             schema,
		Scope:              scope,
		Boundary:           boundaryPreEgress,
		Messages:           messages,
		CallRole:           redact.String(callRole),
		ActorChain:         nullJSON,
		Root:               RootComposed,
		Segments:           make([]Segment, len(r.Rows)),
		WholePromptDigest:  r.WholeDigest,
		SystemPromptBytes:  len(r.System),
		JoinSeparator:      joinSeparator,
		JoinSeparatorBytes: joinSeparatorBytes,
	}
	// Rows mostly share a producer and a reason: each distinct one is
	// redacted once, not once per row.
	var producer, reason redactMemo
	included := 0
	for i := range r.Rows {
		row := &r.Rows[i]
		f := row.Fragment
		s := &m.Segments[i]
		// A system item's source is its id: redacted once for both.
		id, prod := redact.String(f.ID), f.Producer
		if prod == "" {
			prod = f.Source
		}
		if prod == f.ID {
			prod = id
		} else {
			prod = producer.of(prod)
		}
		*s = Segment{
			ID:       id,
			Producer: prod,
			Bucket:   f.Bucket.String(),
			Included: row.Included,
			Reason:   reason.of(row.Reason),
			Bytes:    row.Bytes,
			Digest:   row.Digest,
			Sources:  redactAll(f.Sources),
			Template: rowTemplate(f.Template),
		}
		if f.Register != budget.Binding || f.Rank != 0 || len(f.Sources) > 0 {
			s.Register = f.Register.String() // a fixed name, or register(N): nothing to redact
			s.Rank = &f.Rank
		}
		if row.Included {
			included++
		}
	}
	if included > 0 {
		m.JoinSeparatorCount = included - 1
	}
	if len(r.Rows) == 1 && r.Rows[0].Fragment.Verbatim {
		m.Root = RootReplacement
	}
	if f := r.Fit; f != nil {
		m.TokenEncoding = f.Encoding
		m.SystemPromptTokens, m.BudgetTotal = &f.Tokens, f.Total
		for i := range r.Rows {
			m.Segments[i].Tokens = &r.Rows[i].Tokens
		}
	}
	return m
}

// rowTemplate is what a row records of a fragment's template: its file,
// digest, includes and bindings, names redacted, no spans.
func rowTemplate(t *promptloom.Template) *promptloom.Template {
	if t == nil {
		return nil
	}
	return &promptloom.Template{File: redact.String(t.File), Digest: t.Digest,
		Includes: redactKeys(t.Includes), Bindings: redactKeys(t.Bindings)}
}

// redactKeys returns m with its keys redacted: a binding's path or an
// included file's name is text a secret could hide in. Never nil for
// bindings, so a template that read none records {}.
func redactKeys(m map[string]digest.Digest) map[string]digest.Digest {
	out := make(map[string]digest.Digest, len(m))
	for k, d := range m {
		out[redact.String(k)] = d
	}
	return out
}

// redactMemo remembers the redactions of a few hundred distinct strings,
// and the last one asked for (neighbouring rows often share it).
type redactMemo struct {
	seen      map[string]string
	last, out string
}

// of returns s redacted, from memory when it was asked for before.
func (m *redactMemo) of(s string) string {
	if s == m.last && m.seen != nil {
		return m.out
	}
	r, ok := m.seen[s]
	if !ok {
		r = redact.String(s)
		if m.seen == nil {
			m.seen = make(map[string]string)
		}
		if len(m.seen) < 256 {
			m.seen[s] = r
		}
	}
	m.last, m.out = s, r
	return r
}

// redactAll returns ss with each string redacted, sharing ss when none
// changed.
func redactAll(ss []string) []string {
	var out []string
	for i, s := range ss {
		if r := redact.String(s); r != s || out != nil {
			if out == nil {
				out = append(make([]string, 0, len(ss)), ss[:i]...)
			}
			out = append(out, r)
		}
	}
	if out == nil {
		return ss
	}
	return out
}

// SetActorChain stores raw (JSON; nil or empty is null) as the manifest's
// actor_chain, redacted as Harn's redact_json redacts it (every string
// through redact.String; the value of a member with a credential-like key
// replaced by "[redacted]"; redact.JSON) and in canonical form. It
// fails for raw that has no canonical form (not JSON, a repeated key).
func (m *Manifest) SetActorChain(raw json.RawMessage) error {
	if len(raw) == 0 {
		m.ActorChain = nullJSON
		return nil
	}
	b, err := redactJSON(raw)
	if err != nil {
		return fmt.Errorf("manifest: actor_chain: %w", err)
	}
	m.ActorChain = b
	return nil
}

// redactJSON is Harn's redact_json followed by its canonical encoding.
func redactJSON(raw []byte) ([]byte, error) { return redact.JSON(raw) }

// Canonical returns the bytes a manifest is named by, printed as and
// retained as: the manifest passed through Harn's redact_json (every string,
// whichever field holds it, through redact.String; a member with a
// credential-like key replaced) and encoded as Harn's canonical JSON (keys
// in UTF-8 byte order, no insignificant white space, serde_json's numbers
// and escapes). It fails only when ActorChain was set to something that has
// no canonical form.
func (m *Manifest) Canonical() ([]byte, error) {
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return redactJSON(raw)
}

// ContentHash is Harn's stable_redacted_json_hash of the manifest: BLAKE3
// over Canonical. The content hash of a manifest's bytes as retained (in a
// transcript, say) is digest.Bytes of them: they are canonical already.
func (m *Manifest) ContentHash() (digest.Digest, error) {
	b, err := m.Canonical()
	if err != nil {
		return digest.Digest{}, err
	}
	return digest.Bytes(b), nil
}

// Rows returns m's segments; none for a nil manifest (a call made without
// one), so callers comparing two calls need no check of their own.
func (m *Manifest) Rows() []Segment {
	if m == nil {
		return nil
	}
	return m.Segments
}

// IncludedCount counts the included segments.
func (m *Manifest) IncludedCount() int {
	n := 0
	for i := range m.Segments {
		if m.Segments[i].Included {
			n++
		}
	}
	return n
}

// Layout yields each included segment with the byte offset at which it
// starts in the system string m describes: the first at 0, each later one
// after the one before and the join separator, as Validate holds them. It
// is the one walk of a manifest's placement; whether an offset fits a
// given prompt is the caller's to check (Validate does).
func (m *Manifest) Layout() iter.Seq2[int, *Segment] {
	return func(yield func(int, *Segment) bool) {
		if m == nil {
			return
		}
		at, seen := 0, false
		for i := range m.Segments {
			s := &m.Segments[i]
			if !s.Included {
				continue
			}
			if seen {
				at += joinSeparatorBytes
			}
			seen = true
			if !yield(at, s) {
				return
			}
			at += max(s.Bytes, 0)
		}
	}
}
