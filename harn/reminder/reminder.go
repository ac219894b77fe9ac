// Package reminder keeps the short-lived directives a harness adds turn by
// turn ("the user prefers tabs", "tests are failing: fix them first") out of
// the system string, so that string stays byte-identical and the provider's
// prefix cache keeps hitting. It follows Harn's reminder lifecycle and
// directive rendering.
//
// A Set holds pending reminders. Inject adds one; a dedupe key first removes
// every pending reminder with that key, whatever its authority (Harn's
// transcript.inject_reminder). Turn is a post-turn boundary: a reminder with
// ttl_turns 1 expires, a larger finite TTL goes down by one. Compact is
// Harn's pre-compaction pass: TTLs count down once more, reminders sharing a
// dedupe key collapse to the newest, and only those marked
// preserve_on_compact survive.
//
// Render writes reminders as Harn writes them: it dedupes them again (by key,
// then by body compared with white space collapsed; the higher authority
// wins, then the later reminder), orders them contract, corrective,
// advisory (injection order within an authority), renders each as
//
//	<directive authority="corrective" ttl_turns="2">
//	escaped body
//	</directive>
//
// and wraps them in one <context-directives> envelope, headed by Harn's
// instruction text, for a trailing user message of its own. Uncommitted
// drops directives whose exact text a transcript already carries, so a
// directive is never re-issued and the message prefix never changes.
package reminder

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
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

// DefaultAuthority is the authority of a reminder that names none. Harn's
// SystemReminder::new leaves a reminder at contract authority: its dedupe
// test (dedup_prefers_authority_then_recency_and_orders_the_envelope) has an
// unmarked reminder beat a newer advisory one with the same body and render
// ahead of a corrective one.
const DefaultAuthority = Contract

// Valid reports whether a is one of the authorities, or unset (contract).
func (a Authority) Valid() bool {
	return a == "" || a == Contract || a == Corrective || a == Advisory
}

// Or returns a, or DefaultAuthority when a is unset.
func (a Authority) Or() Authority {
	if a == "" {
		return DefaultAuthority
	}
	return a
}

// Priority is Harn's DirectiveAuthority priority: contract 2, corrective 1,
// advisory 0. An unset authority has its default's priority.
func (a Authority) Priority() int {
	switch a.Or() {
	case Contract:
		return 2
	case Corrective:
		return 1
	}
	return 0
}

// Reminder is one directive.
type Reminder struct {
	// ID is assigned by the set: r1, r2, ... in injection order. Reminders
	// rendered without a set keep whatever ID they carry.
	ID        string
	Body      string
	Tags      []string
	DedupeKey string
	// TTLTurns is how many more turn boundaries the reminder lives
	// through; 0 means it does not expire (Harn's ttl_turns: nil).
	TTLTurns          int
	PreserveOnCompact bool
	// Authority is contract when unset.
	Authority Authority
}

// Errors of Inject and Validate, matchable with errors.Is.
var (
	ErrEmptyBody    = errors.New("reminder body is empty")
	ErrBadAuthority = errors.New("unknown authority")
	ErrBadTTL       = errors.New("ttl_turns is negative")
)

// Validate reports why r cannot be injected or rendered: a blank body, an
// unknown authority or a negative TTL. The error names r's ID when it has
// one.
func (r Reminder) Validate() error {
	var err error
	switch {
	case strings.TrimSpace(r.Body) == "":
		err = ErrEmptyBody
	case r.TTLTurns < 0:
		err = fmt.Errorf("%w: %d", ErrBadTTL, r.TTLTurns)
	case !r.Authority.Valid():
		err = fmt.Errorf("%w %q (want contract, corrective or advisory)", ErrBadAuthority, r.Authority)
	}
	if err != nil && r.ID != "" {
		err = fmt.Errorf("reminder %s: %w", r.ID, err)
	}
	return err
}

// Set is the pending reminders, in injection order. The zero value is
// empty and ready.
type Set struct {
	next    int
	pending []Reminder
}

// Inject adds r (authority contract when unset) after removing every pending
// reminder with its dedupe key, and returns how many it removed.
func (s *Set) Inject(r Reminder) (removed int, err error) {
	if err := r.Validate(); err != nil {
		return 0, err
	}
	r.Authority = r.Authority.Or()
	if r.DedupeKey != "" {
		before := len(s.pending)
		s.pending = slices.DeleteFunc(s.pending, func(p Reminder) bool { return p.DedupeKey == r.DedupeKey })
		removed = before - len(s.pending)
	}
	s.next++
	r.ID = "r" + strconv.Itoa(s.next)
	r.Tags = slices.Clone(r.Tags)
	s.pending = append(s.pending, r)
	return removed, nil
}

// Turn is a post-turn boundary: a reminder with one turn left expires and is
// returned; a larger finite TTL goes down by one.
func (s *Set) Turn() (expired []Reminder) {
	s.pending, expired, _ = countDown(s.pending)
	return expired
}

// countDown applies one TTL boundary to rs in place.
func countDown(rs []Reminder) (kept, expired []Reminder, decremented int) {
	kept = rs[:0]
	for _, r := range rs {
		switch {
		case r.TTLTurns == 1:
			expired = append(expired, r)
			continue
		case r.TTLTurns > 1:
			r.TTLTurns--
			decremented++
		}
		kept = append(kept, r)
	}
	return kept, expired, decremented
}

// Deduped records a reminder dropped for another.
type Deduped struct {
	// Replaced is the dropped reminder's ID, Replacing the one kept.
	Replaced  string `json:"replaced_id"`
	Replacing string `json:"replacing_id"`
	// Reason is "dedupe_key" or "body".
	Reason string `json:"reason"`
	// Key is the shared dedupe key, or the shared body with white space
	// collapsed.
	Key string `json:"key"`
}

// CompactReport is what Compact did, as Harn's ReminderCompactReport
// counts it.
type CompactReport struct {
	// Expired reached the end of their TTL at the compaction boundary.
	// (Harn's report also counts reminders deduplicated by key here; a Set
	// never holds two with one key, since Inject replaces the older, so
	// there is nothing to count.)
	Expired []Reminder
	// Compacted were folded away: not marked preserve_on_compact.
	Compacted []Reminder
	// Decremented counts the finite TTLs that went down and stayed alive.
	Decremented int
	// Preserved counts the reminders kept.
	Preserved int
}

// Compact is Harn's reminder pass before a compaction (compact_reminder_events):
// finite TTLs count down as at a turn boundary, and only the reminders
// marked preserve_on_compact stay pending. (Harn also collapses reminders
// that share a dedupe key to the newest; a Set holds none such.)
func (s *Set) Compact() CompactReport {
	var rep CompactReport
	var live []Reminder
	live, rep.Expired, rep.Decremented = countDown(s.pending)
	var kept []Reminder
	for _, r := range live {
		if r.PreserveOnCompact {
			kept = append(kept, r)
			rep.Preserved++
		} else {
			rep.Compacted = append(rep.Compacted, r)
		}
	}
	s.pending = kept
	return rep
}

// Pending returns the pending reminders in injection order.
func (s *Set) Pending() []Reminder { return slices.Clone(s.pending) }
