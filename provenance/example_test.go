package provenance_test

import (
	"context"
	"fmt"

	"github.com/promptloom/promptloom/fragment"
	"github.com/promptloom/promptloom/provenance"
	"github.com/promptloom/promptloom/provenance/eventlog"
)

// A grant is a struct of slices: the assembler can read nothing else.
type grant struct {
	Log *provenance.LogSlice
}

func ExampleAssemble() {
	ctx := context.Background()
	store := eventlog.NewMemory()
	store.Append(ctx,
		eventlog.Draft{Kind: "note", Payload: "the meeting moved to Friday"},
		eventlog.Draft{Kind: "note", Audience: []string{"hr"}, Payload: "salary bands"})
	head, _ := store.Head(ctx)

	asm := func(ctx context.Context, g grant) ([]provenance.Part, error) {
		evs, err := g.Log.Events(ctx)
		var parts []provenance.Part
		for _, e := range evs {
			var text string
			e.Decode(&text)
			parts = append(parts, provenance.Part{Slot: fmt.Sprintf("note-%d", e.Seq), Register: fragment.Considered,
				Text: text, Cites: []provenance.Source{provenance.EventSource(e.Seq)}})
		}
		return parts, err
	}
	visible := func(e eventlog.Envelope) bool { return e.VisibleTo("assistant") }
	c, err := provenance.Assemble(ctx, "assistant", asm, grant{Log: provenance.NewLogSlice(store, head, visible)})
	if err != nil {
		panic(err)
	}
	for _, s := range c.Manifest.Segments {
		fmt.Println(s.ID, s.Register, s.Sources)
	}
	fmt.Printf("%q\n", c.Reduction.System)
	// Output:
	// note-1 considered [event:1]
	// "## Considered (what you have read; weigh it)\nthe meeting moved to Friday"
}
