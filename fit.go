package promptloom

import (
	"strconv"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/internal/fit"
)

// fitBudget is Reduce's rule 6: it holds a reduction's included rows, settled,
// to a budget, excluding the rows the budget sheds.
func fitBudget(r *Reduction, b *budget.Budget) error {
	rows := make([]int, 0, len(r.Rows)) // row index of each item
	items := make([]fit.Item, 0, len(r.Rows))
	bytes := b.Counter != nil && b.Counter.Encoding() == "bytes"
	for i := range r.Rows {
		row := &r.Rows[i]
		if !row.Included {
			continue
		}
		// The cache key is the digest of the text as it is: the row's own
		// when nothing was redacted. Bytes are counted without the cache.
		key := row.Digest
		if row.redacted && !bytes {
			key = digest.String(row.Body)
		}
		items = append(items, fit.Item{Text: row.Body, Key: key, Register: row.Fragment.Register, Rank: row.Fragment.Rank})
		rows = append(rows, i)
	}
	fitted, err := fit.Fit(b, items, Separator)
	if err != nil {
		return err
	}
	for k, i := range rows {
		r.Rows[i].Tokens = fitted.Counts[k]
	}
	// Items are shed class by class (register, then rank): one reason
	// string per class, built when its first row is shed.
	var reason string
	var last *fit.Item
	for _, k := range fitted.Shed {
		it := &items[k]
		if last == nil || it.Register != last.Register || it.Rank != last.Rank {
			reason, last = fit.ShedPrefix+it.Register.String()+" rank "+strconv.Itoa(it.Rank), it
		}
		row := &r.Rows[rows[k]]
		row.Included, row.Bytes, row.Reason, row.Shed = false, 0, reason, true
	}
	r.Fit = newFit(b, fitted)
	return nil
}

func newFit(b *budget.Budget, f *fit.Fitted) *Fit {
	out := &Fit{Encoding: b.Counter.Encoding(), Tokens: f.Count, Shed: len(f.Shed)}
	if !b.Unlimited {
		total := b.Total
		out.Total = &total
	}
	return out
}
