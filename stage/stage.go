// Package stage runs a prompt's contributors as one traced pipeline:
// resolution stages first, each adding a named value to a snapshot, then
// compilation stages, each given the snapshot and the fragments so far and
// returning the successor list. Stages return rather than mutate, and every
// stage leaves a trace, so a contribution that did not land is never silent.
// A resolution stage declares the name it resolves, so two stages that
// would resolve one name are refused before anything runs.
//
// Run takes the kernel's stages and the caller's: caller stages add to the
// run, never replace a stage, and may not take a kernel.* id. The kernel's
// last stage, kernel.prompt, is always added: it checks that the fragments
// are fit for the reducer, so a run that would fail there fails naming a
// stage. A handler that fails or panics fails the run with an *Error that
// names it; a failing resolution stage stops the run before any
// compilation stage, so a later stage is never blamed for an earlier one's
// fault.
package stage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/promptloom/promptloom"
)

// Stage is one contributor: a resolution stage when Resolve is set, a
// compilation stage when Compile is set (exactly one of them).
type Stage struct {
	ID string
	// Capability names what owns the stage ("core", "project", a plugin).
	Capability string
	// Resolves is the name a resolution stage's value goes under in the
	// snapshot; no other stage may resolve it. Declared here rather than
	// returned, it is checked before anything runs.
	Resolves string
	// Resolve returns the value for the snapshot, or nil for nothing, and
	// in a few words what it resolved, for the trace. It sees the values
	// resolved before it, by name, in a copy of its own, so no handler can
	// change what another stage sees.
	Resolve func(ctx context.Context, snap map[string]any) (value any, reason string, err error)
	// Compile returns the successor of frags, the fragments of the
	// compilation stages before it, or nil for no change. It sees every
	// resolved value, in a copy of its own.
	Compile func(ctx context.Context, snap map[string]any, frags []promptloom.Fragment) ([]promptloom.Fragment, error)
	// ReadOnly promises that Compile does not change frags in place
	// (appending is fine). Run then hands it the current list, clipped so
	// an append copies, instead of a copy of its own: at ten thousand
	// fragments that copy is most of a stage's cost. A handler that breaks
	// the promise corrupts the run's trace.
	ReadOnly bool
}

// Trace records one stage's run. Kind is "resolution" or "compilation";
// Status is "applied", "no_change" or "failed".
type Trace struct {
	StageID    string `json:"stage_id"`
	Capability string `json:"capability"`
	Kind       string `json:"kind"`
	Status     string `json:"status"`
	Reason     string `json:"reason"`
}

const (
	resolution  = "resolution"
	compilation = "compilation"

	applied  = "applied"
	noChange = "no_change"
	failed   = "failed"

	// reserved starts the ids of the kernel's own stages.
	reserved = "kernel."
)

// Errors of runs. A handler's own error is not wrapped in a sentinel: it
// is matched as itself, through the *Error that names the stage.
var (
	// ErrInvalidStage is a stage Run refuses before anything runs: one
	// without an id, without a handler or with two, a caller's stage
	// with a kernel.* id or with an id already in the run, a resolution
	// stage without Resolves or with a name another stage resolves, a
	// compilation stage with Resolves.
	ErrInvalidStage = errors.New("invalid stage")
	// ErrPanicked is a handler that panicked; the panic is caught and
	// blamed on the stage.
	ErrPanicked = errors.New("stage panicked")
)

// errFailed marks a handler's own error in the message.
var errFailed = errors.New("stage failed")

// Error is a failed run: the trace of the stage at fault (its id,
// capability and kind; Status "failed", Reason the cause's text) and the
// cause.
type Error struct {
	Trace
	Err error
}

// Error names the stage and says what went wrong with it.
func (e *Error) Error() string {
	return fmt.Sprintf("stage %s (%s, %s): %v", e.StageID, e.Kind, e.Capability, e.Err)
}

// Unwrap returns the cause: ErrPanicked, or the handler's own error.
func (e *Error) Unwrap() error { return e.Err }

// Result is a run's outcome: the snapshot, the final fragments and a trace
// per stage that ran, in order.
type Result struct {
	Snapshot  map[string]any
	Fragments []promptloom.Fragment
	Traces    []Trace
}

// Run runs the kernel's stages with the caller's added among them, then
// kernel.prompt: every resolution stage in order, then every compilation
// stage in order. The kernel's stages may take any id; a caller's stage may
// not take a kernel.* id or one already in the run (callers add, never
// replace), and runs after the kernel's stages of its kind but before any
// kernel.* stage, so kernel.prompt sees every caller's fragments. On
// failure Run returns the traces so far with the error.
func Run(ctx context.Context, kernel, caller []Stage) (*Result, error) {
	plan, err := build(kernel, caller)
	if err != nil {
		return nil, err
	}
	res := &Result{Snapshot: map[string]any{}}
	for _, s := range plan {
		if s.Resolve == nil {
			continue
		}
		tr := Trace{StageID: s.ID, Capability: s.Capability, Kind: resolution}
		var reason string
		v, err := call(func() (v any, err error) {
			v, reason, err = s.Resolve(ctx, maps.Clone(res.Snapshot))
			return v, err
		})
		if err != nil {
			return res, fail(res, tr, err)
		}
		resolve(s.Resolves, v, reason, res.Snapshot, &tr)
		res.Traces = append(res.Traces, tr)
	}
	for _, s := range plan {
		if s.Compile == nil {
			continue
		}
		tr := Trace{StageID: s.ID, Capability: s.Capability, Kind: compilation}
		in := slices.Clip(res.Fragments)
		if !s.ReadOnly {
			in = slices.Clone(in)
		}
		out, err := call(func() ([]promptloom.Fragment, error) { return s.Compile(ctx, maps.Clone(res.Snapshot), in) })
		if err != nil {
			return res, fail(res, tr, err)
		}
		compile(out, res, &tr)
		res.Traces = append(res.Traces, tr)
	}
	return res, nil
}

// fail records tr as failed with err and returns the run's error.
func fail(res *Result, tr Trace, err error) error {
	tr.Status, tr.Reason = failed, err.Error()
	res.Traces = append(res.Traces, tr)
	return &Error{Trace: tr, Err: err}
}

// build checks the stages and orders them: the kernel's, the caller's
// before any kernel.* stage, then kernel.prompt.
func build(kernel, caller []Stage) ([]Stage, error) {
	var plan []Stage
	resolvedBy := map[string]string{}
	add := func(s Stage) error {
		switch {
		case s.ID == "":
			return fmt.Errorf("%w: no id", ErrInvalidStage)
		case s.Resolve == nil && s.Compile == nil:
			return fmt.Errorf("%w: %q has no handler", ErrInvalidStage, s.ID)
		case s.Resolve != nil && s.Compile != nil:
			return fmt.Errorf("%w: %q has both Resolve and Compile", ErrInvalidStage, s.ID)
		case slices.ContainsFunc(plan, func(o Stage) bool { return o.ID == s.ID }):
			return fmt.Errorf("%w: %q is already in the run", ErrInvalidStage, s.ID)
		case s.Resolve != nil && s.Resolves == "":
			return fmt.Errorf("%w: %q resolves no name (Resolves)", ErrInvalidStage, s.ID)
		case s.Compile != nil && s.Resolves != "":
			return fmt.Errorf("%w: %q compiles but names Resolves %q", ErrInvalidStage, s.ID, s.Resolves)
		}
		if s.Resolves != "" {
			if by, ok := resolvedBy[s.Resolves]; ok {
				return fmt.Errorf("%w: %q resolves %q, which stage %s resolves", ErrInvalidStage, s.ID, s.Resolves, by)
			}
			resolvedBy[s.Resolves] = s.ID
		}
		at := len(plan)
		if !strings.HasPrefix(s.ID, reserved) {
			for at > 0 && strings.HasPrefix(plan[at-1].ID, reserved) {
				at--
			}
		}
		plan = slices.Insert(plan, at, s)
		return nil
	}
	for _, s := range append(slices.Clip(kernel), kernelPrompt) {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	for _, s := range caller {
		if strings.HasPrefix(s.ID, reserved) {
			return nil, fmt.Errorf("%w: %q is reserved for the kernel", ErrInvalidStage, s.ID)
		}
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return plan, nil
}

// call runs a handler, turning a panic into an error and marking the
// handler's own error.
func call[T any](handler func() (T, error)) (out T, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrPanicked, r)
		}
	}()
	out, err = handler()
	if err != nil && !errors.Is(err, ErrPanicked) {
		err = fmt.Errorf("%w: %w", errFailed, err)
	}
	return out, err
}

// resolve puts a resolution stage's value v under name, and says so in
// its trace; a nil value resolves nothing.
func resolve(name string, v any, reason string, snap map[string]any, tr *Trace) {
	if v == nil {
		tr.Status, tr.Reason = noChange, "nothing to resolve"
		return
	}
	snap[name] = v
	tr.Status, tr.Reason = applied, "resolved "+name
	if reason != "" {
		tr.Reason += ": " + reason
	}
}

func compile(out []promptloom.Fragment, res *Result, tr *Trace) {
	if out == nil {
		tr.Status, tr.Reason = noChange, "no fragment changed"
		return
	}
	before := len(res.Fragments)
	changed := !sameFragments(res.Fragments, out)
	res.Fragments = out
	if !changed {
		tr.Status, tr.Reason = noChange, "no fragment changed"
		return
	}
	tr.Status = applied
	tr.Reason = fmt.Sprintf("%d fragment(s) in, %d out", before, len(out))
}

func sameFragments(a, b []promptloom.Fragment) bool {
	return len(a) == len(b) && reflect.DeepEqual(a, b)
}

// kernelPrompt is the kernel's last compilation stage: it checks that the
// fragments are fit for the reducer (promptloom.Check: every fragment
// named, a replacement root alone), so a run that would fail fails here,
// naming the stage, with the reducer's own error; it changes nothing.
var kernelPrompt = Stage{ID: reserved + "prompt", Capability: "kernel", ReadOnly: true,
	Compile: func(_ context.Context, _ map[string]any, frags []promptloom.Fragment) ([]promptloom.Fragment, error) {
		return nil, promptloom.Check(frags)
	}}
