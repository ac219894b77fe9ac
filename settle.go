package promptloom

import (
	"runtime"
	"strings"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/internal/redact"
)

// This file is the machinery behind Reduce's rules 1 and 5 that the
// benchmarks hold to its cost: settling a row (trim, scan for secrets,
// hash) while its body is in cache, on two cores for a large prompt, and
// remembering gate decisions within one reduction.

// parallelBytes is the prompt size from which rows are settled on two
// cores: below it a goroutine costs more than it saves.
var parallelBytes = 256 << 10

// splitPoint returns the row from which a second goroutine should settle
// rows, so that each half holds about half of capacity's bytes, or
// len(rows) when the prompt is too small to be worth it or there is one
// core.
func splitPoint(rows []Row, capacity int) int {
	if capacity < parallelBytes || runtime.GOMAXPROCS(0) < 2 {
		return len(rows)
	}
	half := 0
	for i := range rows {
		if rows[i].Included {
			if half += len(rows[i].Fragment.Body); half >= capacity/2 {
				return i + 1
			}
		}
	}
	return len(rows)
}

// settleAll settles every row, the halves on two cores when the prompt is
// large, and returns how many are still included. The rows are the same
// either way: each row's settling reads and writes that row alone.
func settleAll(rows []Row, capacity int) int {
	mid := splitPoint(rows, capacity)
	var done chan struct{}
	if mid < len(rows) {
		done = make(chan struct{})
		go func() { settleRange(rows[mid:]); close(done) }()
	}
	settleRange(rows[:mid])
	if done != nil {
		<-done
	}
	n := 0
	for i := range rows {
		if rows[i].Included {
			n++
		}
	}
	return n
}

func settleRange(rows []Row) {
	for i := range rows {
		settle(&rows[i])
	}
}

// settle trims a gated row's body (rule 1), excludes the row if that
// leaves nothing, and sets its digest (rule 5): BLAKE3 of the body after
// redaction. It reports whether the row is still included.
func settle(row *Row) bool {
	row.Body = strings.TrimSpace(row.Fragment.Body)
	if row.Body == "" {
		row.Included, row.Reason = false, reasonEmptyBody
	}
	p := redact.Piece(row.Body)
	row.redacted, row.edge = p.Redacted != p.Raw, p.Edge()
	row.Digest = digest.String(p.Redacted)
	if row.Included {
		row.Bytes = len(row.Body)
	}
	return row.Included
}

// joiner settles rows just before Reduce joins them, so each body is read
// while it is in cache; on a large prompt the second half is settled
// meanwhile on another core. With settle false (a budget settled them
// already) it does nothing.
type joiner struct {
	rows   []Row
	settle bool
	fresh  int           // rows from here on are settled by the goroutine
	done   chan struct{} // closed when the goroutine is done
}

func newJoiner(rows []Row, capacity int, settle bool) joiner {
	j := joiner{rows: rows, settle: settle, fresh: len(rows)}
	if settle {
		if mid := splitPoint(rows, capacity); mid < len(rows) {
			done := make(chan struct{})
			j.fresh, j.done = mid, done
			go func() { settleRange(rows[mid:]); close(done) }()
		}
	}
	return j
}

// ready makes row i settled.
func (j *joiner) ready(i int) {
	if i == j.fresh && j.done != nil {
		<-j.done
	}
	if j.settle && i < j.fresh {
		settle(&j.rows[i])
	}
}

// reasonCache remembers the decision for fragments gated on a single tool or
// capability: within one reduction it is the same for every fragment so
// gated, and building its reason string once saves an allocation each.
type reasonCache struct{ tools, caps map[string]decision }

type decision struct {
	included bool
	reason   string
}

func (c *reasonCache) decide(f *Fragment, a *active) (bool, string) {
	var m *map[string]decision
	var name string
	switch {
	case len(f.RequiresTools) == 1 && len(f.RequiresCaps) == 0:
		m, name = &c.tools, f.RequiresTools[0]
	case len(f.RequiresCaps) == 1 && len(f.RequiresTools) == 0:
		m, name = &c.caps, f.RequiresCaps[0]
	default:
		return f.gate(a)
	}
	d, ok := (*m)[name]
	if !ok {
		d.included, d.reason = f.gate(a)
		if *m == nil {
			*m = map[string]decision{}
		}
		(*m)[name] = d
	}
	return d.included, d.reason
}
