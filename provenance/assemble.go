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

// The refusals of Assemble, matchable with errors.Is; the message names
// the grant's field or the part's slot.
var (
	// ErrInvalidGrant is a grant that cannot bound what the assembler
	// reads: a field that is not a slice (a store would let the assembler
	// read around it), a slice with a nil predicate, slices at different
	// positions, or a grant used before.
	ErrInvalidGrant = errors.New("invalid grant")
	// ErrInvalidPart is a part the rules refuse: two parts in one slot,
	// chronicle prose in a part not labelled generated, or chronicle prose
	// read and cited by no generated part.
	ErrInvalidPart = errors.New("invalid part")
	// ErrUncitedSource is a part citing what no slice handed out: the
	// assembler claims a source it did not read, or read around its grant.
	ErrUncitedSource = errors.New("part cites a source no slice handed out")
	// ErrNotGranted is a read of what the slice's predicate does not
	// admit: a belief scope outside the grant (BeliefSlice.Scope).
	ErrNotGranted = errors.New("not granted")
	// ErrStaleRead is a fold that is not at its slice's position: an event
	// the fold claims lies between them. Catching up and assembling again
	// at the new head resolves it.
	ErrStaleRead = errors.New("stale read")
)

// Assemble builds role's context from grant, a struct whose every field is
// a Reader (a *Slice, a *BeliefSlice, a *Given, or the application's own):
// nothing else can be read. Before the assembler runs
// it refuses a field that is neither, a slice with a nil predicate, slices
// at different positions and a grant that was used before
// (ErrInvalidGrant), and a fold that is not at the grant's position
// (ErrStaleRead); while it runs, a beliefs slice refuses every read once
// its fold has moved past the grant's position by a belief event
// (ErrStaleRead); after it ran, Assemble refuses a part that cites what no
// slice handed out (ErrUncitedSource), and two parts in one slot, chronicle
// prose in a part not labelled generated and chronicle prose read but cited
// by no generated part (ErrInvalidPart).
//
// The parts are then rendered to fragments, grouped by register under one
// heading each (id = slot, producer = role), and reduced; the manifest's
// segments carry each part's register, rank and sources. A budget b (nil:
// none) holds the prompt to a count, shedding parts by register and rank,
// never a binding one. The assembly runs as stages (provenance.grant,
// provenance.render, kernel.prompt), so the context carries their traces;
// a refusal is a *stage.Error naming provenance.grant.
func Assemble[G any](ctx context.Context, role string, asm func(ctx context.Context, grant G) ([]Part, error), grant G, b *budget.Budget) (*Context, error) {
	run, err := stage.Run(ctx, []stage.Stage{
		{ID: "provenance.grant", Capability: "provenance", Resolves: "assembled",
			Resolve: func(ctx context.Context, _ map[string]any) (any, string, error) {
				a, err := assemble(ctx, role, asm, grant)
				if err != nil {
					return nil, "", err
				}
				return a, fmt.Sprintf("%d part(s) citing what %d source(s) handed out", len(a.parts), len(a.read)), nil
			}},
		{ID: "provenance.render", Capability: "provenance",
			Compile: func(_ context.Context, snap map[string]any, frags []promptloom.Fragment) ([]promptloom.Fragment, error) {
				a, _ := snap["assembled"].(*assembled)
				return append(frags, renderLabelled(role, a.parts)...), nil
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
	return describe(role, a, run, r, m), nil
}

// assembled is what the grant stage resolves: the parts, checked, and what
// the grant handed out to build them.
type assembled struct {
	upto  int64
	parts []Part
	read  []Source
}

func assemble[G any](ctx context.Context, role string, asm func(context.Context, G) ([]Part, error), grant G) (*assembled, error) {
	fields, err := grantFields(grant)
	if err != nil {
		return nil, err
	}
	upto, err := checkGrant(ctx, fields)
	if err != nil {
		return nil, err
	}
	parts, err := asm(ctx, grant)
	if err != nil {
		return nil, fmt.Errorf("assembler for %s: %w", role, err)
	}
	read := handedOut(fields)
	if err := checkParts(parts, read); err != nil {
		return nil, err
	}
	return &assembled{upto: upto, parts: parts, read: read}, nil
}

var readerType = reflect.TypeFor[Reader]()

// field is one of a grant's readers, with its field's name.
type field struct {
	name string
	Reader
}

// admits and fresh are the library readers' own checks; an application's
// reader has no predicate and no fold of the library's to check.
func (f field) admits() bool {
	c, ok := f.Reader.(checked)
	return !ok || c.admits()
}

func (f field) fresh(ctx context.Context) error {
	if c, ok := f.Reader.(checked); ok {
		return c.fresh(ctx)
	}
	return nil
}

// grantFields returns the readers of a grant struct, refusing any field
// that is not a (non-nil) Reader: a grant holding a store would let the
// assembler read around it.
func grantFields(grant any) ([]field, error) {
	v := reflect.ValueOf(grant)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil, fmt.Errorf("%w: the grant is a nil pointer", ErrInvalidGrant)
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%w: a grant must be a struct of slices, got %s", ErrInvalidGrant, v.Type())
	}
	var out []field
	for i := range v.NumField() {
		f, ft := v.Field(i), v.Type().Field(i)
		if !ft.Type.Implements(readerType) {
			return nil, fmt.Errorf("%w: field %s is of type %s, not a slice (a Reader)", ErrInvalidGrant, ft.Name, ft.Type)
		}
		if (f.Kind() == reflect.Pointer || f.Kind() == reflect.Interface) && f.IsNil() {
			return nil, fmt.Errorf("%w: field %s is nil", ErrInvalidGrant, ft.Name)
		}
		if !ft.IsExported() {
			return nil, fmt.Errorf("%w: field %s is unexported; the assembler could not read it and Assemble cannot check it", ErrInvalidGrant, ft.Name)
		}
		out = append(out, field{ft.Name, f.Interface().(Reader)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: the grant %s has no slice", ErrInvalidGrant, v.Type())
	}
	return out, nil
}

// checkGrant refuses a slice with a nil predicate, slices at different
// positions, a grant used before and a fold not at the grant's position,
// in that order, and returns the grant's position.
func checkGrant(ctx context.Context, fields []field) (int64, error) {
	for _, f := range fields {
		if !f.admits() {
			return 0, fmt.Errorf("%w: field %s has a nil predicate; pass All to admit everything", ErrInvalidGrant, f.name)
		}
	}
	first := fields[0]
	for _, f := range fields[1:] {
		if f.Upto() != first.Upto() {
			return 0, fmt.Errorf("%w: slices at different positions: field %s at %d, field %s at %d",
				ErrInvalidGrant, first.name, first.Upto(), f.name, f.Upto())
		}
	}
	for _, f := range fields {
		if h := f.HandedOut(); len(h) > 0 {
			return 0, fmt.Errorf("%w: already used: field %s handed out %s", ErrInvalidGrant, f.name, h[0])
		}
	}
	for _, f := range fields {
		if err := f.fresh(ctx); err != nil {
			return 0, err
		}
	}
	return first.Upto(), nil
}

func handedOut(fields []field) []Source {
	out := []Source{}
	seen := map[Source]bool{}
	for _, f := range fields {
		for _, src := range f.HandedOut() {
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
			return fmt.Errorf("%w: two parts share the slot %q", ErrInvalidPart, p.Slot)
		}
		slots[p.Slot] = true
		for _, c := range p.Cites {
			if !handed[c] {
				return fmt.Errorf("%w: part %q cites %s", ErrUncitedSource, p.Slot, c)
			}
			if c.kind() == kindSection {
				if p.Register != budget.Generated {
					return fmt.Errorf("%w: part %q cites chronicle %s but is %s, not generated", ErrInvalidPart, p.Slot, c, p.Register)
				}
				citedByGenerated[c] = true
			}
		}
	}
	for _, s := range read {
		if s.kind() == kindSection && !citedByGenerated[s] {
			return fmt.Errorf("%w: chronicle %s was read but no generated part cites it", ErrInvalidPart, s)
		}
	}
	return nil
}
