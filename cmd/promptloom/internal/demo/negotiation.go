package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/provenance"
)

// The negotiation: the UK and the EU settle a fisheries quota over three
// rounds, every offer an event in one log. The EU overhears a side remark
// that only it may see; a chronicle summarises each closed round. Each
// party's context is assembled through a grant of slices, so the remark can
// reach the EU's prompt and never the UK's, and every fragment names the
// events it came from.

// Parties, in speaking order.
var Parties = []string{"uk", "eu"}

// Rounds is how many rounds the negotiation runs.
const Rounds = 3

// Event kinds of the negotiation.
const (
	KindRoundOpen = "round.open"
	KindOffer     = "offer"
	KindRemark    = "remark"
)

// Budget is what each party's prompt is held to, in bytes: the later
// rounds must shed, by register and rank, which is what makes an
// assembler's ranks part of what a replay checks.
const Budget = 1100

// Settings vary a run.
type Settings struct {
	// Journal, when set, records every call (it validates each manifest
	// against the bytes sent first).
	Journal *journal.Journal
	// Ranks overrides the rank of the parts in the named slots.
	Ranks map[string]int
}

// Call is one party's turn: its context and the reply.
type Call struct {
	Role    string
	Round   int
	Seq     int64
	Context *provenance.Context
	Reply   string
}

// Negotiation is the whole run.
type Negotiation struct {
	Calls []Call
	Store eventlog.Store
}

// NegotiationClock stamps the demo's events: a fixed start, one second per
// event, so runs are byte-identical.
func NegotiationClock() func() time.Time {
	start := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	calls := 0
	return func() time.Time {
		at := start.Add(time.Duration(calls) * time.Second)
		calls++
		return at
	}
}

// Grant is what a party may read for one call: the offers and remarks it
// may see, its own beliefs, the chronicle it may see, and its brief.
type Grant struct {
	Log       *provenance.Slice[eventlog.Event]
	Beliefs   *provenance.BeliefSlice
	Chronicle *provenance.Slice[provenance.Section]
	Brief     *provenance.Given[string]
}

// NeedEmpty fails unless store is empty, as the negotiation needs it: a
// caller checks before creating anything else for the run.
func NeedEmpty(ctx context.Context, store eventlog.Store) error {
	if head, err := store.Head(ctx); err != nil {
		return err
	} else if head != 0 {
		return fmt.Errorf("the negotiation needs an empty log; this one holds %d events", head)
	}
	return nil
}

// RunNegotiation runs the three rounds over store (which must be empty),
// asking model for every reply.
func RunNegotiation(ctx context.Context, store eventlog.Store, model journal.Model, set Settings) (*Negotiation, error) {
	if err := NeedEmpty(ctx, store); err != nil {
		return nil, err
	}
	beliefs, chronicle := &provenance.Beliefs{}, &provenance.Chronicle{}
	n := &Negotiation{Store: store}
	for round := 1; round <= Rounds; round++ {
		open, err := store.Append(ctx, eventlog.Draft{Kind: KindRoundOpen, Actor: "chair", Payload: map[string]int{"round": round}})
		if err != nil {
			return nil, err
		}
		for _, party := range Parties {
			if err := provenance.CatchUp(ctx, store, beliefs, chronicle); err != nil {
				return nil, err
			}
			call, err := takeTurn(ctx, store, beliefs, chronicle, model, set, party, round)
			if err != nil {
				return nil, err // journal and pin errors name the call
			}
			n.Calls = append(n.Calls, call)
			if round == 1 && party == "uk" {
				// Said across the table, heard only by the EU delegation.
				if _, err := store.Append(ctx, eventlog.Draft{Kind: KindRemark, Actor: "uk", Audience: []string{"eu"},
					Payload: map[string]string{"text": "(aside) London could live with 50% if this closes by Friday."}}); err != nil {
					return nil, err
				}
			}
		}
		head, err := store.Head(ctx)
		if err != nil {
			return nil, err
		}
		if _, err := provenance.CloseSection(ctx, store, fmt.Sprintf("round-%d", round), open[0].Seq, head, nil, summarise(round)); err != nil {
			return nil, err
		}
	}
	return n, provenance.CatchUp(ctx, store, beliefs, chronicle)
}

func takeTurn(ctx context.Context, store eventlog.Store, beliefs *provenance.Beliefs, chronicle *provenance.Chronicle,
	model journal.Model, set Settings, party string, round int) (Call, error) {
	head, err := store.Head(ctx)
	if err != nil {
		return Call{}, err
	}
	visible := func(e eventlog.Envelope) bool { return e.VisibleTo(party) }
	grant := Grant{
		Log: provenance.OpenLog(store, head, func(e eventlog.Envelope) bool {
			return (e.Kind == KindOffer || e.Kind == KindRemark) && visible(e)
		}),
		Beliefs:   provenance.OpenBeliefs(store, beliefs, head, func(scope string) bool { return scope == party }),
		Chronicle: provenance.OpenChronicle(store, chronicle, head, visible),
		Brief:     provenance.NewGiven("brief", head, briefs[party]),
	}
	b := &budget.Budget{Counter: budget.Bytes(), Total: Budget}
	c, err := provenance.Assemble(ctx, party, assembleParty(party, round, set.Ranks), grant, b)
	if err != nil {
		return Call{}, err
	}
	messages, _ := json.Marshal([]map[string]string{{"role": "user",
		"content": fmt.Sprintf("Round %d of %d: your offer, %s?", round, Rounds, strings.ToUpper(party))}})
	req := journal.Request{Call: fmt.Sprintf("round-%d/%s", round, party), System: c.Reduction.System,
		Manifest: c.Manifest, Messages: messages}
	var resp journal.Response
	if set.Journal != nil {
		resp, err = set.Journal.Call(ctx, model, req)
	} else {
		resp, err = model.Complete(ctx, req)
	}
	if err != nil {
		return Call{}, err
	}
	reply := resp.Text
	_, err = store.Append(ctx,
		eventlog.Draft{Kind: KindOffer, Actor: party, Payload: map[string]any{"round": round, "text": reply}},
		eventlog.Draft{Kind: provenance.KindBeliefHeld, Actor: party, Audience: []string{party},
			Payload: provenance.Belief{Scope: party, ID: fmt.Sprintf("%s-after-%d", party, round), Text: afterthoughts[party][round-1]}},
	)
	return Call{Role: party, Round: round, Seq: head, Context: c, Reply: reply}, err
}

var briefs = map[string]string{
	"uk": "You negotiate for the United Kingdom on the North Sea mackerel quota for UK waters. Secure the largest share you can; never go below 50%. Make one offer per turn.",
	"eu": "You negotiate for the European Union on the North Sea mackerel quota for UK waters. Keep access for EU vessels; settle at no more than 55% for the UK. Make one offer per turn.",
}

// afterthoughts are the beliefs each party holds after its turn in each round.
var afterthoughts = map[string][]string{
	"uk": {"The EU will want historic access kept.", "The EU moves about 8 points a round.", "A deal near 52% is within reach."},
	"eu": {"The UK opened high; its floor is lower than it says.", "The UK values a review clause.", "The UK will take 52% with a review."},
}

// assembleParty writes a party's parts: the brief (binding), the offers and
// remarks it may see (considered), its beliefs (considered), the chronicle
// (generated), and a style note (craft).
func assembleParty(party string, round int, ranks map[string]int) func(context.Context, Grant) ([]provenance.Part, error) {
	return func(ctx context.Context, g Grant) ([]provenance.Part, error) {
		parts, err := partsOf(ctx, g, party, round)
		for i := range parts {
			if r, ok := ranks[parts[i].Slot]; ok {
				parts[i].Rank = r
			}
		}
		return parts, err
	}
}

func partsOf(ctx context.Context, g Grant, party string, round int) ([]provenance.Part, error) {
	parts := []provenance.Part{{
		Slot: "brief", Register: budget.Binding,
		Text: g.Brief.Value(), Cites: []provenance.Source{g.Brief.Cite()},
	}}
	evs, err := g.Log.Read(ctx)
	if err != nil {
		return nil, err
	}
	var lines []string
	var cites []provenance.Source
	for _, e := range evs {
		var p struct {
			Round int    `json:"round"`
			Text  string `json:"text"`
		}
		if err := e.Decode(&p); err != nil {
			return nil, err
		}
		if e.Kind == KindRemark {
			lines = append(lines, fmt.Sprintf("- overheard from %s: %s", strings.ToUpper(e.Actor), p.Text))
		} else {
			lines = append(lines, fmt.Sprintf("- round %d, %s: %s", p.Round, strings.ToUpper(e.Actor), p.Text))
		}
		cites = append(cites, g.Log.Cite(e))
	}
	if len(lines) > 0 {
		parts = append(parts, provenance.Part{Slot: "record", Register: budget.Considered, Rank: 2,
			Text: "What has been said:\n" + strings.Join(lines, "\n"), Cites: cites})
	}
	held, err := g.Beliefs.Read(ctx)
	if err != nil {
		return nil, err
	}
	for _, b := range held {
		parts = append(parts, provenance.Part{Slot: "belief:" + b.ID, Register: budget.Considered, Rank: 1,
			Text: "You believe: " + b.Text, Cites: []provenance.Source{g.Beliefs.Cite(b)}})
	}
	sections, err := g.Chronicle.Read(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range sections {
		parts = append(parts, provenance.Part{Slot: "chronicle:" + s.ID, Register: budget.Generated,
			Text: s.Text, Cites: []provenance.Source{g.Chronicle.Cite(s)}})
	}
	parts = append(parts, provenance.Part{Slot: "style", Register: budget.Craft,
		Text: fmt.Sprintf("This is round %d of %d. Answer in one or two sentences and name a percentage.", round, Rounds)})
	return parts, nil
}

// summarise is the chronicle's summariser: it lists the public offers of
// the round (a real run would ask a model; the demo's is scripted so that
// runs are identical).
func summarise(round int) func(context.Context, []eventlog.Event) (string, error) {
	return func(_ context.Context, evs []eventlog.Event) (string, error) {
		var offers []string
		for _, e := range evs {
			if e.Kind != KindOffer {
				continue
			}
			var p struct {
				Text string `json:"text"`
			}
			if err := e.Decode(&p); err != nil {
				return "", err
			}
			offers = append(offers, strings.ToUpper(e.Actor)+" said: "+p.Text)
		}
		return fmt.Sprintf("Round %d summary: %s", round, strings.Join(offers, " ")), nil
	}
}

// ScriptedModel is the demo's model: deterministic replies by call. The
// EU's second reply leans on what it overheard, if its prompt holds it.
type ScriptedModel struct {
	// Calls counts the replies given.
	Calls int
}

var scripted = map[string][]string{
	"uk": {"The UK proposes 60% of the quota for UK waters.", "The UK can accept 55% with a review after five years.", "The UK agrees to 52% with a five-year review."},
	"eu": {"The EU proposes 40% for UK waters, with historic access kept.", "The EU offers 48% and continued access for EU vessels.", "The EU agrees to 52% with a five-year review."},
}

// Complete implements journal.Model.
func (m *ScriptedModel) Complete(_ context.Context, req journal.Request) (journal.Response, error) {
	m.Calls++
	var round int
	var role string
	if _, err := fmt.Sscanf(req.Call, "round-%d/%s", &round, &role); err != nil {
		return journal.Response{}, fmt.Errorf("no scripted reply for call %q", req.Call)
	}
	lines := scripted[role]
	if lines == nil || round < 1 || round > len(lines) {
		return journal.Response{}, fmt.Errorf("no scripted reply for %s in round %d", role, round)
	}
	reply := lines[round-1]
	if role == "eu" && round == 2 && strings.Contains(req.System, "could live with 50%") {
		reply += " We have reason to think 50% would close it."
	}
	return journal.Response{Text: reply}, nil
}
