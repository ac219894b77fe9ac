package promptloom

import (
	"errors"
	"fmt"
	"strings"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/internal/fit"
	"github.com/promptloom/promptloom/internal/redact"
)

// Options says what a reduction may use. The zero value (or a nil
// *Options) has no active tool or capability and no budget.
type Options struct {
	// Tools and Capabilities are the call's active tools and
	// capabilities: a fragment gated on one not listed is excluded.
	Tools        []string
	Capabilities []string
	// Budget, when set, holds the whole prompt to a count and sheds
	// fragments by register and rank to meet it (rule 6).
	Budget *budget.Budget
}

// Separator joins included fragments.
const Separator = "\n\n"

// The reasons Reduce gives itself; gate gives the others, and a budget's
// shed rows say "shed by budget: REGISTER rank N".
const (
	reasonUnconditional = "unconditional"
	reasonEmptyBody     = "empty body"
	reasonReplacement   = "exclusive replacement root"
)

// Row is what became of one fragment. It is the reducer's working row, not
// a second copy of the manifest's segment: it points at the fragment and
// holds its trimmed body, its offset and its digest as a value, from which
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

// Fit is what a budget did to a reduction.
type Fit struct {
	Encoding string `json:"encoding"`
	// Total is the budget's total; nil for an unlimited budget, which
	// counts without holding the prompt to anything.
	Total *int `json:"total,omitempty"`
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
	// Rows holds one row per fragment, in wire order. A replacement root
	// (a Verbatim fragment) is the one row of its reduction.
	Rows []Row
	// WholeDigest is the digest of the redacted System (of "" when absent).
	WholeDigest digest.Digest
	// Fit is set when a budget was applied.
	Fit *Fit
}

// The two ways a list of fragments is unfit to become a prompt. The error
// names the fragment by its place in the list and its source.
var (
	// ErrEmptyID: every row of a prompt names its fragment. Only an empty
	// id is refused: two fragments with one id are accepted, even with
	// different bodies, because Harn builds them (a tool declared twice
	// gives two tool:NAME.guidance fragments, each with its copy's
	// guidance; _system_fragments items may repeat an id) and its
	// manifests record them. What Harn refuses, two included rows with one
	// id and one digest, is manifest validation's rule.
	ErrEmptyID = errors.New("fragment id is empty")
	// ErrReplacementNotAlone: a replacement root (a Verbatim fragment) is
	// the whole prompt, so it stands alone.
	ErrReplacementNotAlone = errors.New("replacement root must be the only fragment")
)

// Check reports whether frags can become one prompt: each fragment named
// (an error matching ErrEmptyID), and a replacement root alone (an error
// matching ErrReplacementNotAlone). Reduce checks this before it reads
// anything; a pipeline can check it earlier, to name the stage at fault.
func Check(frags []Fragment) error {
	for i := range frags {
		if frags[i].ID == "" {
			return fmt.Errorf("fragment %d (source %q): %w", i, frags[i].Source, ErrEmptyID)
		}
		if frags[i].Verbatim && len(frags) != 1 {
			return fmt.Errorf("%w: %q stands beside %d other fragment(s)",
				ErrReplacementNotAlone, frags[i].ID, len(frags)-1)
		}
	}
	return nil
}

// Reduce builds the system prompt from frags under o. These are its rules,
// in the order docs/rules.md states them ("The reducer"):
//
//  0. Every fragment has an id, and a replacement root stands alone
//     (Check). A replacement root is the prompt, byte for byte and
//     untrimmed: one row, reason "exclusive replacement root".
//  1. Trim: each body loses its leading and trailing Unicode white space;
//     one left empty is excluded, reason "empty body".
//  2. Gate: the first tool of RequiresTools that is not active excludes
//     the fragment, then the first capability of RequiresCaps that is not
//     set; an included fragment's reason names what it required, or is
//     "unconditional".
//  3. Order: the included before fragments in the order given, then the
//     included after fragments in the order given.
//  4. Join them with exactly "\n\n".
//  5. Account: one row per fragment in that order, excluded rows at their
//     place in their bucket; bytes is the trimmed body's length when
//     included, 0 when not; the offset is where it starts in the prompt;
//     the digest is BLAKE3 of the redacted trimmed body, excluded rows too;
//     the whole-prompt digest is BLAKE3 of the prompt redacted as one
//     string. With nothing included the prompt is absent.
//  6. Budget (promptloom's): with o.Budget, while the whole prompt counts
//     more than the total, fragments are shed in the budget's order (never
//     a binding one); a shed row stays, excluded, with the reason "shed by
//     budget: REGISTER rank N". A prompt that cannot fit is an error
//     matching budget.ErrExceeded.
//
// The same fragments and options always give the same bytes and rows, and
// Reduce is safe to call from many goroutines. Each included body is read
// once: trimmed, scanned for secrets, hashed and copied while it is in
// cache (settle.go).
func Reduce(frags []Fragment, o *Options) (*Reduction, error) {
	if o == nil {
		o = &Options{}
	}
	// Rule 0.
	if err := Check(frags); err != nil {
		return nil, err
	}
	if len(frags) == 1 && frags[0].Verbatim {
		return replace(&frags[0], o.Budget)
	}

	// Rules 2 and 3: gate, and order by bucket. Gating reads no body, so
	// this pass touches none.
	r := &Reduction{Rows: make([]Row, 0, len(frags))}
	capacity := 0
	a := newActive(o)
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
			row.Included, row.Reason = reasons.decide(f, &a)
			if row.Included {
				capacity += len(Separator) + len(f.Body)
			}
		}
	}

	// Rules 1 and 6: with a budget every row is trimmed and hashed first,
	// since the budget decides which rows stay from the trimmed bodies.
	if o.Budget != nil {
		if settleAll(r.Rows, capacity) > 0 {
			if err := fitBudget(r, o.Budget); err != nil {
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

	// Rules 1, 4 and 5: trim and hash each row (unless the budget did),
	// join the included ones and note where each starts.
	var b strings.Builder
	b.Grow(capacity)
	plain := true // no included body was redacted or could reach across a join
	j := newJoiner(r.Rows, capacity, o.Budget == nil)
	for i := range r.Rows {
		row := &r.Rows[i]
		j.ready(i)
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
		r.WholeDigest = digest.String("") // nothing included: the prompt is absent
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

// replace is the reduction of a lone replacement root (rule 0). Under a
// budget it is counted as a binding fragment: it is the whole prompt, or
// there is none.
func replace(f *Fragment, b *budget.Budget) (*Reduction, error) {
	d := digest.Of(f.Body)
	r := &Reduction{
		System:  f.Body,
		Present: true,
		Rows: []Row{{
			Fragment: f, Included: true, Reason: reasonReplacement,
			Body: f.Body, Bytes: len(f.Body), Offset: 0, Digest: d,
		}},
		WholeDigest: d,
	}
	if b != nil {
		fitted, err := fit.Fit(b, []fit.Item{{Text: f.Body, Key: digest.String(f.Body)}}, Separator)
		if err != nil {
			return nil, err
		}
		r.Rows[0].Tokens = fitted.Counts[0]
		r.Fit = newFit(b, fitted)
	}
	return r, nil
}
