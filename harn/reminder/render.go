package reminder

import (
	"slices"
	"strconv"
	"strings"

	"github.com/promptloom/promptloom/digest"
)

// Instructions heads every <context-directives> envelope: Harn's
// directive_envelope_instructions.harn.prompt asset, its trailing newline
// trimmed, byte for byte.
const Instructions = `Follow each directive according to its authority and lifetime. ` +
	`A directive with ttl_turns="N" applies only to the N assistant turns immediately after the message where it first appears. ` +
	`Re-sending that same historical message does not renew it. ` +
	`A newly appended directive starts its own lifetime, even when its text matches an earlier directive. ` +
	`Contract directives override corrective directives; corrective directives override advisory directives.`

const (
	envelopeOpen  = "<context-directives>\n"
	envelopeClose = "\n</context-directives>"
)

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

// Rendered is the trailing user message, one row per directive in it, the
// reminders deduped away, and those dropped as invalid.
type Rendered struct {
	Message string    `json:"message"`
	Rows    []Row     `json:"rows"`
	Deduped []Deduped `json:"deduped,omitempty"`
	// Invalid lists the IDs of reminders dropped because Validate refused
	// them (Harn drops them with the reason "invalid").
	Invalid []string `json:"invalid,omitempty"`
	// Directives are the rendered <directive> blocks in envelope order, for
	// Uncommitted and Envelope.
	Directives []string `json:"-"`
}

// Directive renders one reminder as Harn's directive block: the authority
// (contract when unset), ttl_turns when finite, and the body escaped on a
// line of its own. The body is not trimmed.
func Directive(r Reminder) string {
	var b strings.Builder
	writeDirective(&b, r)
	return b.String()
}

// writeDirective writes r's block to b and returns the offset and length of
// its escaped body within b.
func writeDirective(b *strings.Builder, r Reminder) (offset, n int) {
	b.WriteString(`<directive authority="`)
	b.WriteString(string(r.Authority.Or()))
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

// Envelope wraps rendered directive blocks in one <context-directives>
// message: the instructions, then the blocks one per line. No directive is
// no message: ok is false.
func Envelope(directives []string) (message string, ok bool) {
	if len(directives) == 0 {
		return "", false
	}
	return envelopeOpen + Instructions + "\n" + strings.Join(directives, "\n") + envelopeClose, true
}

// Render dedupes and orders reminders as Harn does (DedupeAndOrder) and
// writes the survivors as one envelope, with a row per directive locating
// its escaped body. Invalid reminders are dropped and listed. No valid
// reminder renders as no message at all.
func Render(rs []Reminder) Rendered {
	out := Rendered{Rows: []Row{}}
	valid := make([]Reminder, 0, len(rs))
	for _, r := range rs {
		if r.Validate() != nil {
			out.Invalid = append(out.Invalid, r.ID)
			continue
		}
		valid = append(valid, r)
	}
	order, deduped := DedupeAndOrder(valid)
	out.Deduped = deduped
	if len(order) == 0 {
		return out
	}
	var b strings.Builder
	b.WriteString(envelopeOpen)
	b.WriteString(Instructions)
	for _, r := range order {
		b.WriteByte('\n')
		start := b.Len()
		off, n := writeDirective(&b, r)
		out.Directives = append(out.Directives, b.String()[start:])
		body := b.String()[off : off+n]
		out.Rows = append(out.Rows, Row{ID: r.ID, Authority: string(r.Authority.Or()), TTLTurns: r.TTLTurns,
			DedupeKey: r.DedupeKey, Tags: slices.Clone(r.Tags), Offset: off, Bytes: n, Digest: digest.Of(body).String()})
	}
	b.WriteString(envelopeClose)
	out.Message = b.String()
	return out
}

// DedupeAndOrder is Harn's directive policy (dedupe_and_order_directives):
// among reminders sharing a dedupe key, then among the survivors sharing a
// body once runs of white space are collapsed and the ends trimmed, the one
// of higher authority wins and, between equals, the later one. The kept
// reminders come back contract first, then corrective, then advisory, in
// their given order within an authority.
func DedupeAndOrder(rs []Reminder) (kept []Reminder, deduped []Deduped) {
	wins := func(i, j int) bool { // does rs[i] beat rs[j]?
		pi, pj := rs[i].Authority.Priority(), rs[j].Authority.Priority()
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
	slices.SortStableFunc(idx, func(a, b int) int { return rs[b].Authority.Priority() - rs[a].Authority.Priority() })
	for _, i := range idx {
		kept = append(kept, rs[i])
	}
	return kept, deduped
}

// Uncommitted returns the directives whose exact text no message of history
// already carries, in their order: Harn's "do not re-issue" rule, which keeps
// each request's messages a prefix of the next one's. Each history entry is
// one message's text (for a message of content blocks, their texts joined
// with "\n"). The comparison is on whole rendered bytes, so a body that
// itself contains "</directive>" cannot defeat it.
func Uncommitted(history []string, directives []string) []string {
	var out []string
	for _, d := range directives {
		if !slices.ContainsFunc(history, func(m string) bool { return strings.Contains(m, d) }) {
			out = append(out, d)
		}
	}
	return out
}
