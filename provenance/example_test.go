package provenance_test

import (
	"context"
	"fmt"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/provenance"
)

// A grant is a struct of slices, all at one log position: the assembler can
// read nothing else, and Assemble checks that at run time.
type grant struct {
	Notes   *provenance.Slice[eventlog.Event]
	Beliefs *provenance.BeliefSlice
	Brief   *provenance.Given[string]
}

func ExampleAssemble() {
	ctx := context.Background()
	store := eventlog.NewMemory(nil)
	store.Append(ctx,
		eventlog.Draft{Kind: "note", Payload: "the meeting moved to Friday"},
		eventlog.Draft{Kind: "note", Audience: []string{"hr"}, Payload: "salary bands"},
		eventlog.Draft{Kind: provenance.KindBeliefHeld, Audience: []string{"assistant"},
			Payload: provenance.Belief{Scope: "assistant", ID: "tone", Text: "the team prefers short notes"}})
	head, _ := store.Head(ctx)

	// The Beliefs fold, kept in step with the log.
	beliefs := &provenance.Beliefs{}
	if err := provenance.CatchUp(ctx, store, beliefs); err != nil {
		panic(err)
	}

	asm := func(ctx context.Context, g grant) ([]provenance.Part, error) {
		parts := []provenance.Part{{Slot: "brief", Register: budget.Binding, Text: g.Brief.Value(),
			Cites: []provenance.Source{g.Brief.Cite()}}}
		notes, err := g.Notes.Read(ctx)
		if err != nil {
			return nil, err
		}
		for _, e := range notes {
			var text string
			e.Decode(&text)
			parts = append(parts, provenance.Part{Slot: fmt.Sprintf("note-%d", e.Seq), Register: budget.Considered,
				Text: text, Cites: []provenance.Source{g.Notes.Cite(e)}})
		}
		held, err := g.Beliefs.Read(ctx)
		for _, b := range held {
			parts = append(parts, provenance.Part{Slot: "belief-" + b.ID, Register: budget.Considered,
				Text: b.Text, Cites: []provenance.Source{g.Beliefs.Cite(b)}})
		}
		return parts, err
	}
	// The assistant may read the notes it is in the audience of, and its
	// own beliefs.
	notes := func(e eventlog.Envelope) bool { return e.Kind == "note" && e.VisibleTo("assistant") }
	c, err := provenance.Assemble(ctx, "assistant", asm, grant{
		Notes:   provenance.OpenLog(store, head, notes),
		Beliefs: provenance.OpenBeliefs(store, beliefs, head, func(scope string) bool { return scope == "assistant" }),
		Brief:   provenance.NewGiven("brief", head, "Summarise the week."),
	}, nil)
	if err != nil {
		panic(err)
	}
	for _, s := range c.Manifest.Segments {
		fmt.Println(s.ID, s.Register, s.Sources)
	}
	fmt.Println(c.Prompt)
	// Output:
	// brief binding [given:brief]
	// note-1 considered [event:1]
	// belief-tone considered [belief:tone]
	// ## Rules (binding)
	// Summarise the week.
	//
	// ## Considered (what you have read; weigh it)
	// the meeting moved to Friday
	//
	// the team prefers short notes
}
