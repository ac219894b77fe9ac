package provenance

import (
	"context"
	"errors"
	"testing"

	"github.com/promptloom/promptloom/eventlog"
)

// A nil predicate admits nothing and is never a panic: a read says
// ErrInvalidGrant, and Assemble refuses the grant before the assembler runs.
func TestNilPredicates(t *testing.T) {
	f := newFixture(t)
	if _, err := OpenLog(f.store, f.head, nil).Read(ctx); !errors.Is(err, ErrInvalidGrant) {
		t.Errorf("a log slice's Read = %v, want ErrInvalidGrant", err)
	}
	if _, err := OpenBeliefs(f.store, f.beliefs, f.head, nil).Read(ctx); !errors.Is(err, ErrInvalidGrant) {
		t.Errorf("a beliefs slice's Read = %v, want ErrInvalidGrant", err)
	}
	if got, err := OpenChronicle(f.store, f.chronicle, f.head, nil).Read(ctx); !errors.Is(err, ErrInvalidGrant) || len(got) != 0 {
		t.Errorf("a chronicle slice's Read = %v, %v, want nothing and ErrInvalidGrant", got, err)
	}

	ran := false
	asm := func(context.Context, Grant) ([]Part, error) { ran = true; return nil, nil }
	for _, name := range []string{"Log", "Beliefs", "Chronicle"} {
		g := f.grant("uk", f.head)
		switch name {
		case "Log":
			g.Log = OpenLog(f.store, f.head, nil)
		case "Beliefs":
			g.Beliefs = OpenBeliefs(f.store, f.beliefs, f.head, nil)
		case "Chronicle":
			g.Chronicle = OpenChronicle(f.store, f.chronicle, f.head, nil)
		}
		if _, err := Assemble(ctx, "uk", asm, g, nil); !errors.Is(err, ErrInvalidGrant) {
			t.Errorf("Assemble with a nil %s predicate = %v, want ErrInvalidGrant", name, err)
		}
	}
	if ran {
		t.Error("the assembler ran on a grant with a nil predicate")
	}

	// All admits everything.
	all := Grant{
		Log:       OpenLog(f.store, f.head, All),
		Beliefs:   OpenBeliefs(f.store, f.beliefs, f.head, All),
		Chronicle: OpenChronicle(f.store, f.chronicle, f.head, All),
		Brief:     NewGiven("brief", f.head, "x"),
	}
	if n := count(must(all.Log.Read(ctx)), func(e eventlog.Event) bool { return e.Kind == "remark" }); n != 1 {
		t.Errorf("All read %d remark(s), want the private one", n)
	}
	if n := count(must(all.Beliefs.Read(ctx)), func(b Belief) bool { return b.Scope == "eu" }); n != 1 {
		t.Errorf("All read %d EU belief(s), want 1", n)
	}
}

func count[T any](xs []T, match func(T) bool) int {
	n := 0
	for _, x := range xs {
		if match(x) {
			n++
		}
	}
	return n
}
