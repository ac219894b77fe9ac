// Package reducer turns an ordered list of fragments into the system prompt
// and one row per fragment that says what became of it.
//
// Reduce is the only way a system string is built. It is deterministic and
// pure: the same fragments and active set always give the same bytes and the
// same rows, and it is safe to call from many goroutines. Included "before"
// fragments come first in declaration order, then included "after" ones,
// joined by exactly "\n\n"; rows come in that wire order, excluded rows at
// their declaration place within their bucket.
//
// Reduce copies each included body into the prompt once and hashes each body
// once. The whole-prompt digest is Harn's: BLAKE3 of the whole prompt
// redacted as one string (redact.String). When no body was redacted and none
// can start a match across a join, that redaction is the prompt itself;
// otherwise redact.Joined derives it from the bodies' redaction where that is
// provably the same and redacts the whole where not (see its comment). So on
// text with no secret the work is one scan and one hash per byte, plus one
// hash of the whole.
//
// Vocabulary: a Row is what became of one fragment (included or not, the
// Reason, the Offset and Bytes of its body in the prompt, its Digest); the
// Root is what produced the prompt (Composed from fragments, or the
// caller's Replacement); a prompt with no included fragment is absent
// (Present false), not empty. WithBudget holds the whole prompt to a count
// and sheds by register and rank. A fragment with an empty id is refused
// (*IDError); a repeated id is not, since Harn builds such prompts. The rules
// are stated in full in docs/rules.md.
package promptloom

import (
	"runtime"
	"strings"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/harn/redact"
)

// Separator joins included fragments.
const Separator = "\n\n"

// Root names what produced the prompt.
type Root string

// The roots. Transformed is set by a manifest's egress projection, never by
// Reduce.
const (
	RootComposed    Root = "composed"
	RootReplacement Root = "replacement"
	RootTransformed Root = "transformed"
)

// Reasons the reducer gives itself (gating gives the others).
const (
	ReasonEmptyBody   = "empty body"
	ReasonReplacement = "exclusive replacement root"
)

// Row is what became of one fragment. It is the reducer's working row, not
// a second copy of the manifest's (manifest.Segment, which explain.Row and
// provenance.DescribedPart embed): it points at the fragment and holds its
// trimmed body, its offset and its digest as a value, from which
// manifest.New writes the segment, redacted. It has no JSON form.
type Row struct {
	// Fragment is the fragment the row is about (it points into the slice
	// given to Reduce).
	Fragment *Fragment
	Included bool
	Reason   string
	// Body is the trimmed body (the verbatim one for a replacement root),
	// a substring of the fragment's body: nothing is copied.
	Body string
	// Bytes is len(Body) when included, 0 when not.
	Bytes int
	// Offset is where Body starts in the system prompt; -1 when excluded.
	Offset int
	// Digest is the BLAKE3 digest of the redacted Body, excluded rows too.
	Digest digest.Digest
	// Tokens is the count of Body on its own, under a budget, for rows that
	// were counted (included and shed ones); 0 otherwise.
	Tokens int
	// Shed is true when a budget excluded the fragment (its Reason then
	// says the register and rank): test this, not the reason's wording.
	Shed bool

	// redacted: redaction changed Body (so Digest is not the digest of Body
	// as it is); edge: a secret could reach across Body's ends once joined.
	redacted, edge bool
}

// ID returns the id of the row's fragment.
func (r *Row) ID() string { return r.Fragment.ID }

// Fit is what a budget did to a reduction.
type Fit struct {
	Encoding string `json:"encoding"`
	Total    int    `json:"total"`
	// Tokens is the exact count of the whole prompt (tokens merge across
	// joins, so it is not the sum of the rows' counts).
	Tokens int `json:"tokens"`
	// Shed counts the fragments shed.
	Shed int `json:"shed"`
}

// Reduction is the system prompt and the account of every fragment.
type Reduction struct {
	// System is the prompt. Present is false when no fragment was included:
	// the prompt is then absent (JSON null), not empty.
	System  string
	Present bool
	Root    Root
	Rows    []Row
	// WholeDigest is the digest of the redacted System ("" when absent).
	WholeDigest digest.Digest
	// Fit is set when a budget was applied.
	Fit *Fit
}

// Option configures Reduce.
type Option func(*config)

type config struct{ budget *budget.Budget }

// WithBudget holds the prompt to a budget: included fragments are counted,
// and while the whole prompt is over the total, fragments are shed in the
// budget's order (never a binding one). Shed rows stay, excluded, with the
// reason "shed by budget: REGISTER rank N". A prompt that does not fit with
// everything sheddable shed is an error wrapping budget.ErrBudgetExceeded.
func WithBudget(b *budget.Budget) Option { return func(c *config) { c.budget = b } }

// Included counts the included rows.
func (r *Reduction) Included() int {
	n := 0
	for i := range r.Rows {
		if r.Rows[i].Included {
			n++
		}
	}
	return n
}

// Reduce builds the system prompt from frags, gated by active.
func Reduce(frags []Fragment, active Active, opts ...Option) (*Reduction, error) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.budget != nil {
		if err := cfg.budget.Check(); err != nil {
			return nil, err
		}
	}
	if err := Check(frags); err != nil {
		return nil, err
	}
	if len(frags) == 1 && frags[0].Verbatim {
		return replace(&frags[0], cfg.budget)
	}

	// First pass: order and gate. Gating does not read bodies, so this
	// pass touches none: each body is read once, below, while it is
	// trimmed, scanned, hashed and copied.
	r := &Reduction{Root: RootComposed, Rows: make([]Row, 0, len(frags))}
	capacity := 0
	var reasons reasonCache
	for _, bucket := range [...]Bucket{Before, After} {
		for i := range frags {
			f := &frags[i]
			if f.Bucket != bucket {
				continue
			}
			r.Rows = r.Rows[:len(r.Rows)+1] // built in place: a row is a hundred bytes
			row := &r.Rows[len(r.Rows)-1]
			*row = Row{Fragment: f, Offset: -1}
			row.Included, row.Reason = reasons.decide(f, active)
			if row.Included {
				capacity += len(Separator) + len(f.Body)
			}
		}
	}
	if cfg.budget != nil {
		// The budget needs every row settled before it decides which rows
		// stay, so digests come first and the prompt after.
		if settleAll(r.Rows, capacity) > 0 {
			if err := fit(r, cfg.budget); err != nil {
				return nil, err
			}
			capacity = 0 // the prompt holds what the budget kept
			for i := range r.Rows {
				if r.Rows[i].Included {
					capacity += len(Separator) + len(r.Rows[i].Body)
				}
			}
		}
	}

	var b strings.Builder
	b.Grow(capacity)
	plain := true // no included body was redacted or could reach across a join
	// Without a budget each row is settled as it is copied, while its body
	// is in cache; on a large prompt the second half is settled meanwhile
	// on another core.
	fresh := len(r.Rows)
	var done chan struct{}
	if cfg.budget == nil {
		if mid := splitPoint(r.Rows, capacity); mid < len(r.Rows) {
			fresh, done = mid, make(chan struct{})
			go func() { settleRange(r.Rows[mid:]); close(done) }()
		}
	}
	for i := range r.Rows {
		row := &r.Rows[i]
		if i == fresh {
			<-done
		}
		if cfg.budget == nil && i < fresh {
			settle(row)
		}
		if !row.Included {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(Separator)
		}
		row.Offset = b.Len()
		b.WriteString(row.Body)
		plain = plain && !row.redacted && !row.edge
	}
	if b.Len() == 0 {
		r.WholeDigest = digest.Empty // nothing included: the prompt is absent
		return r, nil
	}
	r.System, r.Present = b.String(), true
	if plain {
		// Nothing to redact in any body and nothing across a join: the
		// redacted prompt is the prompt.
		r.WholeDigest = digest.String(r.System)
		return r, nil
	}
	var pieces []redact.Text
	for i := range r.Rows {
		if r.Rows[i].Included {
			pieces = append(pieces, redact.Piece(r.Rows[i].Body))
		}
	}
	r.WholeDigest = digest.String(redact.Joined(pieces, Separator, r.System))
	return r, nil
}

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

// settle trims a gated row's body, excludes the row if that leaves nothing,
// and sets its digest: BLAKE3 of the body after redaction. It reports
// whether the row is still included.
func settle(row *Row) bool {
	row.Body = strings.TrimSpace(row.Fragment.Body)
	if row.Body == "" {
		row.Included, row.Reason = false, ReasonEmptyBody
	}
	p := redact.Piece(row.Body)
	row.redacted, row.edge = p.Changed(), p.Edge()
	row.Digest = digest.String(p.Redacted)
	if row.Included {
		row.Bytes = len(row.Body)
	}
	return row.Included
}

// reasonCache remembers the decision for fragments gated on a single tool or
// capability: within one reduction it is the same for every fragment so
// gated, and building its reason string once saves an allocation each.
type reasonCache struct{ tools, caps map[string]Decision }

func (c *reasonCache) decide(f *Fragment, active Active) (bool, string) {
	var m *map[string]Decision
	var name string
	switch {
	case len(f.RequiresTools) == 1 && len(f.RequiresCaps) == 0:
		m, name = &c.tools, f.RequiresTools[0]
	case len(f.RequiresCaps) == 1 && len(f.RequiresTools) == 0:
		m, name = &c.caps, f.RequiresCaps[0]
	default:
		d := Decide(f, active)
		return d.Included, d.Reason
	}
	d, ok := (*m)[name]
	if !ok {
		d = Decide(f, active)
		if *m == nil {
			*m = map[string]Decision{}
		}
		(*m)[name] = d
	}
	return d.Included, d.Reason
}

func replace(f *Fragment, b *budget.Budget) (*Reduction, error) {
	d := digest.Of(f.Body)
	r := &Reduction{
		System:  f.Body,
		Present: true,
		Root:    RootReplacement,
		Rows: []Row{{
			Fragment: f, Included: true, Reason: ReasonReplacement,
			Body: f.Body, Bytes: len(f.Body), Offset: 0, Digest: d,
		}},
		WholeDigest: d,
	}
	if b != nil {
		// A replacement root is binding by construction: it is the whole
		// prompt, or there is none.
		n := b.Counter.Count(f.Body)
		r.Rows[0].Tokens = n
		r.Fit = &Fit{Encoding: b.Counter.Encoding(), Total: b.Total, Tokens: n}
		if n > b.Total {
			return nil, &budget.ExceededError{Encoding: b.Counter.Encoding(), Total: b.Total, Count: n}
		}
	}
	return r, nil
}
