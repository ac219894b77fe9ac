package provenance

import (
	"strconv"
	"strings"
)

// Source names something a slice handed out and a part may cite, in the
// form manifests carry: "event:12", "belief:b3", "section:round-1",
// "given:brief".
type Source string

// The kinds of source.
const (
	kindEvent   = "event"
	kindBelief  = "belief"
	kindSection = "section"
	kindGiven   = "given"
)

// EventSource names the event at seq.
func EventSource(seq int64) Source { return source(kindEvent, strconv.FormatInt(seq, 10)) }

// BeliefSource names a belief by its ID.
func BeliefSource(id string) Source { return source(kindBelief, id) }

// SectionSource names a chronicle section by its ID.
func SectionSource(id string) Source { return source(kindSection, id) }

// GivenSource names a caller-given value by its name.
func GivenSource(name string) Source { return source(kindGiven, name) }

func source(kind, id string) Source { return Source(kind + ":" + id) }

// kind is the source's kind: event, belief, section or given.
func (s Source) kind() string {
	kind, _, _ := strings.Cut(string(s), ":")
	return kind
}

func sourceStrings(ss []Source) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}
