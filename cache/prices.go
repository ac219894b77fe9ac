package cache

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/payload"
)

// Prices is a price table: each model's list prices, in US dollars per
// million tokens, for input, output, cache reads and cache writes by
// lifetime, with the date the prices were taken and where from. Read one
// with ReadPrices; the zero Options price calls with the built-in table
// (prices.json beside this file; docs/caching.md, "Prices").
type Prices struct {
	// Taken is the date the prices were read (YYYY-MM-DD); Source says
	// where.
	Taken  string `json:"taken"`
	Source string `json:"source"`
	rows   []priceRow
}

// ErrPrices is matched (errors.Is) by every error ReadPrices returns: a
// price table that is not JSON, or not the table's shape.
var ErrPrices = errors.New("price table")

// priceRow is one model's prices.
type priceRow struct {
	provider string // "anthropic", "openai" (either API), "gemini"
	model    string
	rates
	// over is the prompt, in tokens, past which overRates apply to the
	// whole call (0: no such tier).
	over      int
	overRates rates
}

// rates are micro-dollars per million tokens: exact for every price
// written with up to six decimals.
type rates struct {
	input, output, read int64
	// write is the cache-write price by lifetime, as the provider's API
	// names it ("5m", "1h"; "30m", "12h"); none for a cache that bills no
	// write.
	write map[string]int64
}

//go:embed prices.json
var builtinPrices []byte

// defaultPrices is the built-in table, read once; a table that does not
// read is an empty one, and TestBuiltinPrices fails on it.
var defaultPrices = func() *Prices {
	p, err := ReadPrices(builtinPrices)
	if err != nil {
		return &Prices{}
	}
	return p
}()

// ReadPrices reads a price table in the built-in table's JSON shape:
//
//	{"taken": "2026-12-07", "source": "...", "models": [
//	  {"provider": "anthropic", "model": "claude-opus-5", "input": 5, "output": 25,
//	   "cache_read": 0.50, "cache_write": {"5m": 6.25, "1h": 10}},
//	  {"provider": "openai", "model": "gpt-6.2-sol", "input": 2, "output": 10,
//	   "cache_read": 0.10, "cache_write": {"30m": 2.50, "12h": 5},
//	   "over": {"tokens": 272000, "input": 4, "output": 15, "cache_read": 0.20,
//	            "cache_write": {"30m": 5, "12h": 10}}}]}
//
// Prices are dollars per million tokens, written as decimals with at most
// six places (read exactly, never through a float). A model matches a call
// whose model ID is the model, or the model followed by a date
// ("claude-opus-5-20260724", "gpt-6.2-sol-2026-11-01") or an "@" version:
// never a later version ("claude-opus-5" does not price
// "claude-opus-5-5"). Over, when given, prices a whole call whose prompt
// is more than its tokens. Every error matches ErrPrices.
func ReadPrices(data []byte) (*Prices, error) {
	if err := pjson.Check(data, nil); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPrices, err)
	}
	s := string(data)
	if !strings.HasPrefix(strings.TrimSpace(s), "{") {
		return nil, fmt.Errorf("%w: not an object", ErrPrices)
	}
	p := &Prices{}
	seen := map[string]bool{}
	var fail error
	members(s, func(key, val string) bool {
		switch key {
		case "taken":
			p.Taken, fail = str(val, "taken")
		case "source":
			p.Source, fail = str(val, "source")
		case "models":
			if !strings.HasPrefix(strings.TrimSpace(val), "[") {
				fail = fmt.Errorf("%w: models is not a list", ErrPrices)
				break
			}
			i := 0
			pjson.Each(val, func(_ string, _ int, item string, _ int) bool {
				var r priceRow
				r, fail = readRow(item, i)
				if fail == nil {
					k := r.provider + "\x00" + r.model
					if seen[k] {
						fail = fmt.Errorf("%w: models[%d]: %s model %q is given twice", ErrPrices, i, r.provider, r.model)
					}
					seen[k] = true
					p.rows = append(p.rows, r)
				}
				i++
				return fail == nil
			})
		default:
			fail = fmt.Errorf("%w: unknown member %q (taken, source, models)", ErrPrices, key)
		}
		return fail == nil
	})
	if fail != nil {
		return nil, fail
	}
	if _, err := time.Parse(time.DateOnly, p.Taken); err != nil {
		return nil, fmt.Errorf("%w: taken is %q: give the date the prices were read, YYYY-MM-DD", ErrPrices, p.Taken)
	}
	return p, nil
}

// members calls fn with each member of the object raw holds, its key
// decoded.
func members(raw string, fn func(key, val string) bool) {
	pjson.Each(raw, func(k string, _ int, v string, _ int) bool { return fn(pjson.Unquote(k), v) })
}

func str(val, name string) (string, error) {
	if !strings.HasPrefix(val, `"`) {
		return "", fmt.Errorf("%w: %s is not a string", ErrPrices, name)
	}
	return pjson.Unquote(val), nil
}

func readRow(raw string, i int) (priceRow, error) {
	var r priceRow
	at := fmt.Sprintf("models[%d]", i)
	if !strings.HasPrefix(strings.TrimSpace(raw), "{") {
		return r, fmt.Errorf("%w: %s is not an object", ErrPrices, at)
	}
	var fail error
	var have []string
	members(raw, func(key, val string) bool {
		have = append(have, key)
		switch key {
		case "provider":
			r.provider, fail = str(val, at+".provider")
		case "model":
			r.model, fail = str(val, at+".model")
		case "over":
			if !strings.HasPrefix(strings.TrimSpace(val), "{") {
				fail = fmt.Errorf("%w: %s.over is not an object", ErrPrices, at)
				break
			}
			var seen []string
			members(val, func(k, v string) bool {
				seen = append(seen, k)
				if k == "tokens" {
					n, err := strconv.Atoi(v)
					if err != nil || n <= 0 {
						fail = fmt.Errorf("%w: %s.over.tokens is %s, not a positive whole number", ErrPrices, at, v)
					}
					r.over = n
					return fail == nil
				}
				fail = readRate(&r.overRates, k, v, at+".over")
				return fail == nil
			})
			if fail == nil {
				fail = complete(seen, at+".over", "tokens")
			}
		default:
			fail = readRate(&r.rates, key, val, at)
		}
		return fail == nil
	})
	if fail == nil {
		fail = complete(have, at, "provider", "model")
	}
	if fail != nil {
		return r, fail
	}
	switch r.provider {
	case "anthropic", "openai", "gemini":
	default:
		return r, fmt.Errorf("%w: %s.provider %q is none of anthropic, openai, gemini", ErrPrices, at, r.provider)
	}
	if r.model == "" {
		return r, fmt.Errorf("%w: %s.model is empty", ErrPrices, at)
	}
	if r.provider == "anthropic" && (!hasKey(r.write, "5m") || !hasKey(r.write, "1h") || r.over > 0 && (!hasKey(r.overRates.write, "5m") || !hasKey(r.overRates.write, "1h"))) {
		return r, fmt.Errorf("%w: %s: an Anthropic model needs cache_write for both lifetimes, \"5m\" and \"1h\"", ErrPrices, at)
	}
	return r, nil
}

func hasKey(m map[string]int64, k string) bool { _, ok := m[k]; return ok }

// complete says which of the members every row (or tier) must give is
// missing: the four prices, and names.
func complete(have []string, at string, names ...string) error {
	for _, n := range append(names, "input", "output", "cache_read") {
		if !slices.Contains(have, n) {
			return fmt.Errorf("%w: %s has no %s", ErrPrices, at, n)
		}
	}
	return nil
}

// readRate reads one price member into r.
func readRate(r *rates, key, val, at string) error {
	var dst *int64
	switch key {
	case "input":
		dst = &r.input
	case "output":
		dst = &r.output
	case "cache_read":
		dst = &r.read
	case "cache_write":
		if !strings.HasPrefix(strings.TrimSpace(val), "{") {
			return fmt.Errorf("%w: %s.cache_write is not an object of prices by lifetime", ErrPrices, at)
		}
		r.write = map[string]int64{}
		var fail error
		members(val, func(k, v string) bool {
			if k == "" {
				fail = fmt.Errorf("%w: %s.cache_write has an empty lifetime", ErrPrices, at)
				return false
			}
			var n int64
			n, fail = decimal(v, at+".cache_write."+k)
			r.write[k] = n
			return fail == nil
		})
		return fail
	default:
		return fmt.Errorf("%w: %s: unknown member %q (provider, model, input, output, cache_read, cache_write, over)", ErrPrices, at, key)
	}
	n, err := decimal(val, at+"."+key)
	*dst = n
	return err
}

// maxPrice bounds a price, in micro-dollars per million tokens: a
// million dollars a million tokens, far past any list price, so that
// tokens times price stays exact in the arithmetic below.
const maxPrice = 1_000_000 * 1_000_000

// decimal reads a JSON number of dollars (no sign, no exponent, at most
// six decimals) as micro-dollars, exactly.
func decimal(tok, at string) (int64, error) {
	whole, frac, dot := strings.Cut(tok, ".")
	bad := whole == "" || len(whole) > 7 || dot && (frac == "" || len(frac) > 6) || strings.Trim(whole+frac, "0123456789") != ""
	if bad {
		return 0, fmt.Errorf("%w: %s is %s: write dollars per million tokens as a decimal, at most six places, no sign or exponent", ErrPrices, at, tok)
	}
	frac += strings.Repeat("0", 6-len(frac))
	n, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil || n > maxPrice {
		return 0, fmt.Errorf("%w: %s is %s, past any price", ErrPrices, at, tok)
	}
	return n, nil
}

// lookup finds the row that prices model on provider's API.
func (p *Prices) lookup(provider, model string) (*priceRow, bool) {
	name := "openai"
	switch payload.Provider(provider) {
	case payload.Anthropic:
		name = "anthropic"
	case payload.Gemini:
		name = "gemini"
	case payload.OpenAIChat, payload.OpenAIResponses:
	default:
		return nil, false
	}
	m := strings.ToLower(model)
	for i := range p.rows {
		r := &p.rows[i]
		if r.provider == name && modelMatches(m, strings.ToLower(r.model)) {
			return r, true
		}
	}
	return nil, false
}

// modelMatches reports whether id is key, or key with a date or an "@"
// version after it: "-" and at least four digits ("-20260724",
// "-2026-11-01"), where a later version has one or two ("-5").
func modelMatches(id, key string) bool {
	rest, ok := strings.CutPrefix(id, key)
	switch {
	case !ok:
		return false
	case rest == "" || rest[0] == '@':
		return true
	case rest[0] != '-':
		return false
	}
	digits := 0
	for digits+1 < len(rest) && rest[digits+1] >= '0' && rest[digits+1] <= '9' {
		digits++
	}
	return digits >= 4
}

// tier is the rates that price a call whose prompt is prompt tokens.
func (r *priceRow) tier(prompt int) rates {
	if r.over > 0 && prompt > r.over {
		return r.overRates
	}
	return r.rates
}

// money adds up tokens times prices exactly, in pico-dollars (a token at
// a price in micro-dollars per million tokens), and rounds once, to
// micro-dollars, half up.
type money struct{ v big.Int }

func (m *money) add(tokens int, price int64) {
	if tokens <= 0 {
		return
	}
	var x big.Int
	x.SetInt64(int64(tokens))
	m.v.Add(&m.v, x.Mul(&x, big.NewInt(price)))
}

func (m *money) sub(tokens int, price int64) { m.add(tokens, -price) }

// micros is the amount in micro-dollars, rounded half away from zero;
// past the range of an int64, the range's end.
func (m *money) micros() int64 {
	var q, r big.Int
	q.QuoRem(&m.v, big.NewInt(1_000_000), &r)
	r.Abs(&r)
	if r.Cmp(big.NewInt(500_000)) >= 0 {
		q.Add(&q, big.NewInt(int64(m.v.Sign())))
	}
	if !q.IsInt64() {
		if q.Sign() < 0 {
			return math.MinInt64
		}
		return math.MaxInt64
	}
	return q.Int64()
}

// addMicros adds micro-dollar amounts, holding at the ends of the range.
func addMicros(a, b int64) int64 {
	s := a + b
	if a > 0 && b > 0 && s < 0 {
		return math.MaxInt64
	}
	if a < 0 && b < 0 && s >= 0 {
		return math.MinInt64
	}
	return s
}

// dollars writes micro-dollars as dollars, to the micro-dollar: $0.012345.
func dollars(micros int64) string {
	sign := ""
	u := uint64(micros)
	if micros < 0 {
		sign, u = "-", uint64(-(micros+1))+1
	}
	return fmt.Sprintf("%s$%d.%06d", sign, u/1_000_000, u%1_000_000)
}
