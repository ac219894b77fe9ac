package provenance

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/promptloom/promptloom/eventlog"
)

// kindSectionClosed is the event kind that records a closed chronicle
// section; CloseSection appends it.
const kindSectionClosed = "chronicle.section"

// Section summarises a closed range of the log. The summary is prose written
// by a caller-supplied summariser (usually a model): generated, advisory,
// never canon.
type Section struct {
	ID   string `json:"id"`
	From int64  `json:"from"`
	To   int64  `json:"to"`
	Text string `json:"text"`
	// Summarised lists the events the summariser was shown: only those the
	// section's audience may see.
	Summarised []int64 `json:"summarised"`
	// Seq is the position of the section's own event; Audience who may
	// read it.
	Seq      int64    `json:"seq"`
	Audience []string `json:"audience,omitempty"`
}

// Chronicle folds section events into the list of sections. The zero value
// is an empty fold, ready for CatchUp (its projection is "chronicle").
type Chronicle struct {
	at   int64
	list []Section
}

func (c *Chronicle) name() string { return "chronicle" }

func (c *Chronicle) claims(kind string) bool { return kind == kindSectionClosed }

func (c *Chronicle) apply(e eventlog.Event) error {
	var s Section
	if err := e.Decode(&s); err != nil {
		return err
	}
	s.Seq, s.Audience = e.Seq, e.Audience
	c.list = append(c.list, s)
	c.at = max(c.at, e.Seq)
	return nil
}

func (c *Chronicle) upto() int64 { return c.at }

func (c *Chronicle) advance(upto int64) { c.at = max(c.at, upto) }

func (c *Chronicle) reset() { c.at, c.list = 0, nil }

func (c *Chronicle) snapshot() ([]byte, error) { return json.Marshal(orNone(c.list)) }

func (c *Chronicle) restore(upto int64, state []byte) error {
	c.reset()
	if err := json.Unmarshal(state, &c.list); err != nil {
		return err
	}
	c.at = upto
	return nil
}

// sections returns every section, in log order.
func (c *Chronicle) sections() []Section { return slices.Clone(c.list) }

func orNone[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// CloseSection has summarise (usually a model) write the prose of the
// events in [from, to] that audience may see (an empty audience is
// everyone, so only public events are shown) and records the summary in the
// log as a section event with that audience. The text is in the log, so a
// rebuilt Chronicle has it without asking the summariser again.
func CloseSection(ctx context.Context, store eventlog.Store, id string, from, to int64, audience []string,
	summarise func(ctx context.Context, events []eventlog.Event) (string, error)) (Section, error) {
	var shown []eventlog.Event
	err := store.Scan(ctx, from, to, func(env eventlog.Envelope) error {
		if env.Kind == kindSectionClosed || !visibleToAll(env, audience) {
			return nil
		}
		e, err := store.Get(ctx, env.Seq)
		shown = append(shown, e)
		return err
	})
	if err != nil {
		return Section{}, err
	}
	text, err := summarise(ctx, shown)
	if err != nil {
		return Section{}, fmt.Errorf("section %s: summariser: %w", id, err)
	}
	s := Section{ID: id, From: from, To: to, Text: text, Summarised: []int64{}}
	for _, e := range shown {
		s.Summarised = append(s.Summarised, e.Seq)
	}
	envs, err := store.Append(ctx, eventlog.Draft{Kind: kindSectionClosed, Actor: "chronicle", Audience: audience, Payload: s})
	if err != nil {
		return Section{}, err
	}
	s.Seq, s.Audience = envs[0].Seq, envs[0].Audience
	return s, nil
}

// visibleToAll reports whether every role of audience may see the event; for
// an empty (public) audience, whether the event is public.
func visibleToAll(env eventlog.Envelope, audience []string) bool {
	if len(audience) == 0 {
		return len(env.Audience) == 0
	}
	for _, r := range audience {
		if !env.VisibleTo(r) {
			return false
		}
	}
	return true
}
