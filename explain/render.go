package explain

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/internal/textsafe"
)

// WriteJSON writes the explanation as indented JSON, without HTML escaping
// (prompts are full of < and &).
func (e *Explanation) WriteJSON(w io.Writer) error {
	return writeStreamed(w, e)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// fence sets a prompt or a message apart from the table around it.
const fence = "────────────────────────────────────────"

// WriteText writes the system prompt, fenced, and a table of the rows.
// Control characters and bytes that are not UTF-8 are escaped
// (textsafe): in the prompt all but newlines, in the table all, so an id or
// reason cannot forge a row or reach the terminal as an escape sequence
// (`--format raw` gives the prompt's exact bytes).
func (e *Explanation) WriteText(w io.Writer) error {
	var b strings.Builder
	esc := textsafe.Line
	if e.absent() {
		fmt.Fprintf(&b, "system prompt: absent (no fragment included), root %s, call role %s\n", esc(e.header().Root), esc(e.header().CallRole))
	} else {
		fmt.Fprintf(&b, "system prompt: %d bytes, %s, root %s, call role %s\n",
			e.header().SystemPromptBytes, e.header().WholePromptDigest, esc(e.header().Root), esc(e.header().CallRole))
		b.WriteString(fence + "\n")
		b.WriteString(textsafe.Block(e.System))
		b.WriteString("\n" + fence + "\n")
	}
	in, ex := e.counts()
	fmt.Fprintf(&b, "%d included, %d excluded\n", in, ex)
	if f := e.Budget; f != nil && f.Total == nil {
		fmt.Fprintf(&b, "budget: %d (%s, no limit); %d fragment(s) shed\n", f.Tokens, esc(f.Encoding), f.Shed)
	} else if f != nil {
		fmt.Fprintf(&b, "budget: %d of %d (%s); %d fragment(s) shed\n", f.Tokens, *f.Total, esc(f.Encoding), f.Shed)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if len(e.Fragments) == 0 {
		return e.writeReminders(w)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	// Under a budget each row has its count: TOKENS, or under the bytes
	// counter COUNTED, which is the BYTES column itself (shown once,
	// unless a row's count differs: a shed row counts 0).
	withTokens := e.Fragments[0].Tokens != nil
	unit := "TOKENS"
	if e.Budget != nil && e.Budget.Encoding == "bytes" {
		unit = "COUNTED"
		same := true
		for _, r := range e.Fragments {
			same = same && r.Tokens != nil && *r.Tokens == r.Bytes
		}
		withTokens = withTokens && !same
	}
	head := "#\tID\tSOURCE\tBUCKET\tIN\tOFFSET\tBYTES\t"
	if withTokens {
		head += unit + "\t"
	}
	fmt.Fprintln(tw, head+"DIGEST\tREASON")
	for i, r := range e.Fragments {
		in, off := "no", "-"
		if r.Included {
			in, off = "yes", strconv.Itoa(*r.Offset)
		}
		line := fmt.Sprintf("%d\t%s\t%s\t%s\t%s\t%s\t%d\t", i+1, esc(r.ID), esc(r.Source), esc(r.Bucket), in, off, r.Bytes)
		if withTokens {
			line += strconv.Itoa(*r.Tokens) + "\t"
		}
		fmt.Fprintln(tw, line+esc(shortDigest(r.Digest))+"\t"+esc(r.Reason))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return e.writeReminders(w)
}

// writeReminders writes the trailing user message the reminders render
// to, and a row a directive: it is sent, though not in the system prompt.
func (e *Explanation) writeReminders(w io.Writer) error {
	rm := e.Reminders
	if rm == nil || rm.Message == "" {
		return nil
	}
	fmt.Fprintf(w, "\nreminders: %d directive(s) in a trailing user message of %d bytes, not in the system prompt\n%s\n%s\n%s\n",
		len(rm.Rows), len(rm.Message), fence, textsafe.Block(rm.Message), fence)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tID\tAUTHORITY\tTTL\tOFFSET\tBYTES\tDIGEST")
	for i, r := range rm.Rows {
		ttl := "-"
		if r.TTLTurns > 0 {
			ttl = strconv.Itoa(r.TTLTurns)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%s\n", i+1, textsafe.Line(r.ID), textsafe.Line(r.Authority), ttl, r.Offset, r.Bytes, textsafe.Line(r.Digest))
	}
	return tw.Flush()
}

// shortDigest keeps the first 12 hex digits: enough to tell rows apart at a
// glance; the JSON form has the whole digest.
func shortDigest(d digest.Digest) string {
	return d.String()[:len("blake3:")+12]
}

// WriteTraces writes one line per stage of the run, escaped as WriteText's
// table.
func (e *Explanation) WriteTraces(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE\tCAPABILITY\tKIND\tSTATUS\tREASON")
	for _, t := range e.Traces {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", textsafe.Line(t.StageID), textsafe.Line(t.Capability),
			textsafe.Line(string(t.Kind)), textsafe.Line(string(t.Status)), textsafe.Line(t.Reason))
	}
	return tw.Flush()
}
