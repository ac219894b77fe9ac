package reminder

import (
	"slices"
	"strconv"
	"strings"

	"github.com/promptloom/promptloom/digest"
)

// instructions heads every <context-directives> envelope: Harn's
// directive_envelope_instructions.harn.prompt asset, its trailing newline
// trimmed, byte for byte.
const instructions = `Follow each directive according to its authority and lifetime. ` +
	`A directive with ttl_turns="N" applies only to the N assistant turns immediately after the message where it first appears. ` +
	`Re-sending that same historical message does not renew it. ` +
	`A newly appended directive starts its own lifetime, even when its text matches an earlier directive. ` +
	`Contract directives override corrective directives; corrective directives override advisory directives.`

const (
	envelopeOpen  = "<context-directives>\n"
	envelopeClose = "\n</context-directives>"
)

// Row is a rendered reminder's provenance: the reminder a directive of the
// message came from (its authority set), and where its escaped body sits
// in the message.
type Row struct {
	Reminder
	// Offset and Bytes locate the reminder's escaped body in the message;
	// Digest is the digest of those bytes.
	Offset int    `json:"offset"`
	Bytes  int    `json:"bytes"`
	Digest string `json:"digest"`
}

// Rendered is the trailing user message, one row per directive in it, and
// the reminders deduped away: what a harness sends and what it can show
// about why.
type Rendered struct {
	Message string    `json:"message"`
	Rows    []Row     `json:"rows"`
	Deduped []Deduped `json:"deduped,omitempty"`
	// Removed counts pending reminders a later one with the same dedupe
	// key replaced before rendering (set by whoever injected them, as
	// explain does).
	Removed int `json:"removed"`

	// directives are the message's <directive> blocks in envelope order.
	directives []string
	// invalid lists the IDs of reminders dropped as invalid (Harn drops
	// them with the reason "invalid"); a Set holds none, having refused
	// them at Inject.
	invalid []string
}

// writeDirective writes r's block to b, as Harn's directive block: the
// authority (contract when unset), ttl_turns when finite, and the body
// escaped on a line of its own (not trimmed). It returns the offset and
// length of the escaped body within b.
func writeDirective(b *strings.Builder, r Reminder) (offset, n int) {
	b.WriteString(`<directive authority="`)
	b.WriteString(authorityOr(r.Authority))
	b.WriteByte('"')
	if r.TTLTurns > 0 {
		b.WriteString(` ttl_turns="`)
		b.WriteString(strconv.Itoa(r.TTLTurns))
		b.WriteByte('"')
	}
	b.WriteString(">\n")
	offset = b.Len()
	escape(b, r.Body)
	n = b.Len() - offset
	b.WriteString("\n</directive>")
	return offset, n
}

// escape writes s with the three characters Harn's escape_xml_text
// replaces (&, <, >) spelled as entities; quotes are left alone.
func escape(b *strings.Builder, s string) {
	for {
		i := strings.IndexAny(s, "&<>")
		if i < 0 {
			b.WriteString(s)
			return
		}
		b.WriteString(s[:i])
		switch s[i] {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		default:
			b.WriteString("&gt;")
		}
		s = s[i+1:]
	}
}

// envelopeOf wraps rendered directive blocks in one <context-directives>
// message: the instructions, then the blocks one per line. No directive is
// no message: ok is false.
func envelopeOf(directives []string) (message string, ok bool) {
	if len(directives) == 0 {
		return "", false
	}
	return envelopeOpen + instructions + "\n" + strings.Join(directives, "\n") + envelopeClose, true
}

// Render renders the pending reminders as one trailing user message.
// history holds the text of each message the transcript already sends
// (for a message of content blocks, their texts joined with "\n"); a
// directive one of them carries is not issued again. With no history, every
// pending directive is issued. No directive to issue is no message.
func (s *Set) Render(history []string) Rendered { return render(s.pending, history) }

// render dedupes and orders rs as Harn does (dedupeAndOrder), drops the
// directives history already carries (issued), and writes the rest as one
// envelope, with a row per directive locating its escaped body. Invalid
// reminders are dropped and listed.
func render(rs []Reminder, history []string) Rendered {
	out := Rendered{Rows: []Row{}}
	valid := make([]Reminder, 0, len(rs))
	for _, r := range rs {
		if r.validate() != nil {
			out.invalid = append(out.invalid, r.ID)
			continue
		}
		valid = append(valid, r)
	}
	order, deduped := dedupeAndOrder(valid)
	out.Deduped = deduped
	type block struct{ off, n int } // the escaped body within its directive
	var bodies []block
	for _, r := range order {
		var b strings.Builder
		off, n := writeDirective(&b, r)
		if d := b.String(); !issued(history, d) {
			out.directives = append(out.directives, d)
			row := Row{Reminder: r}
			row.Authority, row.Tags = authorityOr(r.Authority), slices.Clone(r.Tags)
			out.Rows = append(out.Rows, row)
			bodies = append(bodies, block{off, n})
		}
	}
	out.Message, _ = envelopeOf(out.directives)
	at := len(envelopeOpen) + len(instructions)
	for i, d := range out.directives {
		at++ // the line break before the directive
		row := &out.Rows[i]
		row.Offset, row.Bytes = at+bodies[i].off, bodies[i].n
		row.Digest = digest.Of(out.Message[row.Offset : row.Offset+row.Bytes]).String()
		at += len(d)
	}
	return out
}

// dedupeAndOrder is Harn's directive policy (dedupe_and_order_directives):
// among reminders sharing a dedupe key, then among the survivors sharing a
// body once runs of white space are collapsed and the ends trimmed, the one
// of higher authority wins and, between equals, the later one. The kept
// reminders come back contract first, then corrective, then advisory, in
// their given order within an authority.
func dedupeAndOrder(rs []Reminder) (kept []Reminder, deduped []Deduped) {
	wins := func(i, j int) bool { // does rs[i] beat rs[j]?
		pi, pj := priority(rs[i].Authority), priority(rs[j].Authority)
		return pi > pj || (pi == pj && i > j)
	}
	pass := func(idx []int, reason string, key func(Reminder) (string, bool)) []int {
		winner := map[string]int{}
		for _, i := range idx {
			if k, ok := key(rs[i]); ok {
				if w, seen := winner[k]; !seen || wins(i, w) {
					winner[k] = i
				}
			}
		}
		var out []int
		for _, i := range idx {
			k, ok := key(rs[i])
			if w := winner[k]; ok && w != i {
				deduped = append(deduped, Deduped{Replaced: rs[i].ID, Replacing: rs[w].ID, Reason: reason, Key: k})
				continue
			}
			out = append(out, i)
		}
		return out
	}
	idx := make([]int, len(rs))
	for i := range idx {
		idx[i] = i
	}
	idx = pass(idx, "dedupe_key", func(r Reminder) (string, bool) { return r.DedupeKey, r.DedupeKey != "" })
	idx = pass(idx, "body", func(r Reminder) (string, bool) { return strings.Join(strings.Fields(r.Body), " "), true })
	slices.SortStableFunc(idx, func(a, b int) int { return priority(rs[b].Authority) - priority(rs[a].Authority) })
	for _, i := range idx {
		kept = append(kept, rs[i])
	}
	return kept, deduped
}

// issued reports whether a message of history carries directive d: Harn's
// "do not re-issue" rule (uncommitted_directives), which keeps each
// request's messages a prefix of the next one's. The comparison is on whole
// rendered bytes, so a body that itself contains "</directive>" cannot
// defeat it.
func issued(history []string, d string) bool {
	return slices.ContainsFunc(history, func(m string) bool { return strings.Contains(m, d) })
}
