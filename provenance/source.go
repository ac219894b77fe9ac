package provenance

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Source is something a slice handed out and a part may cite: an event, a
// belief, a chronicle section, or a value given by the caller. Its text form
// is what manifests carry: "event:12", "belief:b3", "section:round-1",
// "given:brief".
type Source struct {
	Kind string
	ID   string
}

// The kinds of source.
const (
	KindEvent   = "event"
	KindBelief  = "belief"
	KindSection = "section"
	KindGiven   = "given"
)

// EventSource names the event at seq.
func EventSource(seq int64) Source { return Source{KindEvent, strconv.FormatInt(seq, 10)} }

// BeliefSource names a belief.
func BeliefSource(id string) Source { return Source{KindBelief, id} }

// SectionSource names a chronicle section.
func SectionSource(id string) Source { return Source{KindSection, id} }

// GivenSource names a caller-given value.
func GivenSource(name string) Source { return Source{KindGiven, name} }

// String returns "kind:id".
func (s Source) String() string { return s.Kind + ":" + s.ID }

// ErrBadSource is text that is not a source.
var ErrBadSource = errors.New("not a source")

// ParseSource reads "kind:id".
func ParseSource(text string) (Source, error) {
	kind, id, ok := strings.Cut(text, ":")
	switch {
	case !ok || id == "":
		return Source{}, fmt.Errorf("%w: %q is not kind:id", ErrBadSource, text)
	case kind != KindEvent && kind != KindBelief && kind != KindSection && kind != KindGiven:
		return Source{}, fmt.Errorf("%w: %q has unknown kind %q", ErrBadSource, text, kind)
	}
	return Source{kind, id}, nil
}

func sourceStrings(ss []Source) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.String()
	}
	return out
}
