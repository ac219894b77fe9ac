// Package options reads the Harn-shaped JSON options a harness passes to an
// LLM call and returns the fragments each of Harn's contributors makes of
// them, or a located error.
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
// promptloom.Warning. A key given twice anywhere in the document is an
// error.
//
// Options holds the fragments contributor by contributor (System, Primary,
// Profile, Guidance), so a pipeline can run each contributor on its own;
// Fragments returns them all in Harn's build order. The active tools and
// capabilities are data a caller may change, to see the prompt without a
// tool or with a capability.
//
// Every key, its type, its default and what is done with it is listed in
// docs/options.md (a test keeps that page complete).
package options

import (
	"encoding/json"
	"slices"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/harn/reminder"
)

// Options is the part of an LLM call's options that shapes the system
// prompt: the fragments of each of Harn's contributors, and the tools and
// capabilities their gates are checked against. Its slices are read, never
// written, by Fragments and by explain; a caller that changes a copy's
// Tools or capabilities clones those slices first.
type Options struct {
	// System is the system option's fragments: the enabled items of its
	// list form, in order, or the replacement root alone (one Verbatim
	// fragment, promptloom.Replacement) when system is
	// {"mode":"replace","content":...}. A replacement root suppresses every
	// other contributor: Primary, Profile and Guidance are then empty.
	System []promptloom.Fragment
	// Primary is the primary block: one fragment per _system_fragments
	// part when that key is given (even as an empty list), else the string
	// system unless it is blank.
	Primary []promptloom.Fragment
	// Profile is context_profile.prompt_fragments (blank items dropped),
	// unless the primary block was given as _system_fragments, in which
	// the caller forwarded them already.
	Profile []promptloom.Fragment
	// Guidance is one fragment per declared tool with guidance, gated on
	// its tool.
	Guidance []promptloom.Fragment

	// Tools are the declared tools, in order. Harn has no inactive tool,
	// so Parse makes each one Active; a caller may then clear Active to
	// take a tool away from the call, and its guidance is still built and
	// excluded by its gate (deleting the tool entry is a different change:
	// its guidance would not be built at all). A Tool a caller builds
	// itself is inactive unless it sets Active: the zero Tool{Name: "x"}
	// declares x without giving it to the call.
	Tools []Tool
	// Capabilities are the capabilities option's, then
	// context_profile.caps: what a fragment's requires_caps is checked
	// against.
	Capabilities []string

	// Reminders is the reminders option: directives injected in order,
	// rendered outside the system string.
	Reminders []reminder.Reminder
	// CallRole is call_role or mock_scope, trimmed; "" when neither is set
	// (manifest.New then attributes the prompt to "unattributed").
	CallRole string
	// ActorChain is actor_chain as given (JSON), or nil.
	ActorChain json.RawMessage

	// Warnings are the input Harn accepts but that is likely a mistake, in
	// the order they were found; Path is each one's JSON path.
	Warnings []promptloom.Warning
}

// Tool is one declared tool of the options' tools. Its guidance, trimmed,
// is in Options.Guidance.
type Tool struct {
	Name string
	// Active says the call has the tool, so fragments gated on it are
	// included. False (the zero value) declares the tool without it:
	// Parse sets it for every tool it reads.
	Active bool
}

// Fragments returns every fragment in Harn's build order: system list,
// primary block, profile, tool guidance.
func (o *Options) Fragments() []promptloom.Fragment {
	return slices.Concat(o.System, o.Primary, o.Profile, o.Guidance)
}

// ActiveTools returns the names of the active tools, in declaration order:
// what a fragment's requires_tools is checked against.
func (o *Options) ActiveTools() []string {
	out := make([]string, 0, len(o.Tools))
	for _, t := range o.Tools {
		if t.Active {
			out = append(out, t.Name)
		}
	}
	return out
}
