// Package fragment holds the one value every contributor to a system prompt
// becomes: an ordered, gated, attributed piece of text.
//
// A Fragment says what it is (ID), who contributed it (Source, Producer),
// where it goes (Bucket), what it needs to be included (RequiresTools,
// RequiresCaps), how much it matters when the prompt is too long (Register,
// Rank) and what it was built from (Sources). It does not know whether it
// will be included: that is gating's decision and the reducer's work.
//
// The constructors give each Harn contributor its documented id and source,
// so every caller spells them the same way.
package promptloom

import "github.com/promptloom/promptloom/budget"

// Fragment is one contributor to the system prompt.
type Fragment struct {
	// ID names the fragment in the manifest, e.g. "system[0]", "primary",
	// "tool:todo.guidance".
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
	// Binding, which is never shed.
	Register budget.Register
	Rank     int
	// Sources are the citations the fragment was built from, such as
	// "event:12" or "belief:b3"; they are carried into the manifest.
	Sources []string
}

// ProducerOrSource returns the manifest producer: Producer, or Source when
// Producer is empty.
func (f *Fragment) ProducerOrSource() string {
	if f.Producer != "" {
		return f.Producer
	}
	return f.Source
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

// ParseBucket reads "before" or "after".
func ParseBucket(s string) (Bucket, bool) {
	switch s {
	case "before":
		return Before, true
	case "after":
		return After, true
	}
	return Before, false
}
