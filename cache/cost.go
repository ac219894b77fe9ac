package cache

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/promptloom/promptloom/payload"
)

// priceCall fills v's cost from the table: the call's tokens, as the
// provider reported them (or, with no report, as predicted), times the
// model's prices; and each blame's cost.
func priceCall(p *Prices, v *Verdict, c *Call) {
	m := c.Request
	v.Model = m.Model
	row, ok := p.lookup(m.Provider, m.Model)
	if !ok {
		v.Unpriced = fmt.Sprintf("model %q is not in the price table", m.Model)
		return
	}
	var in, read, out int
	var writes []lifetimeTokens
	if u := c.Reported; u != nil {
		v.CostBasis = "reported"
		read, out = u.CacheReadTokens, u.OutputTokens
		writes = splitWrite(u.CacheWriteTokens, v.writes, defaultLifetime(m.Provider, c))
		in = u.InputTokens
		if payload.Provider(m.Provider) != payload.Anthropic {
			// OpenAI's and Gemini's input counts what was read and written
			// (a write no price applies to stays input).
			in = max(in-read-sum(writes), 0)
		}
	} else {
		v.CostBasis = "predicted"
		read, writes = v.Predicted.Read, v.writes
		in = max(v.InputTokens-read-v.Predicted.Write, 0)
	}
	t := row.tier(in + read + sum(writes))
	var cost money
	cost.add(in, t.input)
	cost.add(read, t.read)
	cost.add(out, t.output)
	for _, w := range writes {
		if w.tokens == 0 {
			continue
		}
		price, ok := t.write[w.ttl]
		if !ok {
			v.Unpriced = fmt.Sprintf("the price table has no %s cache-write price for %q", w.ttl, m.Model)
			return
		}
		cost.add(w.tokens, price)
	}
	v.Priced, v.Cost = true, cost.micros()
	for i := range v.Blame {
		b := &v.Blame[i]
		b.Cost = missCost(b.Tokens, t, v.writes)
		v.MissCost = addMicros(v.MissCost, b.Cost)
	}
}

// splitWrite shares a reported write among the lifetimes the prediction
// wrote, in billing order: each lifetime up to its predicted tokens, the
// rest at the last. With no predicted write, it is all at fallback.
func splitWrite(reported int, predicted []lifetimeTokens, fallback string) []lifetimeTokens {
	if reported <= 0 {
		return nil
	}
	if len(predicted) == 0 {
		if fallback == "" {
			return nil
		}
		return []lifetimeTokens{{fallback, reported}}
	}
	out := make([]lifetimeTokens, len(predicted))
	rest := reported
	for i, w := range predicted {
		n := min(rest, w.tokens)
		if i == len(predicted)-1 {
			n = rest
		}
		out[i] = lifetimeTokens{w.ttl, n}
		rest -= n
	}
	return out
}

// defaultLifetime is the lifetime a write is billed at when the
// prediction wrote nothing: Anthropic's default, GPT-5.6's ttl; "" where
// writes are not billed.
func defaultLifetime(provider string, c *Call) string {
	switch {
	case payload.Provider(provider) == payload.Anthropic:
		return "5m"
	case payload.Provider(provider) != payload.Gemini && gpt56(c.Request):
		return writeLifetime56(c.Request)
	}
	return ""
}

// missCost is what tokens that were not read cost over reading them:
// the call paid its write prices for them, as far as it wrote, and input
// for the rest.
func missCost(tokens int, t rates, writes []lifetimeTokens) int64 {
	if tokens <= 0 {
		return 0
	}
	var m money
	rest := tokens
	for _, w := range writes {
		n := min(rest, w.tokens)
		if price, ok := t.write[w.ttl]; ok && n > 0 {
			m.add(n, price)
			rest -= n
		}
	}
	m.add(rest, t.input)
	m.sub(tokens, t.read)
	return m.micros()
}

// totals adds the verdicts' money up by session, model and cause.
func (a *Analysis) totals(p *Prices) {
	s := &a.Summary
	s.PricesTaken, s.PricesSource = p.Taken, p.Source
	sessions, models, causes := map[string]*Total{}, map[string]*Total{}, map[string]*Total{}
	get := func(m map[string]*Total, k string) *Total {
		if m[k] == nil {
			m[k] = &Total{Key: k}
		}
		return m[k]
	}
	unpriced := map[string]bool{}
	for _, v := range a.Verdicts {
		missTokens := 0
		for _, b := range v.Blame {
			missTokens += b.Tokens
		}
		for _, t := range []*Total{get(sessions, v.Session), get(models, v.Model)} {
			t.Calls++
			t.MissTokens += missTokens
			if !v.Priced {
				t.Unpriced++
				continue
			}
			t.Cost = addMicros(t.Cost, v.Cost)
			t.MissCost = addMicros(t.MissCost, v.MissCost)
		}
		if v.Priced {
			s.Cost = addMicros(s.Cost, v.Cost)
			s.MissCost = addMicros(s.MissCost, v.MissCost)
		} else if v.Model != "" || len(v.Problems) == 0 {
			unpriced[v.Model] = true
		}
		seen := map[string]bool{}
		for _, b := range v.Blame {
			if b.Tokens == 0 {
				continue
			}
			t := get(causes, b.Kind)
			if !seen[b.Kind] {
				t.Calls++
				if !v.Priced {
					t.Unpriced++
				}
				seen[b.Kind] = true
			}
			t.MissTokens += b.Tokens
			t.MissCost = addMicros(t.MissCost, b.Cost)
		}
	}
	s.Sessions, s.Models, s.Causes = sortedTotals(sessions), sortedTotals(models), sortedTotals(causes)
	for m := range unpriced {
		s.Unpriced = append(s.Unpriced, m)
	}
	slices.Sort(s.Unpriced)
}

// sortedTotals orders totals by the money missed, then the tokens, then
// the key.
func sortedTotals(m map[string]*Total) []Total {
	out := make([]Total, 0, len(m))
	for _, t := range m {
		out = append(out, *t)
	}
	slices.SortFunc(out, func(x, y Total) int {
		return cmp.Or(cmp.Compare(y.MissCost, x.MissCost), cmp.Compare(y.MissTokens, x.MissTokens), cmp.Compare(x.Key, y.Key))
	})
	return out
}

func sum(ws []lifetimeTokens) int {
	n := 0
	for _, w := range ws {
		n += w.tokens
	}
	return n
}
