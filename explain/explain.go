// Package explain answers "why is this sentence in the prompt?": it runs
// Harn-shaped options through the reducer and returns the system prompt with
// one row per fragment (included or not, why, where, how many bytes, which
// digest), plus the manifest that proves it.
//
// Explain is prompt_explain: options JSON in, explanation out. Every
// explanation's manifest is checked against its own prompt before it is
// returned (manifest.ValidateStructure: its digests are the reducer's own,
// so they are not taken twice), so a contradictory set of fragments is an
// error here rather than a manifest that fails later at the provider
// boundary.
//
// Vocabulary: an Explanation is one prompt with its rows (Fragments), its
// Manifest and its traces; FromOptions explains options already parsed (and
// perhaps changed, as by an inactive tool); Diff compares two explanations,
// fragment by fragment, with how many leading bytes they share (the prompt
// cache's view) and a unified diff; Lint returns Warnings: options Harn
// accepts that are likely mistakes, and gated fragments that stand before
// an unconditional one and so split the prefix cache; Why yields every
// Place a text occurs, in the prompt or in a fragment left out, with the
// fragment that holds it and its reason and gates. WriteText, WriteJSON
// and WriteHTML render an explanation; its JSON is Harn's prompt_explain
// record.
package explain

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/harn/options"
	"github.com/promptloom/promptloom/harn/reminder"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/stage"
)

// Explanation is the system prompt and the account of every fragment: the
// prompt, its manifest, and one Row per fragment that shares the manifest's
// own segment. Its JSON form is what `promptloom explain --format json`
// prints: the prompt, then every field of Harn's prompt_explain record
// (AssembledPrompt::provenance_json) in Harn's order, read from the
// manifest, then promptloom's own additions (budget, lint, reminders,
// traces), which appear only when used.
type Explanation struct {
	// System is the prompt. With no fragment included it is absent: "",
	// and JSON null.
	System string
	// Manifest is the prompt's context manifest: its header (call role,
	// root, whole-prompt digest, bytes, separators) is the explanation's.
	Manifest *manifest.Manifest
	// Fragments has a row per fragment, in the manifest's order (the
	// JSON's included and excluded count them).
	Fragments []Row
	// Budget says what a budget did, when one was applied.
	Budget *promptloom.Fit
	// Lint holds the warnings of Lint when the caller asked for them.
	Lint []promptloom.Warning
	// Reminders is the trailing user message the reminders render to, with
	// a provenance row each; the system string does not hold them.
	Reminders *reminder.Rendered
	// Traces records every stage of the run, in order.
	Traces []stage.Trace
	// Reduction is the reducer's output the manifest was built from (nil
	// for an explanation read back from JSON).
	Reduction *promptloom.Reduction

	// warnings are the options' warnings, for Lint.
	warnings []promptloom.Warning
	// kinds names the contributor of each gated fragment of the options
	// (kindProfile, kindGuidance, kindPart), for Lint's advice.
	kinds map[string]string
}

// explanationJSON is an Explanation's wire form, field for field in
// Harn's order.
type explanationJSON struct {
	System             *string              `json:"system"`
	Schema             string               `json:"schema"`
	Scope              string               `json:"scope"`
	Boundary           string               `json:"boundary"`
	Messages           string               `json:"messages"`
	CallRole           string               `json:"call_role"`
	ActorChain         json.RawMessage      `json:"actor_chain"`
	Root               string               `json:"root"`
	Fragments          []Row                `json:"fragments"`
	WholePromptDigest  digest.Digest        `json:"whole_prompt_digest"`
	SystemPromptBytes  int                  `json:"system_prompt_bytes"`
	JoinSeparator      string               `json:"join_separator"`
	JoinSeparatorBytes int                  `json:"join_separator_bytes"`
	JoinSeparatorCount int                  `json:"join_separator_count"`
	Included           int                  `json:"included"`
	Excluded           int                  `json:"excluded"`
	Budget             *promptloom.Fit      `json:"budget,omitempty"`
	Lint               []promptloom.Warning `json:"lint,omitempty"`
	Reminders          *reminder.Rendered   `json:"reminders,omitempty"`
	Traces             []stage.Trace        `json:"traces,omitempty"`
}

// header is the manifest whose header the explanation shows: an empty one
// (actor chain null) when there is none.
func (e *Explanation) header() *manifest.Manifest {
	if e.Manifest == nil {
		return &manifest.Manifest{ActorChain: json.RawMessage("null")}
	}
	return e.Manifest
}

// counts are the included rows and the others.
func (e *Explanation) counts() (included, excluded int) {
	for i := range e.Fragments {
		if e.Fragments[i].segment().Included {
			included++
		}
	}
	return included, len(e.Fragments) - included
}

// absent says whether the prompt is absent: no text and no fragment
// included (a replacement root of "" is a prompt, empty).
func (e *Explanation) absent() bool {
	if e.System != "" {
		return false
	}
	n, _ := e.counts()
	return n == 0
}

// system is the prompt as the JSON holds it: nil when absent.
func (e *Explanation) system() *string {
	if e.absent() {
		return nil
	}
	return &e.System
}

func (e *Explanation) wire() explanationJSON {
	m := e.header()
	in, ex := e.counts()
	return explanationJSON{System: e.system(), Schema: m.Schema, Scope: m.Scope, Boundary: m.Boundary,
		Messages: m.Messages, CallRole: m.CallRole, ActorChain: m.ActorChain, Root: m.Root,
		Fragments: e.Fragments, WholePromptDigest: m.WholePromptDigest, SystemPromptBytes: m.SystemPromptBytes,
		JoinSeparator: m.JoinSeparator, JoinSeparatorBytes: m.JoinSeparatorBytes, JoinSeparatorCount: m.JoinSeparatorCount,
		Included: in, Excluded: ex, Budget: e.Budget, Lint: e.Lint, Reminders: e.Reminders, Traces: e.Traces}
}

// MarshalJSON writes the explanation as WriteJSON does, without the
// indentation (a Delta's JSON holds its two explanations so).
func (e *Explanation) MarshalJSON() ([]byte, error) { return pjson.MarshalRaw(e.wire()) }

// UnmarshalJSON reads an explanation as WriteJSON writes it: its manifest is
// rebuilt from the header, with one segment per row (each row pointing at
// its own, as Explain's do).
func (e *Explanation) UnmarshalJSON(b []byte) error {
	var w explanationJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	m := &manifest.Manifest{Schema: w.Schema, Scope: w.Scope, Boundary: w.Boundary, Messages: w.Messages,
		CallRole: w.CallRole, ActorChain: w.ActorChain, Root: w.Root, WholePromptDigest: w.WholePromptDigest,
		SystemPromptBytes: w.SystemPromptBytes, JoinSeparator: w.JoinSeparator,
		JoinSeparatorBytes: w.JoinSeparatorBytes, JoinSeparatorCount: w.JoinSeparatorCount}
	if m.ActorChain == nil {
		m.ActorChain = json.RawMessage("null")
	}
	if w.Fragments != nil {
		m.Segments = make([]manifest.Segment, len(w.Fragments))
		for i := range w.Fragments {
			m.Segments[i] = *w.Fragments[i].segment()
			w.Fragments[i].Segment = &m.Segments[i]
		}
	}
	*e = Explanation{Manifest: m, Fragments: w.Fragments, Budget: w.Budget, Lint: w.Lint, Reminders: w.Reminders, Traces: w.Traces}
	if w.System != nil {
		e.System = *w.System
	}
	return nil
}

// Row is one fragment's line of the explanation: the manifest's row for
// it, plus where the fragment came from and where it starts in the prompt.
// The segment is the manifest's own, shared, not copied: an explanation and
// its manifest cannot disagree, and a large prompt's rows are not held
// twice (at a million fragments that copy was a third of the input's size).
// Explain, FromOptions, FromManifest and UnmarshalJSON always set it. A Row
// built by hand needs one too: WriteJSON and MarshalJSON read a row without
// one as empty, but the text, HTML and diff renderers read its fields
// through the pointer.
//
// Its JSON is Harn's prompt_explain row, whose order interleaves the two
// additions with the segment's fields: id, source, producer, bucket,
// included, reason, bytes, offset, digest, then promptloom's register, rank,
// sources, tokens, template and spans (MarshalJSON keeps that order;
// encoding/json reads it back as it is).
type Row struct {
	*manifest.Segment
	// Source is the fragment's source (promptloom.Fragment.Source).
	Source string `json:"source"`
	// Offset is where the fragment starts in the system prompt; only
	// included rows have one.
	Offset *int `json:"offset,omitempty"`
	// Spans, for an included fragment rendered from a template, say where
	// each of its bytes came from, with Start and End offsets in the
	// system prompt (the segment's Template says which template and which
	// bindings). Bytes the options added around the render (a system
	// item's "## title" heading) are in no span.
	Spans []promptloom.Span `json:"spans,omitempty"`
}

// rowJSON is Row's wire form, field for field in Harn's order.
type rowJSON struct {
	ID       string        `json:"id"`
	Source   string        `json:"source"`
	Producer string        `json:"producer"`
	Bucket   string        `json:"bucket"`
	Included bool          `json:"included"`
	Reason   string        `json:"reason"`
	Bytes    int           `json:"bytes"`
	Offset   *int          `json:"offset,omitempty"`
	Digest   digest.Digest `json:"digest"`

	Register string   `json:"register,omitempty"`
	Rank     *int     `json:"rank,omitempty"`
	Sources  []string `json:"sources,omitempty"`
	Tokens   *int     `json:"tokens,omitempty"`

	Template *promptloom.Template `json:"template,omitempty"`
	Spans    []promptloom.Span    `json:"spans,omitempty"`
}

func (r *Row) wire() rowJSON {
	s := r.segment()
	return rowJSON{ID: s.ID, Source: r.Source, Producer: s.Producer, Bucket: s.Bucket,
		Included: s.Included, Reason: s.Reason, Bytes: s.Bytes, Offset: r.Offset, Digest: s.Digest,
		Register: s.Register, Rank: s.Rank, Sources: s.Sources, Tokens: s.Tokens,
		Template: s.Template, Spans: r.Spans}
}

// noSegment stands in for the segment of a row built without one; it is
// only read.
var noSegment manifest.Segment

// segment returns the row's segment, or an empty one when it has none, so
// writing a row built by hand never meets a nil pointer.
func (r *Row) segment() *manifest.Segment {
	if r.Segment == nil {
		return &noSegment
	}
	return r.Segment
}

// MarshalJSON writes the row in Harn's prompt_explain order.
func (r Row) MarshalJSON() ([]byte, error) {
	// The caller's encoder escapes HTML or not as it was told to; escaping
	// here would take that choice from it.
	return pjson.MarshalRaw(r.wire())
}

// Options configure Explain and FromOptions. The zero value (or nil) explains the
// options alone: no project, no budget, no stage of the caller's, the
// default size limit.
type Options struct {
	// Budget holds the prompt to a count, shedding by register and rank
	// (promptloom.Options.Budget).
	Budget *budget.Budget
	// Project adds the project profile of a directory: its signals become
	// capabilities, and its capability-gated fragments join the
	// profile's. EnvHas reports whether a credential variable is set (nil:
	// the process environment); only names are ever looked at.
	Project string
	EnvHas  func(name string) bool
	// Stages are the caller's stages, added to the pipeline; they may not
	// replace a core stage or take a kernel id. Their snapshot holds the
	// active tools under "tools" and the capabilities under
	// "capabilities" (each a []string); a resolution stage that resolves
	// a []string under a name starting with CapsPrefix adds capabilities.
	Stages []stage.Stage
	// ParseOptions are how Explain parses the options JSON: the size
	// bound (MaxBytes), whether strings may point into the caller's
	// buffer (InPlace), the options file's directory for templated
	// fragments' files (Files) and the call's bindings (Bindings).
	// FromOptions, given options already parsed, does not read them.
	options.ParseOptions
}

// Explain parses Harn-shaped options and explains the prompt they produce.
func Explain(optionsJSON []byte, opts *Options) (*Explanation, error) {
	if opts == nil {
		opts = &Options{}
	}
	o, err := options.Parse(optionsJSON, &opts.ParseOptions)
	if err != nil {
		return nil, err
	}
	return FromOptions(o, opts)
}

// FromOptions explains the prompt of parsed options.
func FromOptions(o *options.Options, opts *Options) (*Explanation, error) {
	if opts == nil {
		opts = &Options{}
	}
	run, err := pipeline(context.Background(), o, opts)
	if err != nil {
		return nil, err
	}
	// What is still needed of the options is taken now, so the rest (the
	// parsed items, as large as the fragments) can be collected while the
	// prompt and its manifest are built.
	callRole, actorChain, warnings := o.CallRole, o.ActorChain, o.Warnings
	kinds := gatedKinds(o)
	r, err := promptloom.Reduce(run.Fragments, activeSet(run.Snapshot, opts.Budget))
	if err != nil {
		return nil, err
	}
	m := manifest.New(r, callRole)
	if err := m.SetActorChain(actorChain); err != nil {
		return nil, err
	}
	// The manifest's digests are the reducer's, taken over the bytes of
	// r.System itself: hashing them again would prove nothing, so only the
	// rules that do not hash are checked here (TestManifestAlwaysValidates
	// holds the rest). The bytes are hashed again where they could have
	// drifted: the journal, verify, the provider boundary.
	if err := manifest.ValidateStructure(m, r.System); err != nil {
		return nil, fmt.Errorf("explain: the fragments make a manifest that does not hold: %w", err)
	}
	e := build(r, m)
	e.Traces = run.Traces
	e.warnings, e.kinds = warnings, kinds
	e.Reminders, _ = run.Snapshot[resolvedReminders].(*reminder.Rendered)
	return e, nil
}

// fromReduction explains a reduction whose manifest is m (the
// explanation's rows share m's segments). It fails when m does not hold
// for the reduction's own prompt, or has not one segment per row of the
// reduction.
func fromReduction(r *promptloom.Reduction, m *manifest.Manifest) (*Explanation, error) {
	if err := manifest.Validate(m, r.System); err != nil {
		return nil, fmt.Errorf("explain: the fragments make a manifest that does not hold: %w", err)
	}
	if len(m.Segments) != len(r.Rows) {
		return nil, fmt.Errorf("explain: the manifest is not the reduction's: %d segments for %d rows", len(m.Segments), len(r.Rows))
	}
	return build(r, m), nil
}

// build is the explanation of r and its manifest m, unchecked.
func build(r *promptloom.Reduction, m *manifest.Manifest) *Explanation {
	e := &Explanation{
		Manifest:  m,
		Fragments: make([]Row, len(r.Rows)),
		Reduction: r,
		Budget:    r.Fit,
	}
	e.System = r.System
	for i := range r.Rows {
		row := &r.Rows[i]
		e.Fragments[i] = Row{Segment: &m.Segments[i], Source: row.Fragment.Source}
		if row.Included {
			e.Fragments[i].Offset = &row.Offset
			e.Fragments[i].Spans = promptSpans(row)
		}
	}
	return e
}

// FromManifest explains a prompt by a manifest alone, as a recorded call
// is explained from its transcript: a row per segment, sharing it, the
// included ones at the offsets the manifest's layout gives them. m must
// hold for sys (manifest.Validate), or FromManifest fails. A recording
// has no source but the producer, which the rows leave to the manifest,
// and no body for a fragment left out.
func FromManifest(sys string, m *manifest.Manifest) (*Explanation, error) {
	if err := manifest.Validate(m, sys); err != nil {
		return nil, err
	}
	x := &Explanation{Manifest: m, Fragments: make([]Row, len(m.Segments))}
	if m.IncludedCount() > 0 {
		x.System = sys
	}
	for i := range m.Segments {
		x.Fragments[i] = Row{Segment: &m.Segments[i]}
	}
	i := 0
	for off, s := range m.Layout() {
		for &m.Segments[i] != s {
			i++
		}
		o := off
		x.Fragments[i].Offset = &o
	}
	return x, nil
}
