package promptloom

import (
	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/digest"
)

// fit holds a reduction's included rows to a budget: it counts them,
// sheds in the budget's order until the exact count of the whole prompt is
// within the total.
func fit(r *Reduction, b *budget.Budget) error {
	rows := make([]int, 0, len(r.Rows)) // row index of each piece
	tally := make([]budget.Piece, 0, len(r.Rows))
	cands := make([]budget.Candidate, 0, len(r.Rows))
	for i := range r.Rows {
		row := &r.Rows[i]
		if !row.Included {
			continue
		}
		// The cache key is the digest of the text as it is: the row's own
		// when nothing was redacted. Bytes are counted without the cache.
		key := row.Digest
		if row.redacted && b.Counter.Encoding() != budget.EncodingBytes {
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
	// The sequence runs class by class (register, then rank): one reason
	// string per class, built when its first row is shed.
	var reason string
	var last budget.Candidate
	for t.Count() > b.Total && shed < len(seq) {
		c := seq[shed]
		t.Remove(c.Index)
		row := &r.Rows[rows[c.Index]]
		if shed == 0 || c.Register != last.Register || c.Rank != last.Rank {
			reason, last = budget.ShedReason(c.Register, c.Rank), c
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
