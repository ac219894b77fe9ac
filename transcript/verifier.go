package transcript

import (
	"bytes"
	"maps"
	"slices"
	"sort"
	"unsafe"

	"github.com/promptloom/promptloom/internal/chain"
)

// Verifier is Verify resumable: it is given a transcript's bytes as they
// are appended (Write) and says, at any point, what Verify would say of
// what it was given so far (Report), without reading any of it again. A
// page over a transcript still being written keeps one and gives it only
// the bytes appended since it last looked; Verify is a Verifier given the
// whole at once, so the two never disagree.
//
// A Verifier is not safe for concurrent use.
type Verifier struct {
	v       *verifier
	n       int    // the whole lines taken
	partial []byte // the bytes of a line with no newline yet
	err     error  // a line past Options.MaxLineBytes: no more is read
}

// NewVerifier returns a Verifier of a transcript not read yet, held to o
// as Verify holds one.
func NewVerifier(o *Options) *Verifier {
	return &Verifier{v: newVerifier(o.verifier()).configure(o)}
}

// Write reads p, the next bytes of the transcript: each line it ends is
// judged as Verify judges it, and a line not ended yet is kept until its
// newline comes. It fails (for good) on a line longer than
// Options.MaxLineBytes, with an error matching promptloom.ErrTooLarge, as
// Verify does.
func (w *Verifier) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	size, limit := len(p), w.v.maxLine
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			// Verify reads a last line of one byte more than the limit
			// (the newline's room), not read as a whole line yet.
			if len(w.partial)+len(p) > limit+1 {
				return size - len(p), w.fail()
			}
			w.partial = append(w.partial, p...)
			break
		}
		if len(w.partial)+i > limit {
			return size - len(p), w.fail()
		}
		var line string
		if len(w.partial) > 0 {
			line = string(append(w.partial, p[:i]...))
			w.partial = w.partial[:0]
			if cap(w.partial) > 64<<10 {
				w.partial = nil // a long line's room is not held
			}
		} else {
			line = string(p[:i]) // its own bytes: what is kept of it shares them
		}
		p = p[i+1:]
		w.n++
		w.v.line(w.n, unsafe.Slice(unsafe.StringData(line), len(line)), line, false)
	}
	return size, nil
}

// fail stops w at its next line, too long.
func (w *Verifier) fail() error {
	w.n++
	w.partial = nil
	w.err = &chain.LineTooLong{Line: w.n, Limit: w.v.maxLine}
	return w.err
}

// Report is Verify's report on what w was given so far, and its error:
// the end-of-transcript checks (sessions open, calls in flight,
// checkpoints and signatures) run on a copy, so w reads on. A promptloom
// line with no newline yet is pending, as Verify says of it; a Harn line
// with none is not read until it has one. The report shares what it
// lists with w: read it, do not change it.
func (w *Verifier) Report() (*Report, error) {
	cp := *w.v
	cp.rep = w.v.rep.clone()
	if len(w.v.early) > 0 {
		cp.early = make(map[int]*CallReport, len(w.v.early))
		for i, c := range w.v.early {
			c := *c
			cp.early[i] = &c
		}
	}
	if w.err == nil && len(w.partial) > 0 && cp.rep.Format == formatPromptloom {
		cp.tornLine(w.n+1, len(w.partial))
	}
	cp.finish(w.err)
	return cp.rep, w.err
}

// clone is r as far as finish changes it, copied: its lists (each call's
// own problem, which finish replaces rather than changes), and the
// problems it marks or words.
func (r *Report) clone() *Report {
	c := *r
	c.Calls = slices.Clone(r.Calls)
	c.Problems = slices.Clone(r.Problems)
	if len(c.Problems) > maxProblems {
		p := *c.Problems[maxProblems]
		c.Problems[maxProblems] = &p
	}
	c.Open = slices.Clip(r.Open)
	c.Refused = slices.Clip(r.Refused)
	c.CosignedBy = slices.Clip(r.CosignedBy)
	c.pending = maps.Clone(r.pending)
	return &c
}

// call is the i-th call read: listed, or waiting for its outcome among
// those let go.
func (v *verifier) call(i int) *CallReport {
	if i >= v.base {
		return &v.rep.Calls[i-v.base]
	}
	return v.early[i]
}

// settled counts the i-th call, answered, once it was let go
// (Options.KeepCalls).
func (v *verifier) settled(i int) {
	if c, ok := v.early[i]; ok {
		v.rep.fold(c.Status)
		delete(v.early, i)
	}
}

// letGo lets the oldest calls go but the last v.keep (Options.KeepCalls):
// an answered call is counted, and one waiting for its outcome is kept
// aside (early) until it comes.
func (v *verifier) letGo() {
	drop := len(v.rep.Calls) - v.keep
	for i := range drop {
		c := &v.rep.Calls[i]
		if p, ok := v.pending[c.Seq]; ok && p.call == v.base+i {
			if v.early == nil {
				v.early = map[int]*CallReport{}
			}
			kept := *c
			v.early[v.base+i] = &kept
			continue
		}
		v.rep.fold(c.Status)
	}
	v.rep.Calls = slices.Clone(v.rep.Calls[drop:]) // the old array goes
	v.base += drop
}

// letGoRefused lets the oldest refusals go but the last v.keep, counted.
func (v *verifier) letGoRefused() {
	drop := len(v.rep.Refused) - v.keep
	v.rep.refusedEarlier += drop
	v.rep.Refused = slices.Clone(v.rep.Refused[drop:])
}

// listEarly lists the calls let go that wait for their outcome, before
// the rest, in the order they were read.
func (v *verifier) listEarly() {
	if len(v.early) == 0 {
		return
	}
	idx := slices.Collect(maps.Keys(v.early))
	sort.Ints(idx)
	calls := make([]CallReport, 0, len(idx)+len(v.rep.Calls))
	for _, i := range idx {
		calls = append(calls, *v.early[i])
	}
	v.rep.Calls = append(calls, v.rep.Calls...)
	v.early = nil
}

// fold counts a call let go (Options.KeepCalls) by its status.
func (r *Report) fold(status string) {
	switch status {
	case verified:
		r.earlier.ok++
	case incomplete:
		r.earlier.incomplete++
	default:
		r.earlier.failed++
	}
}

// Refusals counts the requests refused: those listed (Refused) and those
// let go (Options.KeepCalls).
func (r *Report) Refusals() int {
	if r == nil {
		return 0
	}
	return len(r.Refused) + r.refusedEarlier
}
