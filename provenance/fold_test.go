package provenance

import (
	"context"
	"testing"

	"github.com/promptloom/promptloom/eventlog"
)

// A fold is never saved at a position past what it folded: rebuilt on a log
// whose head is behind it, it stops at the head, and the sections appended
// later at the positions it had read to are folded, after a restart too.
// A projection saved past the head (a log restored from an older backup)
// is replayed, not restored.
func TestFoldIsNeverSavedPastTheHead(t *testing.T) {
	ctx := context.Background()
	summary := func(context.Context, []eventlog.Event) (string, error) { return "s", nil }
	long, short := eventlog.NewMemory(nil), eventlog.NewMemory(nil)
	for i := range 5 {
		if _, err := CloseSection(ctx, long, "a"+string(rune('0'+i)), 1, 1, nil, summary); err != nil {
			t.Fatal(err)
		}
	}
	c := &Chronicle{}
	if err := CatchUp(ctx, long, c); err != nil || c.upto() != 5 {
		t.Fatalf("CatchUp: %v, at %d", err, c.upto())
	}
	if _, err := CloseSection(ctx, short, "b0", 1, 1, nil, summary); err != nil {
		t.Fatal(err)
	}
	if err := Rebuild(ctx, short, c); err != nil {
		t.Fatal(err)
	}
	if saved, _, _ := short.LoadProjection(ctx, "chronicle"); c.upto() != 1 || saved.Upto != 1 {
		t.Fatalf("rebuilt on a log of 1 event: at %d, saved at %d", c.upto(), saved.Upto)
	}
	for _, id := range []string{"b1", "b2", "b3"} {
		if _, err := CloseSection(ctx, short, id, 1, 1, nil, summary); err != nil {
			t.Fatal(err)
		}
	}
	restarted := &Chronicle{}
	if err := CatchUp(ctx, short, restarted); err != nil {
		t.Fatal(err)
	}
	if n := len(restarted.sections()); n != 4 {
		t.Errorf("after a restart the chronicle holds %d sections, want 4", n)
	}
	// A projection saved past the head is not restored.
	if err := short.SaveProjection(ctx, "chronicle", eventlog.Projection{Upto: 9, State: []byte(`[]`)}); err != nil {
		t.Fatal(err)
	}
	fresh := &Chronicle{}
	if err := CatchUp(ctx, short, fresh); err != nil {
		t.Fatal(err)
	}
	if n := len(fresh.sections()); n != 4 || fresh.upto() != 4 {
		t.Errorf("from a projection past the head: %d sections, at %d; want 4 at 4", n, fresh.upto())
	}
}
