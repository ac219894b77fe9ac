package provenance

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/stage"
)

// Part is one piece of a role's context, as an assembler writes it: text in
// a register, with a rank for shedding and the sources it was built from.
type Part struct {
	// Slot names the part; it becomes the fragment id.
	Slot     string
	Register budget.Register
	Rank     int
	Text     string
	Cites    []Source
}

// Assembler builds a role's parts, reading only through the grant it is
// given.
type Assembler[G any] func(ctx context.Context, grant G) ([]Part, error)

// The misuses Assemble refuses.
var (
	ErrNotASlice       = errors.New("grant field is not a slice")
	ErrMixedPositions  = errors.New("grant slices are at different positions")
	ErrGrantReused     = errors.New("grant has already handed something out")
	ErrUncitedSource   = errors.New("part cites a source no slice handed out")
	ErrMislabelledPart = errors.New("mislabelled part")
	ErrDuplicateSlot   = errors.New("two parts share a slot")
)

// Context is one role's context for one call: the parts, what the grant
// handed out, and the prompt they reduce to with its manifest.
type Context struct {
	Role      string
	Upto      int64
	Parts     []Part
	Read      []Source
	Fragments []promptloom.Fragment
	Reduction *promptloom.Reduction
	Manifest  *manifest.Manifest
	// Traces records the stages of the assembly.
	Traces []stage.Trace
}

// Assemble builds role's context from grant, a struct whose every field is a
// Slice: nothing else can be read. Before the assembler runs it refuses a
// field that is not a slice, a slice with a nil predicate (ErrNilPredicate),
// slices at different positions, a grant that was used before, and a fold
// that is not at the grant's position; while it runs, a BeliefSlice refuses
// every read once its fold has moved past the grant's position by a belief
// event (ErrStaleRead); after it ran, Assemble refuses a part that cites what
// no slice handed out, chronicle prose in a part not labelled generated, and
// chronicle prose read but cited by no generated part. The parts are then
// rendered to fragments (id = slot, producer = role) and reduced; the
// manifest's segments carry each part's register, rank and sources. The
// assembly runs as stages (provenance.grant, provenance.render,
// kernel.prompt), so the context carries their traces; a refusal is a
// *stage.Error naming provenance.grant, matchable with errors.Is.
//
// A budget b (nil: none) holds the context's prompt to a count, shedding
// parts by register and rank, never a binding one.
func Assemble[G any](ctx context.Context, role string, asm Assembler[G], grant G, b *budget.Budget) (*Context, error) {
	run, err := stage.Run(ctx, []stage.Stage{
		{ID: "provenance.grant", Capability: "provenance",
			Resolve: func(ctx context.Context, _ stage.Snapshot) (*stage.Resolved, error) {
				a, err := assemble(ctx, role, asm, grant)
				if err != nil {
					return nil, err
				}
				return &stage.Resolved{Name: "assembled", Value: a,
					Reason: fmt.Sprintf("%d part(s) citing what %d source(s) handed out", len(a.parts), len(a.read))}, nil
			}},
		{ID: "provenance.render", Capability: "provenance",
			Compile: func(_ context.Context, snap stage.Snapshot, frags []promptloom.Fragment) ([]promptloom.Fragment, error) {
				a, _ := snap["assembled"].(*assembled)
				return append(frags, RenderLabelled(role, a.parts)...), nil
			}},
	}, nil)
	if err != nil {
		return nil, err
	}
	a, _ := run.Snapshot["assembled"].(*assembled)
	r, err := promptloom.Reduce(run.Fragments, &promptloom.Options{Budget: b})
	if err != nil {
		return nil, fmt.Errorf("context of %s: %w", role, err)
	}
	m := manifest.New(r, role)
	// Its digests are the reducer's own, over r.System itself: as in
	// explain, only the rules that do not hash are checked again.
	if err := manifest.ValidateStructure(m, r.System); err != nil {
		return nil, fmt.Errorf("context of %s: %w", role, err)
	}
	return &Context{Role: role, Upto: a.upto, Parts: a.parts, Read: a.read, Fragments: run.Fragments,
		Reduction: r, Manifest: m, Traces: run.Traces}, nil
}

// assembled is what the grant stage resolves: the parts, checked, and what
// the grant handed out to build them.
type assembled struct {
	upto  int64
	parts []Part
	read  []Source
}

func assemble[G any](ctx context.Context, role string, asm Assembler[G], grant G) (*assembled, error) {
	slices, err := grantSlices(grant)
	if err != nil {
		return nil, err
	}
	upto, err := checkGrant(ctx, slices)
	if err != nil {
		return nil, err
	}
	parts, err := asm(ctx, grant)
	if err != nil {
		return nil, fmt.Errorf("assembler for %s: %w", role, err)
	}
	read := handedOut(slices)
	if err := checkParts(parts, read); err != nil {
		return nil, err
	}
	return &assembled{upto: upto, parts: parts, read: read}, nil
}

var sliceType = reflect.TypeFor[Slice]()

// grantSlices returns the slices of a grant struct, refusing any field that
// is not a (non-nil) Slice: a grant holding a store would let the assembler
// read around it.
func grantSlices(grant any) ([]Slice, error) {
	v := reflect.ValueOf(grant)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil, fmt.Errorf("%w: the grant is a nil pointer", ErrNotASlice)
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%w: a grant must be a struct of slices, got %s", ErrNotASlice, v.Type())
	}
	var out []Slice
	for i := range v.NumField() {
		f, ft := v.Field(i), v.Type().Field(i)
		if !ft.Type.Implements(sliceType) {
			return nil, fmt.Errorf("%w: field %s is of type %s", ErrNotASlice, ft.Name, ft.Type)
		}
		if (f.Kind() == reflect.Pointer || f.Kind() == reflect.Interface) && f.IsNil() {
			return nil, fmt.Errorf("%w: field %s is nil", ErrNotASlice, ft.Name)
		}
		if !ft.IsExported() {
			return nil, fmt.Errorf("%w: field %s is unexported; the assembler could not read it and Assemble cannot check it", ErrNotASlice, ft.Name)
		}
		sl := f.Interface().(Slice)
		if p, ok := sl.(predicated); ok && !p.hasPredicate() {
			return nil, fmt.Errorf("%w: field %s (%T); pass AdmitAll or AllScopes to admit everything", ErrNilPredicate, ft.Name, sl)
		}
		out = append(out, sl)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: the grant %s has no slice", ErrNotASlice, v.Type())
	}
	return out, nil
}

func checkGrant(ctx context.Context, slices []Slice) (int64, error) {
	upto := slices[0].Upto()
	for _, s := range slices[1:] {
		if s.Upto() != upto {
			return 0, fmt.Errorf("%w: %d and %d", ErrMixedPositions, upto, s.Upto())
		}
	}
	for _, s := range slices {
		if h := s.HandedOut(); len(h) > 0 {
			return 0, fmt.Errorf("%w: a %T handed out %s", ErrGrantReused, s, h[0])
		}
	}
	for _, s := range slices {
		if f, ok := s.(Fresher); ok {
			if err := f.Fresh(ctx); err != nil {
				return 0, err
			}
		}
	}
	return upto, nil
}

func handedOut(slices []Slice) []Source {
	var out []Source
	seen := map[Source]bool{}
	for _, s := range slices {
		for _, src := range s.HandedOut() {
			if !seen[src] {
				seen[src] = true
				out = append(out, src)
			}
		}
	}
	return out
}

func checkParts(parts []Part, read []Source) error {
	handed := map[Source]bool{}
	for _, s := range read {
		handed[s] = true
	}
	citedByGenerated := map[Source]bool{}
	slots := map[string]bool{}
	for _, p := range parts {
		if slots[p.Slot] {
			return fmt.Errorf("%w: %q", ErrDuplicateSlot, p.Slot)
		}
		slots[p.Slot] = true
		for _, c := range p.Cites {
			if !handed[c] {
				return fmt.Errorf("%w: part %q cites %s", ErrUncitedSource, p.Slot, c)
			}
			if c.Kind == KindSection {
				if p.Register != budget.Generated {
					return fmt.Errorf("%w: part %q cites chronicle %s but is %s, not generated", ErrMislabelledPart, p.Slot, c, p.Register)
				}
				citedByGenerated[c] = true
			}
		}
	}
	for _, s := range read {
		if s.Kind == KindSection && !citedByGenerated[s] {
			return fmt.Errorf("%w: chronicle %s was read but no generated part cites it", ErrMislabelledPart, s)
		}
	}
	return nil
}
