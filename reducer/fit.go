package reducer

import (
	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/fragment"
)

// fit holds a reduction's included rows to a budget: it counts them,
// sheds in the budget's order until the exact count of the whole prompt is
// within the total.
func fit(r *Reduction, b *budget.Budget) error {
	var rows []int // row index of each piece
	var tally []budget.Piece
	var cands []budget.Candidate
	for i := range r.Rows {
		row := &r.Rows[i]
		if !row.Included {
			continue
		}
		key := row.Digest // the digest of the redacted text is that of the text when nothing was redacted
		if row.redacted {
			key = digest.String(row.Body)
		}
		cands = append(cands, budget.Candidate{Index: len(rows), Register: row.Fragment.Register, Rank: row.Fragment.Rank})
		tally = append(tally, budget.Piece{Text: row.Body, Key: key})
		rows = append(rows, i)
	}
	t := b.NewTally(tally, Separator)
	for k, i := range rows {
		r.Rows[i].Tokens = t.PieceCount(k)
	}
	shed := 0
	seq := b.ShedSequence(cands)
	type regRank struct {
		reg  fragment.Register
		rank int
	}
	reasons := map[regRank]string{} // one string per register and rank shed
	for t.Count() > b.Total && shed < len(seq) {
		c := seq[shed]
		t.Remove(c.Index)
		row := &r.Rows[rows[c.Index]]
		reason, ok := reasons[regRank{c.Register, c.Rank}]
		if !ok {
			reason = budget.ShedReason(c.Register, c.Rank)
			reasons[regRank{c.Register, c.Rank}] = reason
		}
		row.Included, row.Bytes, row.Reason, row.Shed = false, 0, reason, true
		shed++
	}
	r.Fit = &Fit{Encoding: b.Counter.Encoding(), Total: b.Total, Tokens: t.Count(), Shed: shed}
	if t.Count() > b.Total {
		return &budget.ExceededError{Encoding: b.Counter.Encoding(), Total: b.Total, Count: t.Count(), Shed: shed}
	}
	return nil
}
