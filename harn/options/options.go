// Package options reads the Harn-shaped JSON options a harness passes to an
// LLM call and returns them typed, or a located error.
//
// Only the keys that shape the system prompt are read: system,
// _system_fragments, context_profile, tools, capabilities, call_role (alias
// mock_scope), and promptloom's own reminders and actor_chain. Other
// top-level keys (model, messages, ...) belong to the call and are ignored,
// except the keys Harn's llm_call removed (caps, system_preamble, ...),
// which are errors naming their replacement.
//
// The options are read as Harn reads them (its system_prompt.rs): what Harn
// refuses is an *Error naming the JSON path; what Harn accepts is accepted,
// a non-string value used as text shown as Harn shows it; and what Harn
// accepts but is likely a mistake (an ignored key, a skipped item) is a
// Warning. A key given twice anywhere in the document is an error.
//
// The typed Options turns into fragments contributor by contributor
// (SystemFragments, PrimaryFragments, ProfileFragments, ToolFragments), so a
// pipeline can run each contributor on its own; Fragments runs them all in
// Harn's build order.
//
// Every key, its type, its default and what is done with it is listed in
// docs/options.md (a test keeps that page complete).
package options

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/harn/reminder"
)

// Options is the part of an LLM call's options that shapes the system prompt.
type Options struct {
	// SystemText is the system option given as a string; Replacement is it
	// given as {"mode":"replace","content":...}; SystemItems is it given as a
	// list. At most one of the three is set.
	SystemText  *string
	Replacement *string
	SystemItems []SystemItem

	// PrimaryParts is _system_fragments. HasPrimaryParts is true when the key
	// was present, even as an empty list: the primary block is then exactly
	// these parts, and the string system and the profile add nothing.
	PrimaryParts    []Part
	HasPrimaryParts bool

	// Profile is context_profile.prompt_fragments, blank items
	// already dropped; ProfileCaps is context_profile.caps.
	Profile     []Part
	ProfileCaps []string

	Tools        []Tool
	Capabilities []string

	// Reminders is the reminders option: directives injected in order,
	// rendered outside the system string.
	Reminders []reminder.Reminder

	// CallRole is call_role or mock_scope, trimmed; "unattributed" when
	// neither is set.
	CallRole string
	// ActorChain is actor_chain as given (JSON), or nil.
	ActorChain json.RawMessage

	// Warnings are the input Harn accepts but that is likely a mistake, in
	// the order they were found.
	Warnings []Warning
}

// DefaultCallRole is the call role of options that name none.
const DefaultCallRole = "unattributed"

// SystemItem is one item of the list-form system option.
type SystemItem struct {
	Index    int // the item's place in the list as given
	Content  string
	Title    string
	Bucket   promptloom.Bucket
	Enabled  bool
	Register budget.Register
	Rank     int
}

// Part is one item of _system_fragments or of
// context_profile.prompt_fragments. A profile item has no producer, bucket,
// register or rank (Harn does not read those keys there), so they stay zero.
type Part struct {
	Index         int
	ID            string // "" means the default: primary[Index] or profile[Index]
	Source        string // "" means the default: primary or profile
	Producer      string
	Bucket        promptloom.Bucket
	Body          string
	RequiresTools []string
	RequiresCaps  []string
	Register      budget.Register
	Rank          int
}

// fragment is the part as a fragment, over base (its default id and source).
func (p Part) fragment(base promptloom.Fragment) promptloom.Fragment {
	if p.ID != "" {
		base.ID = p.ID
	}
	if p.Source != "" {
		base.Source = p.Source
	}
	base.Producer, base.Bucket = p.Producer, p.Bucket
	base.RequiresTools, base.RequiresCaps = p.RequiresTools, p.RequiresCaps
	base.Register, base.Rank = p.Register, p.Rank
	return base
}

// Tool is one declared tool; Guidance is trimmed. Every tool the options
// declare is active (Harn has no inactive tool); WithoutTool makes one
// inactive, so its guidance is still built and excluded by its gate.
type Tool struct {
	Name     string
	Guidance string
	Active   bool
}

// SystemFragments returns the fragments of the system option: the list
// items that are enabled, or the replacement root.
func (o *Options) SystemFragments() []promptloom.Fragment {
	if o.Replacement != nil {
		return []promptloom.Fragment{promptloom.Replacement(*o.Replacement)}
	}
	var out []promptloom.Fragment // nil when no item is enabled
	for i, it := range o.SystemItems {
		if out == nil && it.Enabled {
			out = make([]promptloom.Fragment, 0, len(o.SystemItems)-i)
		}
		if !it.Enabled {
			continue
		}
		f := promptloom.SystemItem(it.Index, it.Title, it.Content, it.Bucket)
		f.Register, f.Rank = it.Register, it.Rank
		out = append(out, f)
	}
	return out
}

// PrimaryFragments returns the primary block: the _system_fragments parts
// when present, else the string system unless it is blank.
func (o *Options) PrimaryFragments() []promptloom.Fragment {
	if o.Replacement != nil {
		return nil
	}
	if !o.HasPrimaryParts {
		if o.SystemText != nil && !isBlank(*o.SystemText) {
			return []promptloom.Fragment{promptloom.Primary(*o.SystemText)}
		}
		return nil
	}
	out := make([]promptloom.Fragment, 0, len(o.PrimaryParts))
	for _, p := range o.PrimaryParts {
		out = append(out, p.fragment(promptloom.PrimaryPart(p.Index, p.Body)))
	}
	return out
}

// ProfileFragments returns the profile's prompt fragments, unless the
// primary block was given decomposed (the caller then forwarded them).
func (o *Options) ProfileFragments() []promptloom.Fragment {
	if o.Replacement != nil || o.HasPrimaryParts {
		return nil
	}
	out := make([]promptloom.Fragment, 0, len(o.Profile))
	for _, p := range o.Profile {
		out = append(out, p.fragment(promptloom.Profile(p.Index, p.Body)))
	}
	return out
}

// ToolFragments returns one guidance fragment per declared tool with
// non-blank guidance, gated on that tool.
func (o *Options) ToolFragments() []promptloom.Fragment {
	if o.Replacement != nil {
		return nil
	}
	var out []promptloom.Fragment
	for _, t := range o.Tools {
		if !isBlank(t.Guidance) {
			out = append(out, promptloom.ToolGuidance(t.Name, t.Guidance))
		}
	}
	return out
}

// Fragments returns every fragment in Harn's build order: system list,
// primary block, profile, tool guidance.
func (o *Options) Fragments() []promptloom.Fragment {
	var out []promptloom.Fragment
	out = append(out, o.SystemFragments()...)
	out = append(out, o.PrimaryFragments()...)
	out = append(out, o.ProfileFragments()...)
	return append(out, o.ToolFragments()...)
}

// ActiveTools returns the names of the active tools.
func (o *Options) ActiveTools() []string {
	out := make([]string, 0, len(o.Tools))
	for _, t := range o.Tools {
		if t.Active {
			out = append(out, t.Name)
		}
	}
	return out
}

// AllCapabilities returns capabilities plus context_profile.caps.
func (o *Options) AllCapabilities() []string {
	out := make([]string, 0, len(o.Capabilities)+len(o.ProfileCaps))
	out = append(out, o.Capabilities...)
	return append(out, o.ProfileCaps...)
}

// ErrNoSuchTool is returned by WithoutTool for a tool that is not declared.
var ErrNoSuchTool = errors.New("no such tool")

// WithoutTool keeps the tool declared but takes it out of the active set, so
// its guidance is still built and excluded by its gate. (Deleting the tool
// entry is a different change: its guidance would not be built at all.)
func (o *Options) WithoutTool(name string) error {
	for i := range o.Tools {
		if o.Tools[i].Name == name {
			o.Tools[i].Active = false
			return nil
		}
	}
	return fmt.Errorf("%w: %q is not declared in tools", ErrNoSuchTool, name)
}

// WithTool activates the named tool, declaring it (with no guidance) when it
// is not declared yet.
func (o *Options) WithTool(name string) {
	for i := range o.Tools {
		if o.Tools[i].Name == name {
			o.Tools[i].Active = true
			return
		}
	}
	o.Tools = append(o.Tools, Tool{Name: name, Active: true})
}

// WithCap sets a capability.
func (o *Options) WithCap(name string) {
	if !slices.Contains(o.AllCapabilities(), name) {
		o.Capabilities = append(o.Capabilities, name)
	}
}

// WithoutCap unsets a capability, wherever it was set (capabilities or the
// profile's caps).
func (o *Options) WithoutCap(name string) {
	o.Capabilities = slices.DeleteFunc(o.Capabilities, func(c string) bool { return c == name })
	o.ProfileCaps = slices.DeleteFunc(o.ProfileCaps, func(c string) bool { return c == name })
}

// Clone returns a copy of o that can be changed without changing o.
func (o *Options) Clone() *Options {
	c := *o
	c.SystemItems = slices.Clone(o.SystemItems)
	c.PrimaryParts = slices.Clone(o.PrimaryParts)
	c.Profile = slices.Clone(o.Profile)
	c.ProfileCaps = slices.Clone(o.ProfileCaps)
	c.Tools = slices.Clone(o.Tools)
	c.Capabilities = slices.Clone(o.Capabilities)
	c.Reminders = slices.Clone(o.Reminders)
	c.Warnings = slices.Clone(o.Warnings)
	return &c
}
