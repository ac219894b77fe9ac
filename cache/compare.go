package cache

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/promptloom/promptloom/internal/textsafe"
	"github.com/promptloom/promptloom/request"
)

// Comparison is where request B leaves request A's prefix, and what that
// costs under B's provider's cache when B is sent right after A.
type Comparison struct {
	Divergence request.Divergence `json:"divergence"`
	// KeepsPrefix says B holds the whole of A's prefix.
	KeepsPrefix bool `json:"keeps_prefix"`
	// Predicted, Estimate and Blame are B's verdict, sent one second
	// after A on a cache A alone wrote.
	Predicted Tokens  `json:"predicted"`
	Estimate  bool    `json:"estimate,omitempty"`
	Blame     []Blame `json:"blame,omitempty"`

	segmentsA    int
	provider     string
	aName, bName string
}

// Compare compares b's request with a's (diff --request); their names
// are the ones its blame and WriteText give them. At is not read: B is
// predicted as sent one second after A. The reports are: a recorded
// call's estimates are scaled to what its provider reported, and what A
// reported writing is what B can read, so B's figures are the ones Run
// gives it (cache --transcript) when A is the call before it.
func Compare(a, b Call, o *Options) *Comparison {
	d := diverge(a.Request, b.Request)
	at := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	v := Run([]Call{{Name: a.Name, At: at, Request: a.Request, Reported: a.Reported},
		{Name: b.Name, At: at.Add(time.Second), Request: b.Request, Reported: b.Reported}}, o).Verdicts[1]
	return &Comparison{Divergence: d, KeepsPrefix: d.Index == len(a.Request.Segments) && d.Reason == "",
		Predicted: v.Predicted, Estimate: v.Estimate, Blame: v.Blame,
		segmentsA: len(a.Request.Segments), provider: b.Request.Provider, aName: a.Name, bName: b.Name}
}

// WriteJSON writes the comparison as indented JSON.
func (c *Comparison) WriteJSON(w io.Writer) error { return writeJSON(w, c) }

// WriteText writes the comparison for a terminal.
func (c *Comparison) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	an, bn, d := textsafe.Line(c.aName), textsafe.Line(c.bName), c.Divergence
	if c.KeepsPrefix {
		fmt.Fprintf(ew, "%s keeps %s's whole prefix (%d segments; %s tokens shared)\n", bn, an, c.segmentsA, thousands(d.SharedTokens))
	} else {
		fmt.Fprintf(ew, "%s leaves %s's prefix at segment %d, %s (%s): %s\n", bn, an, d.Index+1, textsafe.Line(orDash(d.Path)), orDash(d.Section), textsafe.Line(d.Reason))
		if d.Offset >= 0 {
			fmt.Fprintf(ew, "first changed byte: %d of the segment\n", d.Offset)
		}
		fmt.Fprintf(ew, "shared: %s tokens; from there on: %s tokens\n", thousands(d.SharedTokens), thousands(d.RestTokens))
	}
	est := ""
	if c.Estimate {
		est = " (estimated)"
	}
	fmt.Fprintf(ew, "under the %s cache, sent right after %s: reads %s tokens, writes %s again%s\n", c.provider, an, thousands(c.Predicted.Read), thousands(c.Predicted.Write), est)
	for _, b := range c.Blame {
		fmt.Fprintf(ew, "  %s: %s\n", b.Kind, textsafe.Line(b.Reason))
	}
	return ew.err
}

// WriteJSON writes the analysis as indented JSON.
func (a *Analysis) WriteJSON(w io.Writer) error { return writeJSON(w, a) }

// WriteText writes the analysis for a terminal (cache --transcript): a
// line a call, predicted beside reported, each blame under its call, and
// the summary. name is the transcript's.
func (a *Analysis) WriteText(w io.Writer, name string) error {
	ew := &errWriter{w: w}
	of := ""
	if len(a.Verdicts) != a.Summary.Calls {
		// The verdicts were chosen (cache --call); the summary is the run's.
		of = fmt.Sprintf(" of %d", a.Summary.Calls)
	}
	fmt.Fprintf(ew, "cache %s: %d%s call(s), predicted by the providers' documented rules (docs/caching.md)\n\n", textsafe.Line(name), len(a.Verdicts), of)
	fmt.Fprintf(ew, "%-20s %6s  %-21s %-21s %-12s %s\n", "call", "line", "predicted read/write", "reported read/write", "cost", "read through")
	for _, v := range a.Verdicts {
		rep := "-"
		if v.Reported != nil {
			rep = thousands(v.Reported.Read) + " / " + thousands(v.Reported.Write)
		}
		pred := thousands(v.Predicted.Read) + " / " + thousands(v.Predicted.Write)
		if v.Estimate {
			pred = "~" + pred
		}
		cost := "-"
		if v.Priced {
			cost = dollars(v.Cost)
			if v.CostBasis == "predicted" {
				cost = "~" + cost
			}
		}
		fmt.Fprintf(ew, "%-20s %6d  %-21s %-21s %-12s %s\n", textsafe.Line(v.Call), v.Line, pred, rep, cost, textsafe.Line(orDash(v.ReadThrough)))
		for _, p := range v.Problems {
			fmt.Fprintf(ew, "  refused: %s\n", textsafe.Line(p.String()))
		}
		for _, b := range v.Blame {
			tokens := ""
			switch {
			case b.Tokens > 0 && v.Priced:
				tokens = fmt.Sprintf(" (%s tokens, %s)", thousands(b.Tokens), dollars(b.Cost))
			case b.Tokens > 0:
				tokens = fmt.Sprintf(" (%s tokens)", thousands(b.Tokens))
			}
			fmt.Fprintf(ew, "  %s: %s%s\n", b.Kind, textsafe.Line(b.Reason), tokens)
		}
		if v.ProviderReason != "" {
			fmt.Fprintf(ew, "  provider: %s\n", textsafe.Line(v.providerLine()))
		}
	}
	s := a.Summary
	over := ""
	if of != "" {
		over = fmt.Sprintf(" over all %d calls", s.Calls)
	}
	fmt.Fprintf(ew, "\nhit rate%s: predicted %.1f%%, reported %.1f%%\n", over, 100*s.PredictedHitRate, 100*s.ReportedHitRate)
	if len(s.Rewritten) > 0 {
		var parts []string
		for _, r := range s.Rewritten {
			parts = append(parts, fmt.Sprintf("%s %s (%s)", textsafe.Line(r.Key), thousands(r.MissTokens), plural(r.Calls, "call")))
		}
		fmt.Fprintf(ew, "tokens written again or not read, by blamed path: %s\n", strings.Join(parts, ", "))
	}
	if s.Agreements > 0 || len(s.Disagreements) > 0 {
		fmt.Fprintf(ew, "the provider's own verdicts beside promptloom's%s: %d agree, %d disagree\n", over, s.Agreements, len(s.Disagreements))
		for _, d := range s.Disagreements {
			fmt.Fprintf(ew, "  disagreement: %s\n", textsafe.Line(d))
		}
	}
	a.writeMoney(ew)
	for _, f := range a.Lint {
		fmt.Fprintf(ew, "\nlint: %s\n", textsafe.Line(f.String()))
		if f.Fix != "" {
			fmt.Fprintf(ew, "  fix: %s\n", textsafe.Line(f.Fix))
		}
		saving := thousands(f.SavingTokens) + " tokens"
		if f.SavingCost != 0 {
			saving += ", " + dollars(f.SavingCost)
		}
		fmt.Fprintf(ew, "  saving over session %s: %s\n", textsafe.Line(orDash(f.Session)), saving)
	}
	return ew.err
}

// writeMoney writes the totals in money: the run's, then by session,
// model and cause, and the models the table does not price.
func (a *Analysis) writeMoney(ew *errWriter) {
	s := a.Summary
	priced := 0
	for _, t := range s.Models {
		priced += t.Calls - t.Unpriced
	}
	if priced == 0 {
		fmt.Fprintf(ew, "cost: no call is priced (list prices taken %s)\n", orDash(s.PricesTaken))
	} else {
		fmt.Fprintf(ew, "cost at list prices taken %s (~ where no usage was recorded): %s, of which misses %s\n", orDash(s.PricesTaken), dollars(s.Cost), dollars(s.MissCost))
	}
	for _, g := range []struct {
		name string
		ts   []Total
	}{{"session", s.Sessions}, {"model", s.Models}, {"cause", s.Causes}} {
		for _, t := range g.ts {
			line := fmt.Sprintf("  %s %s: %s, ", g.name, textsafe.Line(orDash(t.Key)), plural(t.Calls, "call"))
			money := t.Unpriced < t.Calls
			if g.name != "cause" && money {
				line += "cost " + dollars(t.Cost) + ", "
			}
			line += fmt.Sprintf("misses %s tokens", thousands(t.MissTokens))
			if money {
				line += ", " + dollars(t.MissCost)
			}
			if t.Unpriced > 0 {
				line += fmt.Sprintf(" (%d unpriced: tokens only)", t.Unpriced)
			}
			fmt.Fprintln(ew, line)
		}
	}
	if len(s.Unpriced) > 0 {
		var names []string
		for _, m := range s.Unpriced {
			names = append(names, textsafe.Line(orDash(m)))
		}
		fmt.Fprintf(ew, "not in the price table (only tokens are shown for them; give one with --prices): %s\n", strings.Join(names, ", "))
	}
}
