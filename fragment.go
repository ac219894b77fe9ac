package promptloom

import (
	"strconv"
	"strings"

	"github.com/promptloom/promptloom/budget"
)

// Fragment is one contributor to the system prompt. It does not know
// whether it will be included: that is the reducer's decision, made from
// its gates (RequiresTools, RequiresCaps) and its body.
type Fragment struct {
	// ID names the fragment in the manifest, e.g. "system[0]", "primary",
	// "tool:todo.guidance". It may not be empty; two fragments may share
	// one (Harn builds such prompts).
	ID string
	// Source groups fragments by contributor, e.g. "system[0]", "primary",
	// "profile", "tool:todo".
	Source string
	// Producer is the manifest's producer; empty means Source.
	Producer string
	// Bucket places the fragment before or after the primary block.
	Bucket Bucket
	// RequiresTools and RequiresCaps gate the fragment: it is included only
	// if every named tool is active and every capability set. Declared order
	// matters: the first one missing names the reason.
	RequiresTools []string
	RequiresCaps  []string
	// Body is the text. The reducer trims it of Unicode white space, unless
	// Verbatim is set.
	Body string
	// Verbatim marks the exclusive replacement root: its body is the whole
	// prompt, byte for byte, and no other fragment may stand beside it.
	Verbatim bool
	// Register and Rank order shedding under a budget; the zero Register is
	// budget.Binding, which is never shed.
	Register budget.Register
	Rank     int
	// Sources are the citations the fragment was built from, such as
	// "event:12" or "belief:b3"; they are carried into the manifest.
	Sources []string
	// Template is set when Body was rendered from a template: the
	// template's digest and the bindings it read (carried into the
	// manifest) and where each byte of Body came from. Nil for a body
	// given as text.
	Template *Template
}

// Bucket is the side of the primary block a fragment lands on.
type Bucket uint8

// The buckets, in wire order.
const (
	Before Bucket = iota
	After
)

// String returns "before" or "after".
func (b Bucket) String() string {
	if b == After {
		return "after"
	}
	return "before"
}

// SystemItem is item index of the list-form system option. A non-blank title
// renders as a heading, "## TITLE\nCONTENT", with title and content trimmed
// (Harn's rendering); the index is the item's place in the list as given, so
// a disabled item still uses up its index.
func SystemItem(index int, title, content string, bucket Bucket) Fragment {
	id := "system[" + strconv.Itoa(index) + "]"
	body := content
	if t := strings.TrimSpace(title); t != "" {
		body = "## " + t + "\n" + strings.TrimSpace(content)
	}
	return Fragment{ID: id, Source: id, Bucket: bucket, Body: body}
}

// Primary is the primary block given as one string.
func Primary(body string) Fragment {
	return Fragment{ID: "primary", Source: "primary", Body: body}
}

// ToolGuidance is a tool's guidance, gated on the tool itself so that the
// instruction and the tool can never drift apart.
func ToolGuidance(tool, guidance string) Fragment {
	return Fragment{
		ID:            "tool:" + tool + ".guidance",
		Source:        "tool:" + tool,
		Body:          guidance,
		RequiresTools: []string{tool},
	}
}

// Replacement is the exclusive replacement root: content is the whole
// system prompt, untrimmed, and every other contributor is suppressed.
func Replacement(content string) Fragment {
	return Fragment{ID: "replacement", Source: "caller", Producer: "caller", Body: content, Verbatim: true}
}

// Gated reports whether f depends on any tool or capability: a gated
// fragment may come and go between calls, so it matters to a prompt cache.
func (f *Fragment) Gated() bool {
	return len(f.RequiresTools) > 0 || len(f.RequiresCaps) > 0
}

// gateUnder decides whether f's gates let it in under o's active tools and
// capabilities (rule 2 of Reduce), and says why in the words Harn's
// manifests use. It looks only at gates: an empty body is excluded by
// Reduce, not here.
func (f *Fragment) gateUnder(o *Options) (included bool, reason string) {
	if o == nil {
		o = &Options{}
	}
	a := newActive(o)
	return f.gate(&a)
}

// active is the set form of Options' tools and capabilities, built once
// per reduction.
type active struct{ tools, caps map[string]struct{} }

func newActive(o *Options) active {
	return active{tools: set(o.Tools), caps: set(o.Capabilities)}
}

func set(names []string) map[string]struct{} {
	m := make(map[string]struct{}, len(names))
	for _, n := range names {
		m[n] = struct{}{}
	}
	return m
}

// gate is gateUnder against a built set: tools first, each in declared order,
// then capabilities; the first missing one is the reason.
func (f *Fragment) gate(a *active) (bool, string) {
	for _, t := range f.RequiresTools {
		if _, ok := a.tools[t]; !ok {
			return false, "requires tool `" + t + "` (not available)"
		}
	}
	for _, c := range f.RequiresCaps {
		if _, ok := a.caps[c]; !ok {
			return false, "requires capability `" + c + "` (not set)"
		}
	}
	switch {
	case len(f.RequiresTools) > 0:
		return true, "tool(s) present: " + strings.Join(f.RequiresTools, ", ")
	case len(f.RequiresCaps) > 0:
		return true, "capabilit(ies) present: " + strings.Join(f.RequiresCaps, ", ")
	}
	return true, reasonUnconditional
}
