package cache

import (
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/request"
)

// Rates is what a model's cache costs, as multiples of the model's input
// price: a read, and a write by lifetime as the provider's API names it
// ("5m", "1h"; "30m"), with none for a cache that bills no write (a
// written token is billed as input). A nil table is the built-in one.
// Listed says the model is in the table; when it is not, the figures are
// the provider's documented defaults (docs/caching.md): Anthropic's 0.1,
// 1.25 ("5m") and 2 ("1h"), the same for every model; GPT-5.6 and later,
// 0.1 and 1.25 ("30m"); OpenAI's earlier models and Gemini, whose
// cached-input discounts differ by model, 0.25 and no write.
func (p *Prices) Rates(provider, model string) (read float64, write map[string]float64, listed bool) {
	if p == nil {
		p = defaultPrices
	}
	if row, ok := p.lookup(provider, model); ok && row.input > 0 {
		write = make(map[string]float64, len(row.write))
		for ttl, w := range row.write {
			write[ttl] = float64(w) / float64(row.input)
		}
		return float64(row.read) / float64(row.input), write, true
	}
	switch payload.Provider(provider) {
	case payload.Anthropic:
		return 0.1, map[string]float64{"5m": 1.25, "1h": 2}, false
	case payload.OpenAIChat, payload.OpenAIResponses:
		if gpt56(&request.Manifest{Model: model}) {
			return 0.1, map[string]float64{"30m": 1.25}, false
		}
		return 0.25, map[string]float64{}, false
	case payload.Gemini:
		return 0.25, map[string]float64{}, false
	}
	// A provider no cache is modelled for: every token at the input price.
	return 1, map[string]float64{}, false
}
