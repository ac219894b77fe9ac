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
// Harn's pre-compaction pass: TTLs count down once more, and only those
// marked preserve_on_compact survive.
//
// Render writes the pending reminders as Harn writes them: it dedupes them
// again (by key, then by body compared with white space collapsed; the
// higher authority wins, then the later reminder), orders them contract,
// corrective, advisory (injection order within an authority), renders each
// as
//
//	<directive authority="corrective" ttl_turns="2">
//	escaped body
//	</directive>
//
// and wraps them in one <context-directives> envelope, headed by Harn's
// instruction text, for a trailing user message of its own. Given the
// transcript's messages, Render leaves out every directive whose exact text
// one of them already carries (Harn's append-only placement), so a
// directive is never re-issued and the message prefix never changes.
package reminder

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The authorities of a reminder (Reminder.Authority), strongest first, as
// Harn's DirectiveAuthority ranks them.
const (
	contract   = "contract"
	corrective = "corrective"
	advisory   = "advisory"
)

// validAuthority reports whether a is one of the three authorities, or
// unset.
func validAuthority(a string) bool {
	return a == "" || a == contract || a == corrective || a == advisory
}

// authorityOr returns a, or contract when a is unset.
func authorityOr(a string) string {
	if a == "" {
		return contract
	}
	return a
}

// priority is Harn's DirectiveAuthority priority: contract 2, corrective 1,
// advisory 0. An unset authority has contract's priority.
func priority(a string) int {
	switch authorityOr(a) {
	case contract:
		return 2
	case corrective:
		return 1
	}
	return 0
}

// Reminder is one directive, as Harn's SystemReminder carries it. Its JSON
// is what a rendered row says of it (Row): the body is in the message, and
// whether it survives compaction is the set's business.
type Reminder struct {
	// ID is assigned by the set: r1, r2, ... in injection order.
	ID string `json:"id"`
	// Authority ranks the reminder, as Harn's DirectiveAuthority does:
	// "contract" outranks "corrective", which outranks "advisory"; any
	// other is invalid. Unset is contract: Harn's SystemReminder::new
	// leaves a reminder at contract authority (its dedupe test,
	// dedup_prefers_authority_then_recency_and_orders_the_envelope, has an
	// unmarked reminder beat a newer advisory one with the same body and
	// render ahead of a corrective one).
	Authority string `json:"authority"`
	// TTLTurns is how many more turn boundaries the reminder lives
	// through; 0 means it does not expire (Harn's ttl_turns: nil).
	TTLTurns          int      `json:"ttl_turns"`
	DedupeKey         string   `json:"dedupe_key,omitempty"`
	Tags              []string `json:"tags,omitempty"`
	Body              string   `json:"-"`
	PreserveOnCompact bool     `json:"-"`
}

// ErrInvalid is Inject's error for a reminder Harn would drop as invalid:
// a blank body, a negative TTL or an unknown authority.
var ErrInvalid = errors.New("invalid reminder")

// validate reports why r cannot be injected or rendered. The error names
// r's ID when it has one.
func (r Reminder) validate() error {
	var err error
	switch {
	case strings.TrimSpace(r.Body) == "":
		err = fmt.Errorf("%w: the body is empty", ErrInvalid)
	case r.TTLTurns < 0:
		err = fmt.Errorf("%w: ttl_turns is negative: %d", ErrInvalid, r.TTLTurns)
	case !validAuthority(r.Authority):
		err = fmt.Errorf("%w: unknown authority %q (want contract, corrective or advisory)", ErrInvalid, r.Authority)
	}
	if err != nil && r.ID != "" {
		err = fmt.Errorf("reminder %s: %w", r.ID, err)
	}
	return err
}

// Set is the pending reminders, in injection order: the state a harness
// keeps between turns. The zero value is empty and ready.
type Set struct {
	next    int
	pending []Reminder
}

// Inject adds r (authority contract when unset) after removing every pending
// reminder with its dedupe key, and returns how many it removed.
func (s *Set) Inject(r Reminder) (removed int, err error) {
	if err := r.validate(); err != nil {
		return 0, err
	}
	r.Authority = authorityOr(r.Authority)
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
	s.pending, expired = countDown(s.pending)
	return expired
}

// countDown applies one TTL boundary to rs in place.
func countDown(rs []Reminder) (kept, expired []Reminder) {
	kept = rs[:0]
	for _, r := range rs {
		switch {
		case r.TTLTurns == 1:
			expired = append(expired, r)
			continue
		case r.TTLTurns > 1:
			r.TTLTurns--
		}
		kept = append(kept, r)
	}
	return kept, expired
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

// Compact is Harn's reminder pass before a compaction
// (compact_reminder_events): finite TTLs count down as at a turn boundary,
// and only the reminders marked preserve_on_compact stay pending. It returns
// the reminders that expired and those compacted away (not marked
// preserve_on_compact); Harn's ReminderCompactReport counts both, the finite
// TTLs that went down and stayed alive, and the reminders kept. (Harn also
// collapses reminders that share a dedupe key to the newest, and counts
// them; a Set never holds two with one key, since Inject replaces the
// older.)
func (s *Set) Compact() (expired, compacted []Reminder) {
	var live []Reminder
	live, expired = countDown(s.pending)
	var kept []Reminder
	for _, r := range live {
		if r.PreserveOnCompact {
			kept = append(kept, r)
		} else {
			compacted = append(compacted, r)
		}
	}
	s.pending = kept
	return expired, compacted
}
