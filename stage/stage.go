// Package stage runs a prompt's contributors as one traced pipeline:
// resolution stages first, each adding a named value to a snapshot, then
// compilation stages, each given the frozen snapshot and the fragments so far
// and returning the successor list. Stages return rather than mutate, and
// every stage leaves a trace, so a contribution that did not land is never
// silent.
//
// A Plan is built from the kernel's stages and the caller's: caller stages
// add to the plan, never replace a stage, and may not take a reserved id.
// A handler that fails, panics or returns the wrong type fails the run with
// an error that names it; a failing resolution stage stops the run before
// any compilation stage, so a later stage is never blamed for an earlier
// one's fault.
package stage

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/promptloom/promptloom"
)

// Kind says which half of the run a stage belongs to.
type Kind string

// The two kinds.
const (
	Resolution  Kind = "resolution"
	Compilation Kind = "compilation"
)

// Status is a stage's outcome.
type Status string

// The statuses.
const (
	Applied  Status = "applied"
	NoChange Status = "no_change"
	Failed   Status = "failed"
)

// Trace records one stage's run.
type Trace struct {
	StageID    string `json:"stage_id"`
	Capability string `json:"capability"`
	Kind       Kind   `json:"kind"`
	Status     Status `json:"status"`
	Reason     string `json:"reason"`
}

// Resolved is what a resolution stage contributes: a named value for the
// snapshot. A stage with nothing to add returns nil.
type Resolved struct {
	Name  string
	Value any
	// Reason says in a few words what was resolved, for the trace.
	Reason string
}

// Input is what a handler is given: the snapshot (frozen for compilation
// stages; the values resolved so far for resolution stages) and, for a
// compilation stage, the fragments its predecessors produced.
type Input struct {
	Snapshot  Snapshot
	Fragments []promptloom.Fragment
}

// Handler runs a stage. A resolution handler returns *Resolved (or nil);
// a compilation handler returns the successor []fragment.Fragment (or nil
// for no change). Any other result is malformed.
type Handler func(ctx context.Context, in Input) (any, error)

// Stage is one contributor.
type Stage struct {
	ID string
	// Capability names what owns the stage ("core", "project", a plugin).
	Capability string
	Kind       Kind
	Handler    Handler
	// ReadOnly promises that a compilation handler does not change
	// Input.Fragments in place (appending is fine). Run then hands it the
	// current list, clipped so an append copies, instead of a copy of its
	// own: at ten thousand fragments that copy is most of a stage's cost.
	// A handler that breaks the promise corrupts the run's trace.
	ReadOnly bool
}

// Snapshot holds resolved values by name. It is a value: handlers cannot
// change what another stage sees.
type Snapshot struct{ values map[string]any }

// Get returns the value resolved under name.
func (s Snapshot) Get(name string) (any, bool) {
	v, ok := s.values[name]
	return v, ok
}

// Names lists the resolved names, sorted.
func (s Snapshot) Names() []string {
	out := make([]string, 0, len(s.values))
	for n := range s.values {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Lookup returns the value under name as a T; false when it is missing or
// of another type.
func Lookup[T any](s Snapshot, name string) (T, bool) {
	v, ok := s.values[name].(T)
	return v, ok
}

// ReservedPrefix starts the ids of the kernel's own stages (kernel.prompt).
const ReservedPrefix = "kernel."

// Errors of plans and runs.
var (
	ErrReservedStage  = errors.New("stage id is reserved for the kernel")
	ErrDuplicateStage = errors.New("stage id already in the plan")
	ErrInvalidStage   = errors.New("invalid stage")
	ErrStageFailed    = errors.New("stage failed")
	ErrMalformed      = errors.New("malformed contribution")
	ErrPanicked       = errors.New("stage panicked")
)

// Error is a failed run, naming the stage at fault.
type Error struct {
	StageID    string
	Capability string
	Kind       Kind
	Err        error
}

func (e *Error) Error() string {
	return fmt.Sprintf("stage %s (%s, %s): %v", e.StageID, e.Kind, e.Capability, e.Err)
}

// Unwrap returns the cause: ErrMalformed, ErrPanicked, or the handler's
// own error wrapped in ErrStageFailed.
func (e *Error) Unwrap() error { return e.Err }

// Plan is an ordered set of stages.
type Plan struct {
	stages []Stage
}

// NewPlan returns a plan of the kernel's stages, which may use reserved ids.
func NewPlan(kernel ...Stage) (*Plan, error) {
	p := &Plan{}
	for _, s := range kernel {
		if err := p.add(s); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Add appends caller stages: a reserved id is ErrReservedStage, an id
// already in the plan ErrDuplicateStage (callers add, never replace). The
// kernel's reserved stages stay last in their half, so kernel.prompt sees
// every caller's fragments.
func (p *Plan) Add(stages ...Stage) error {
	for _, s := range stages {
		if strings.HasPrefix(s.ID, ReservedPrefix) {
			return fmt.Errorf("%w: %q", ErrReservedStage, s.ID)
		}
		if err := p.add(s); err != nil {
			return err
		}
	}
	return nil
}

func (p *Plan) add(s Stage) error {
	switch {
	case s.ID == "":
		return fmt.Errorf("%w: no id", ErrInvalidStage)
	case s.Kind != Resolution && s.Kind != Compilation:
		return fmt.Errorf("%w: %q has kind %q", ErrInvalidStage, s.ID, s.Kind)
	case s.Handler == nil:
		return fmt.Errorf("%w: %q has no handler", ErrInvalidStage, s.ID)
	}
	for _, o := range p.stages {
		if o.ID == s.ID {
			return fmt.Errorf("%w: %q", ErrDuplicateStage, s.ID)
		}
	}
	at := len(p.stages)
	if !strings.HasPrefix(s.ID, ReservedPrefix) {
		for at > 0 && strings.HasPrefix(p.stages[at-1].ID, ReservedPrefix) {
			at--
		}
	}
	p.stages = slices.Insert(p.stages, at, s)
	return nil
}

// Stages returns the plan's stages in declared order.
func (p *Plan) Stages() []Stage { return slices.Clone(p.stages) }

// Result is a run's outcome: the snapshot, the final fragments and a trace
// per stage that ran, in order.
type Result struct {
	Snapshot  Snapshot
	Fragments []promptloom.Fragment
	Traces    []Trace
}

// Run runs every resolution stage in declared order, then every compilation
// stage in declared order. On failure it returns the traces so far with the
// error.
func (p *Plan) Run(ctx context.Context) (*Result, error) {
	res := &Result{Snapshot: Snapshot{values: map[string]any{}}}
	resolvedBy := map[string]string{}
	for _, s := range p.stages {
		if s.Kind != Resolution {
			continue
		}
		out, err := call(ctx, s, Input{Snapshot: res.Snapshot.copy()})
		tr := Trace{StageID: s.ID, Capability: s.Capability, Kind: s.Kind}
		if err == nil {
			err = resolve(s, out, &res.Snapshot, resolvedBy, &tr)
		}
		if err != nil {
			tr.Status, tr.Reason = Failed, err.Error()
			res.Traces = append(res.Traces, tr)
			return res, &Error{StageID: s.ID, Capability: s.Capability, Kind: s.Kind, Err: err}
		}
		res.Traces = append(res.Traces, tr)
	}
	frozen := res.Snapshot.copy()
	for _, s := range p.stages {
		if s.Kind != Compilation {
			continue
		}
		in := slices.Clip(res.Fragments)
		if !s.ReadOnly {
			in = slices.Clone(in)
		}
		out, err := call(ctx, s, Input{Snapshot: frozen, Fragments: in})
		tr := Trace{StageID: s.ID, Capability: s.Capability, Kind: s.Kind}
		if err == nil {
			err = compile(out, res, &tr)
		}
		if err != nil {
			tr.Status, tr.Reason = Failed, err.Error()
			res.Traces = append(res.Traces, tr)
			return res, &Error{StageID: s.ID, Capability: s.Capability, Kind: s.Kind, Err: err}
		}
		res.Traces = append(res.Traces, tr)
	}
	return res, nil
}

func (s Snapshot) copy() Snapshot {
	c := make(map[string]any, len(s.values))
	for k, v := range s.values {
		c[k] = v
	}
	return Snapshot{values: c}
}

// call runs a handler, turning a panic into an error.
func call(ctx context.Context, s Stage, in Input) (out any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrPanicked, r)
		}
	}()
	out, err = s.Handler(ctx, in)
	if err != nil && !errors.Is(err, ErrPanicked) {
		err = fmt.Errorf("%w: %w", ErrStageFailed, err)
	}
	return out, err
}

func resolve(s Stage, out any, snap *Snapshot, resolvedBy map[string]string, tr *Trace) error {
	var r *Resolved
	switch v := out.(type) {
	case nil:
		tr.Status, tr.Reason = NoChange, "nothing to resolve"
		return nil
	case *Resolved:
		r = v
	case Resolved:
		r = &v
	default:
		return fmt.Errorf("%w: a resolution stage returns *stage.Resolved, got %s", ErrMalformed, typeName(out))
	}
	if r == nil {
		tr.Status, tr.Reason = NoChange, "nothing to resolve"
		return nil
	}
	if r.Name == "" {
		return fmt.Errorf("%w: resolved a value with no name", ErrMalformed)
	}
	if by, ok := resolvedBy[r.Name]; ok {
		return fmt.Errorf("%w: %q was already resolved by stage %s", ErrMalformed, r.Name, by)
	}
	resolvedBy[r.Name] = s.ID
	snap.values[r.Name] = r.Value
	tr.Status, tr.Reason = Applied, "resolved "+r.Name
	if r.Reason != "" {
		tr.Reason += ": " + r.Reason
	}
	return nil
}

func compile(out any, res *Result, tr *Trace) error {
	switch v := out.(type) {
	case nil:
		tr.Status, tr.Reason = NoChange, "no fragment changed"
		return nil
	case []promptloom.Fragment:
		before := len(res.Fragments)
		changed := !sameFragments(res.Fragments, v)
		res.Fragments = v
		if !changed {
			tr.Status, tr.Reason = NoChange, "no fragment changed"
			return nil
		}
		tr.Status = Applied
		tr.Reason = fmt.Sprintf("%d fragment(s) in, %d out", before, len(v))
		return nil
	}
	return fmt.Errorf("%w: a compilation stage returns []fragment.Fragment, got %s", ErrMalformed, typeName(out))
}

func sameFragments(a, b []promptloom.Fragment) bool {
	return len(a) == len(b) && reflect.DeepEqual(a, b)
}

func typeName(v any) string {
	if v == nil {
		return "nil"
	}
	return reflect.TypeOf(v).String()
}

// KernelPrompt is the kernel's last compilation stage, kernel.prompt: it
// checks that the fragments are fit for the reducer (fragment.Check: every
// fragment named, a replacement root alone), so a run that would fail
// fails here, naming the stage, with the reducer's own error; it changes
// nothing.
func KernelPrompt() Stage {
	return Stage{ID: ReservedPrefix + "prompt", Capability: "kernel", Kind: Compilation, ReadOnly: true,
		Handler: func(_ context.Context, in Input) (any, error) {
			return nil, promptloom.Check(in.Fragments)
		}}
}
