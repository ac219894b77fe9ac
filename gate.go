// Package gating decides whether a fragment's gates let it into the prompt,
// and says why in the exact words Harn's manifests use.
//
// The decision is pure: a fragment and the active set in, a Decision out.
// It looks only at gates; an empty body is the reducer's business.
//
// Vocabulary: a gate is a tool (requires_tools) or a capability
// (requires_caps) a fragment needs; Active is the call's active tools and
// capabilities; a fragment with no gate is unconditional (Gated reports
// whether it has one). Tools are checked before capabilities, each in the
// order given, and the first missing one is the reason.
package promptloom

import (
	"strings"
)

// Active is the set of active tools and capabilities for one assembly.
// The zero value has none of either.
type Active struct {
	tools map[string]struct{}
	caps  map[string]struct{}
}

// NewActive returns the active set of the named tools and capabilities.
func NewActive(tools, caps []string) Active {
	return Active{tools: set(tools), caps: set(caps)}
}

func set(names []string) map[string]struct{} {
	m := make(map[string]struct{}, len(names))
	for _, n := range names {
		m[n] = struct{}{}
	}
	return m
}

// HasTool reports whether the tool is active.
func (a Active) HasTool(name string) bool { _, ok := a.tools[name]; return ok }

// HasCap reports whether the capability is set.
func (a Active) HasCap(name string) bool { _, ok := a.caps[name]; return ok }

// Decision is the outcome of gating one fragment.
type Decision struct {
	Included bool
	Reason   string
}

// Unconditional is the reason of an included fragment with no gate.
const Unconditional = "unconditional"

// Decide checks f's gates in order: the first missing tool in declared order
// excludes it, else the first missing capability. An included fragment's
// reason names what it required.
func Decide(f *Fragment, a Active) Decision {
	for _, t := range f.RequiresTools {
		if !a.HasTool(t) {
			return Decision{Reason: "requires tool `" + t + "` (not available)"}
		}
	}
	for _, c := range f.RequiresCaps {
		if !a.HasCap(c) {
			return Decision{Reason: "requires capability `" + c + "` (not set)"}
		}
	}
	switch {
	case len(f.RequiresTools) > 0:
		return Decision{Included: true, Reason: "tool(s) present: " + strings.Join(f.RequiresTools, ", ")}
	case len(f.RequiresCaps) > 0:
		return Decision{Included: true, Reason: "capabilit(ies) present: " + strings.Join(f.RequiresCaps, ", ")}
	}
	return Decision{Included: true, Reason: Unconditional}
}

// Gated reports whether f depends on any tool or capability.
func Gated(f *Fragment) bool {
	return len(f.RequiresTools) > 0 || len(f.RequiresCaps) > 0
}
