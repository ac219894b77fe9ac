package provenance

import (
	"strconv"
	"strings"
)

// Source names something a slice handed out and a part may cite, in the
// form manifests carry: "event:12", "belief:b3", "section:round-1",
// "given:brief". A part gets one from what it read (Slice.Cite,
// Given.Cite), so a citation names what a slice handed out by
// construction; Assemble still checks every citation against the slices.
type Source string

// The kinds of source.
const (
	kindEvent   = "event"
	kindBelief  = "belief"
	kindSection = "section"
	kindGiven   = "given"
)

func source(kind, id string) Source { return Source(kind + ":" + id) }

func eventSource(seq int64) Source { return source(kindEvent, strconv.FormatInt(seq, 10)) }

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
