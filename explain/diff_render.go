package explain

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/promptloom/promptloom/internal/textsafe"
)

// WriteJSON writes the delta as indented JSON: both explanations, the
// fragment deltas, the cache figures and the unified diff.
func (d *Delta) WriteJSON(w io.Writer) error {
	return writeJSON(w, d)
}

// WriteText writes what changed for a reader: the cache impact, the
// fragments side by side, and the unified diff. Control characters and bytes
// that are not UTF-8 are escaped (textsafe): in the diff's lines all but
// the newlines between them, everywhere else all.
func (d *Delta) WriteText(w io.Writer, aName, bName string) error {
	var b strings.Builder
	esc := textsafe.Line
	aName, bName = esc(aName), esc(bName)
	side := func(name string, e *Explanation) {
		if e.absent() {
			fmt.Fprintf(&b, "%s: absent prompt (no fragment included)\n", name)
			return
		}
		fmt.Fprintf(&b, "%s: %d bytes, %s\n", name, e.header().SystemPromptBytes, e.header().WholePromptDigest)
	}
	side("A "+aName, d.A)
	side("B "+bName, d.B)
	if d.Identical {
		b.WriteString("identical: the prompt cache serves all of B\n")
	} else {
		first := "-"
		if d.FirstChangedFragment != nil {
			first = esc(*d.FirstChangedFragment)
		}
		fmt.Fprintf(&b, "cache: %d bytes in common from the start; first change in %s; B re-sends %d bytes\n",
			d.CommonPrefixBytes, first, d.ResendBytes)
	}
	fmt.Fprintf(&b, "fragments: %s\n", d.summary())
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCHANGE\tA\tB")
	for _, f := range d.Fragments {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", esc(f.ID), esc(changeCell(&f)), esc(rowState(f.A)), esc(rowState(f.B)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if d.Unified != "" {
		_, err := io.WriteString(w, "\n"+textsafe.Block(d.Unified))
		return err
	}
	return nil
}

// rowState is a row's inclusion and reason in a few words, for a table.
func rowState(r *Row) string {
	if r == nil {
		return "-"
	}
	if r.Included {
		return fmt.Sprintf("in @%d +%dB (%s)", *r.Offset, r.Bytes, r.Reason)
	}
	return "out (" + r.Reason + ")"
}
