// Package reminder keeps the short-lived directives a harness adds turn by
// turn ("the user prefers tabs", "tests are failing: fix them first") out of
// the system string, so that string stays byte-identical and the provider's
// prefix cache keeps hitting.
//
// A Set holds pending reminders: Inject adds one (a dedupe key replaces the
// pending ones with that key), Turn counts finite TTLs down and drops the
// expired, Compact collapses duplicates and keeps only those marked
// preserve_on_compact. Render writes the survivors as one
// <context-directives> block for a trailing user message, with one
// provenance row each.
package reminder

import (
	"errors"
	"fmt"
	"html"
	"slices"
	"strconv"
	"strings"

	"github.com/promptloom/promptloom/digest"
)

// Authority ranks reminders: a contract outranks a correction, which
// outranks advice.
type Authority string

// The authorities, strongest first.
const (
	Contract   Authority = "contract"
	Corrective Authority = "corrective"
	Advisory   Authority = "advisory"
)

// Valid reports whether a is one of the authorities, or unset (advisory).
func (a Authority) Valid() bool {
	return a == "" || a == Contract || a == Corrective || a == Advisory
}

func (a Authority) rank() int {
	switch a {
	case Contract:
		return 2
	case Corrective:
		return 1
	}
	return 0
}

// Reminder is one directive.
type Reminder struct {
	// ID is assigned by the set: r1, r2, ... in injection order.
	ID        string
	Body      string
	Tags      []string
	DedupeKey string
	// TTLTurns is how many more turn boundaries the reminder lives
	// through; 0 means it does not expire.
	TTLTurns          int
	PreserveOnCompact bool
	Authority         Authority
	seq               int
}

// Errors of Inject.
var (
	ErrEmptyBody    = errors.New("reminder body is empty")
	ErrBadAuthority = errors.New("unknown authority")
	ErrBadTTL       = errors.New("ttl_turns is negative")
)

// Set is the pending reminders. The zero value is empty and ready.
type Set struct {
	next    int
	pending []Reminder
}

// Inject adds r (authority advisory when unset) and returns how many
// pending reminders with the same dedupe key it removed.
func (s *Set) Inject(r Reminder) (removed int, err error) {
	switch {
	case strings.TrimSpace(r.Body) == "":
		return 0, ErrEmptyBody
	case r.TTLTurns < 0:
		return 0, fmt.Errorf("%w: %d", ErrBadTTL, r.TTLTurns)
	case !r.Authority.Valid():
		return 0, fmt.Errorf("%w %q (want contract, corrective or advisory)", ErrBadAuthority, r.Authority)
	case r.Authority == "":
		r.Authority = Advisory
	}
	if r.DedupeKey != "" {
		before := len(s.pending)
		s.pending = slices.DeleteFunc(s.pending, func(p Reminder) bool { return p.DedupeKey == r.DedupeKey })
		removed = before - len(s.pending)
	}
	s.next++
	r.seq, r.ID = s.next, "r"+strconv.Itoa(s.next)
	r.Tags = slices.Clone(r.Tags)
	s.pending = append(s.pending, r)
	return removed, nil
}

// Turn marks a turn boundary: finite TTLs go down by one and the reminders
// that reach zero are dropped and returned.
func (s *Set) Turn() (expired []Reminder) {
	kept := s.pending[:0]
	for _, r := range s.pending {
		if r.TTLTurns > 0 {
			r.TTLTurns--
			if r.TTLTurns == 0 {
				expired = append(expired, r)
				continue
			}
		}
		kept = append(kept, r)
	}
	s.pending = kept
	return expired
}

// Compact collapses reminders that share a dedupe key or a body (compared
// with white space normalised), keeping the one of highest authority and,
// among equals, the most recent; then it keeps only the reminders marked
// preserve_on_compact. It returns the dropped ones.
func (s *Set) Compact() (dropped []Reminder) {
	winner := map[string]int{} // group -> index into pending of its best
	groupOf := func(r Reminder) []string {
		g := []string{"body:" + strings.Join(strings.Fields(r.Body), " ")}
		if r.DedupeKey != "" {
			g = append(g, "key:"+r.DedupeKey)
		}
		return g
	}
	better := func(a, b Reminder) bool {
		if a.Authority.rank() != b.Authority.rank() {
			return a.Authority.rank() > b.Authority.rank()
		}
		return a.seq > b.seq
	}
	for i, r := range s.pending {
		for _, g := range groupOf(r) {
			if w, ok := winner[g]; !ok || better(r, s.pending[w]) {
				winner[g] = i
			}
		}
	}
	var kept []Reminder
	for i, r := range s.pending {
		best := true
		for _, g := range groupOf(r) {
			best = best && winner[g] == i
		}
		if best && r.PreserveOnCompact {
			kept = append(kept, r)
		} else {
			dropped = append(dropped, r)
		}
	}
	s.pending = kept
	return dropped
}

// Pending returns the pending reminders in injection order.
func (s *Set) Pending() []Reminder { return slices.Clone(s.pending) }

// Row is a rendered reminder's provenance.
type Row struct {
	ID        string   `json:"id"`
	Authority string   `json:"authority"`
	TTLTurns  int      `json:"ttl_turns"`
	DedupeKey string   `json:"dedupe_key,omitempty"`
	Tags      []string `json:"tags,omitempty"`
	// Offset and Bytes locate the reminder's escaped body in the message.
	Offset int    `json:"offset"`
	Bytes  int    `json:"bytes"`
	Digest string `json:"digest"`
}

// Rendered is the trailing user message and its rows.
type Rendered struct {
	Message string `json:"message"`
	Rows    []Row  `json:"rows"`
}

// Render writes reminders as one <context-directives> block, strongest
// authority first and, within an authority, in injection order; bodies are
// trimmed and escaped. No reminder renders as no message at all.
func Render(rs []Reminder) Rendered {
	if len(rs) == 0 {
		return Rendered{Rows: []Row{}}
	}
	order := slices.Clone(rs)
	slices.SortStableFunc(order, func(a, b Reminder) int { return b.Authority.rank() - a.Authority.rank() })
	var b strings.Builder
	b.WriteString("<context-directives>\n")
	out := Rendered{}
	for _, r := range order {
		fmt.Fprintf(&b, `<directive authority="%s"`, r.Authority)
		if r.TTLTurns > 0 {
			fmt.Fprintf(&b, ` ttl_turns="%d"`, r.TTLTurns)
		}
		b.WriteString(">")
		body := html.EscapeString(strings.TrimSpace(r.Body))
		out.Rows = append(out.Rows, Row{ID: r.ID, Authority: string(r.Authority), TTLTurns: r.TTLTurns,
			DedupeKey: r.DedupeKey, Tags: r.Tags, Offset: b.Len(), Bytes: len(body), Digest: digest.Of(body).String()})
		b.WriteString(body)
		b.WriteString("</directive>\n")
	}
	b.WriteString("</context-directives>")
	out.Message = b.String()
	return out
}
