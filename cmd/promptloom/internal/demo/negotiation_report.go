package demo

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/provenance"
)

// CallReport is one call of the negotiation as data: who, at which log
// position, the context description and the manifest.
type CallReport struct {
	Role                string              `json:"role"`
	Round               int                 `json:"round"`
	Seq                 int64               `json:"seq"`
	Context             *provenance.Context `json:"context"`
	ManifestContentHash digest.Digest       `json:"manifest_content_hash"`
	Manifest            json.RawMessage     `json:"manifest"`
	Reply               string              `json:"reply"`
}

// Reports returns one report per call, in order.
func (n *Negotiation) Reports() ([]CallReport, error) {
	out := make([]CallReport, 0, len(n.Calls))
	for _, c := range n.Calls {
		m, err := c.Context.Manifest.Canonical()
		if err != nil {
			return nil, err
		}
		hash := digest.Bytes(m) // ContentHash, without encoding again
		out = append(out, CallReport{Role: c.Role, Round: c.Round, Seq: c.Seq, Context: c.Context,
			ManifestContentHash: hash, Manifest: m, Reply: c.Reply})
	}
	return out, nil
}

// WriteJSON writes {"scenario": "negotiation", "calls": [...]}.
func (n *Negotiation) WriteJSON(w io.Writer) error {
	reports, err := n.Reports()
	if err != nil {
		return err
	}
	return writeJSON(w, map[string]any{"scenario": "negotiation", "calls": reports})
}

// WriteText writes each call: what the party read, which fragment came from
// which sources, and what it said.
func (n *Negotiation) WriteText(w io.Writer) error {
	reports, err := n.Reports()
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("promptloom demo negotiation: the UK and the EU settle a fisheries quota over three rounds.\n")
	b.WriteString("Every offer is an event; each party's prompt is assembled through a grant of slices, so every\n")
	b.WriteString("fragment names the events it came from, and the remark only the EU overheard never reaches the UK.\n")
	fmt.Fprintf(&b, "Each prompt is held to %d bytes: the later rounds shed by register and rank, never the brief.\n", Budget)
	for _, r := range reports {
		fmt.Fprintf(&b, "\n== round %d, %s, at log position %d: %d-byte prompt, manifest content hash %s\n",
			r.Round, strings.ToUpper(r.Role), r.Seq, len(r.Context.Prompt), r.ManifestContentHash)
		read := make([]string, len(r.Context.Read))
		for i, s := range r.Context.Read {
			read[i] = string(s)
		}
		fmt.Fprintf(&b, "read: %s\n", strings.Join(read, ", "))
		for _, p := range r.Context.Parts {
			cites := "-"
			if len(p.Sources) > 0 {
				cites = strings.Join(p.Sources, ", ")
			}
			fate := "in  "
			if !p.Included {
				fate = "shed"
			}
			fmt.Fprintf(&b, "  %s %-22s %-10s <- %s\n", fate, p.ID, p.Register, cites)
		}
		fmt.Fprintf(&b, "reply: %s\n", r.Reply)
	}
	_, err = io.WriteString(w, b.String())
	return err
}
