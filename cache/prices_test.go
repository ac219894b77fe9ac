package cache

import (
	"encoding/json"
	"errors"
	"maps"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom/internal/testkit/fakecache"
	"github.com/promptloom/promptloom/payload"
)

// tablePrice reads one price of the built-in table as the file writes it,
// apart from ReadPrices: encoding/json's numbers, as exact fractions.
func tablePrice(t *testing.T, model string, path ...string) *big.Rat {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(string(builtinPrices)))
	d.UseNumber()
	var tab struct {
		Models []map[string]any `json:"models"`
	}
	if err := d.Decode(&tab); err != nil {
		t.Fatal(err)
	}
	for _, m := range tab.Models {
		if m["model"] != model {
			continue
		}
		var v any = m
		for _, p := range path {
			v = v.(map[string]any)[p]
		}
		r, ok := new(big.Rat).SetString(string(v.(json.Number)))
		if !ok {
			t.Fatalf("%s %v: %v", model, path, v)
		}
		return r
	}
	t.Fatalf("no %s in prices.json", model)
	return nil
}

// microsOf is dollars-per-million times tokens, in micro-dollars,
// rounded half up: the test's own arithmetic.
func microsOf(parts ...any) int64 {
	sum := new(big.Rat)
	for i := 0; i < len(parts); i += 2 {
		x := new(big.Rat).SetInt64(int64(parts[i].(int)))
		sum.Add(sum, x.Mul(x, parts[i+1].(*big.Rat)))
	}
	// A price per million tokens times tokens is micro-dollars.
	n, r := new(big.Int).QuoRem(sum.Num(), sum.Denom(), new(big.Int))
	if new(big.Int).Mul(r, big.NewInt(2)).CmpAbs(sum.Denom()) >= 0 {
		n.Add(n, big.NewInt(int64(sum.Sign())))
	}
	return n.Int64()
}

func TestBuiltinPrices(t *testing.T) {
	p, err := ReadPrices(builtinPrices)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := time.Parse(time.DateOnly, p.Taken); err != nil || p.Source == "" {
		t.Errorf("taken %q, source %q", p.Taken, p.Source)
	}
	if len(p.rows) == 0 || len(defaultPrices.rows) != len(p.rows) {
		t.Errorf("%d rows, %d built in", len(p.rows), len(defaultPrices.rows))
	}
}

// agentRun sends an agent's turns to the fake Anthropic cache, gap apart,
// with each turn's answer reported as out output tokens.
func agentRun(t *testing.T, a *fakecache.Agent, turns int, gap time.Duration, edit func(i int, a *fakecache.Agent)) []Call {
	t.Helper()
	fake := newFake(1024)
	now := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	var calls []Call
	for i := range turns {
		if edit != nil {
			edit(i, a)
		}
		body := a.Turn("Now the next step, number " + strings.Repeat("x", i))
		if edit != nil {
			// An edit may also touch what Turn just added.
			edit(-1, a)
			body = agentBody(t, a)
		}
		m, err := newManifest(body, payload.Anthropic, nil)
		if err != nil {
			t.Fatal(err)
		}
		u := fake.serve(t, body, now)
		u.OutputTokens = 100 + i
		calls = append(calls, Call{Name: string(rune('a' + i)), Session: "s", At: now, Began: now.Add(time.Second), Request: m, Reported: &u})
		a.Answer("Done with step " + strings.Repeat("y", i))
		now = now.Add(gap)
	}
	return calls
}

func agentBody(t *testing.T, a *fakecache.Agent) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"model": a.Model, "max_tokens": 1024, "tools": a.Tools, "system": a.System, "messages": a.Messages})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Each call's cost is its reported tokens times the table's prices, and
// each miss's cost its tokens at what the call paid less the read price,
// to the micro-dollar: for 5-minute and for 1-hour breakpoints.
func TestCostIsTokensTimesPrices(t *testing.T) {
	for _, ttl := range []string{"5m", "1h"} {
		t.Run(ttl, func(t *testing.T) {
			a := fakecache.NewAgent()
			a.Model = "claude-opus-4-8"
			mark := map[string]any{"type": "ephemeral", "ttl": ttl}
			a.Tools[11]["cache_control"], a.System[1]["cache_control"] = mark, mark
			calls := agentRun(t, a, 6, time.Minute, func(i int, a *fakecache.Agent) {
				if i == 3 {
					a.Tools[2]["description"] = "Changed."
				}
				if i == -1 {
					a.Messages[len(a.Messages)-1]["content"].([]map[string]any)[0]["cache_control"] = mark
				}
			})
			an := Run(calls, nil)
			in, out := tablePrice(t, a.Model, "input"), tablePrice(t, a.Model, "output")
			read, write := tablePrice(t, a.Model, "cache_read"), tablePrice(t, a.Model, "cache_write", ttl)
			var total, missTotal int64
			blamed := 0
			for i, v := range an.Verdicts {
				u := calls[i].Reported
				want := microsOf(u.InputTokens, in, u.CacheReadTokens, read, u.CacheWriteTokens, write, u.OutputTokens, out)
				if !v.Priced || v.CostBasis != "reported" || v.Cost != want {
					t.Errorf("call %s: cost %d (priced %v, %s), want %d from %+v", v.Call, v.Cost, v.Priced, v.CostBasis, want, *u)
				}
				var miss int64
				for _, b := range v.Blame {
					w := min(b.Tokens, v.Predicted.Write)
					wantB := microsOf(w, write, b.Tokens-w, in, b.Tokens, new(big.Rat).Neg(read))
					if b.Cost != wantB {
						t.Errorf("call %s: %s blame of %d tokens costs %d, want %d", v.Call, b.Kind, b.Tokens, b.Cost, wantB)
					}
					if b.Tokens > 0 {
						blamed++
					}
					miss += b.Cost
				}
				if v.MissCost != miss {
					t.Errorf("call %s: miss cost %d, its blames add to %d", v.Call, v.MissCost, miss)
				}
				total += want
				missTotal += miss
			}
			if blamed == 0 {
				t.Error("no miss was blamed: the edited tool should be")
			}
			s := an.Summary
			if s.Cost != total || s.MissCost != missTotal || len(s.Sessions) != 1 || s.Sessions[0].Cost != total || len(s.Models) != 1 || s.Models[0].Key != a.Model {
				t.Errorf("summary %+v, want cost %d, misses %d", s, total, missTotal)
			}
			if i := slices.IndexFunc(s.Causes, func(c Total) bool { return c.Key == "change" }); i < 0 || s.Causes[i].MissCost <= 0 {
				t.Errorf("causes %+v: want the change priced", s.Causes)
			}
			var text strings.Builder
			if err := an.WriteText(&text, "t"); err != nil || !strings.Contains(text.String(), dollars(total)+", of which misses "+dollars(missTotal)) {
				t.Errorf("text: %v\n%s", err, text.String())
			}
		})
	}
}

// A call with no report is priced from its prediction; one past the
// over tier's tokens at the tier's prices.
func TestCostPredictedAndOverTier(t *testing.T) {
	m, err := newManifest([]byte(`{"model":"gpt-6.2-sol","input":[{"role":"user","content":"`+strings.Repeat("Read the whole file first. ", 400)+`"}]}`), payload.OpenAIResponses, nil)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	calls := []Call{
		{Name: "small", At: at, Request: m, Reported: &payload.Usage{InputTokens: 1000, CacheReadTokens: 200, OutputTokens: 50}},
		{Name: "large", At: at.Add(time.Second), Request: m, Reported: &payload.Usage{InputTokens: 300_000, CacheReadTokens: 100_000, OutputTokens: 1000}},
	}
	an := Run(calls, nil)
	price := func(p ...string) *big.Rat { return tablePrice(t, "gpt-6.2-sol", p...) }
	want := []int64{
		microsOf(800, price("input"), 200, price("cache_read"), 50, price("output")),
		microsOf(200_000, price("over", "input"), 100_000, price("over", "cache_read"), 1000, price("over", "output")),
	}
	for i, w := range want {
		if v := an.Verdicts[i]; v.Cost != w {
			t.Errorf("%s: cost %d, want %d", v.Call, v.Cost, w)
		}
	}
	// Alone, so that nothing it reads comes from the reports above.
	v := Run([]Call{{Name: "unreported", At: at, Request: m}}, nil).Verdicts[0]
	wantP := microsOf(v.InputTokens-v.Predicted.Read-v.Predicted.Write, price("input"), v.Predicted.Read, price("cache_read"), v.Predicted.Write, price("cache_write", "30m"))
	if v.CostBasis != "predicted" || v.Cost != wantP || v.Predicted.Write == 0 {
		t.Errorf("unreported: cost %d (%s), want %d", v.Cost, v.CostBasis, wantP)
	}
}

// A model the table lacks is named, and shows tokens only.
func TestUnpricedModel(t *testing.T) {
	a := fakecache.NewAgent() // claude-sonnet-4-5: not in the table
	an := Run(agentRun(t, a, 2, time.Minute, nil), nil)
	for _, v := range an.Verdicts {
		if v.Priced || v.Cost != 0 || !strings.Contains(v.Unpriced, "claude-sonnet-4-5") {
			t.Errorf("%s: priced %v, cost %d, unpriced %q", v.Call, v.Priced, v.Cost, v.Unpriced)
		}
	}
	if !slices.Equal(an.Summary.Unpriced, []string{"claude-sonnet-4-5"}) || an.Summary.Models[0].Unpriced != 2 {
		t.Errorf("summary: %+v", an.Summary)
	}
	var b strings.Builder
	if err := an.WriteText(&b, "t"); err != nil || !strings.Contains(b.String(), "not in the price table") {
		t.Errorf("text: %v\n%s", err, b.String())
	}
	// A table of the user's prices it.
	p, err := ReadPrices([]byte(`{"taken":"2026-12-07","source":"a test","models":[
		{"provider":"anthropic","model":"claude-sonnet-4-5","input":3,"output":15,"cache_read":0.3,"cache_write":{"5m":3.75,"1h":6}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	an = Run(agentRun(t, fakecache.NewAgent(), 2, time.Minute, nil), &Options{Prices: p})
	if v := an.Verdicts[0]; !v.Priced || v.Cost <= 0 || an.Summary.PricesSource != "a test" {
		t.Errorf("with the user's table: %+v", v)
	}
}

func TestReadPricesRefuses(t *testing.T) {
	row := func(s string) string {
		return `{"taken":"2026-12-07","models":[` + s + `]}`
	}
	ok := `"provider":"openai","model":"m","input":1,"output":2,"cache_read":0.1`
	for name, in := range map[string]string{
		"not JSON":       `{"taken":`,
		"not an object":  `[]`,
		"no date":        `{"models":[]}`,
		"bad date":       `{"taken":"yesterday","models":[]}`,
		"unknown member": `{"taken":"2026-12-07","currency":"EUR"}`,
		"exponent":       row(`{"provider":"openai","model":"m","input":1e1,"output":2,"cache_read":0.1}`),
		"negative":       row(`{"provider":"openai","model":"m","input":-1,"output":2,"cache_read":0.1}`),
		"seven places":   row(`{"provider":"openai","model":"m","input":0.0000001,"output":2,"cache_read":0.1}`),
		"string price":   row(`{"provider":"openai","model":"m","input":"1","output":2,"cache_read":0.1}`),
		"no output":      row(`{"provider":"openai","model":"m","input":1,"cache_read":0.1}`),
		"provider":       row(`{"provider":"mistral","model":"m","input":1,"output":2,"cache_read":0.1}`),
		"twice":          row(`{` + ok + `},{` + ok + `}`),
		"anthropic 1h":   row(`{"provider":"anthropic","model":"c","input":1,"output":2,"cache_read":0.1,"cache_write":{"5m":1.25}}`),
		"over tokens":    row(`{` + ok + `,"over":{"tokens":0,"input":1,"output":2,"cache_read":0.1}}`),
	} {
		if _, err := ReadPrices([]byte(in)); !errors.Is(err, ErrPrices) {
			t.Errorf("%s: %v, want ErrPrices", name, err)
		}
	}
	if _, err := ReadPrices([]byte(row(`{` + ok + `}`))); err != nil {
		t.Errorf("a good table: %v", err)
	}
}

func TestModelMatches(t *testing.T) {
	for id, want := range map[string]bool{
		"claude-opus-5": true, "claude-opus-5-20260724": true, "claude-opus-5@20260724": true,
		"claude-opus-5-5": false, "claude-opus-50": false, "claude-opus": false,
	} {
		if got := modelMatches(id, "claude-opus-5"); got != want {
			t.Errorf("%s: %v", id, got)
		}
	}
	if r, ok := defaultPrices.lookup("anthropic", "claude-opus-5-5-20261001"); !ok || r.model != "claude-opus-5-5" {
		t.Errorf("claude-opus-5-5's snapshot priced as %+v", r)
	}
}

func TestMoney(t *testing.T) {
	var m money
	m.add(3, 500_000)  // 1.5 micro-dollars
	m.add(1, -100_000) // less 0.1
	if got := m.micros(); got != 1 {
		t.Errorf("1.4 micro-dollars rounds to %d", got)
	}
	m.add(1, 100_000)
	if got := m.micros(); got != 2 {
		t.Errorf("1.5 micro-dollars rounds to %d", got)
	}
	for n, want := range map[int64]string{0: "$0.000000", 12_345: "$0.012345", -1_500_000: "-$1.500000"} {
		if got := dollars(n); got != want {
			t.Errorf("dollars(%d) = %s", n, got)
		}
	}
}

// Rates gives a listed model's cache prices as multiples of its input
// price (the table's figures divided: claude-sonnet-5's 0.20, 2.50 and 4
// over 2; gpt-6.2-sol's 0.10, 2.50 and 5 over 2), and an unlisted model
// its provider's default, saying it is one.
func TestRates(t *testing.T) {
	custom, err := ReadPrices([]byte(`{"taken":"2026-12-07","source":"a test","models":[
		{"provider":"gemini","model":"gemini-9","input":4,"output":8,"cache_read":1},
		{"provider":"openai","model":"gpt-free","input":0,"output":0,"cache_read":0}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		table           *Prices
		provider, model string
		read            float64
		write           map[string]float64
		listed          bool
	}{
		{nil, "anthropic", "claude-sonnet-5-20261201", 0.1, map[string]float64{"5m": 1.25, "1h": 2}, true},
		{nil, "openai-responses", "gpt-6.2-sol", 0.05, map[string]float64{"30m": 1.25, "12h": 2.5}, true},
		{nil, "anthropic", "claude-haiku-9", 0.1, map[string]float64{"5m": 1.25, "1h": 2}, false},
		{nil, "openai-chat", "gpt-5.6-mini", 0.1, map[string]float64{"30m": 1.25}, false},
		{nil, "openai-chat", "gpt-4o", 0.25, map[string]float64{}, false},
		{nil, "gemini", "gemini-2.5-flash", 0.25, map[string]float64{}, false},
		{nil, "bedrock", "x", 1, map[string]float64{}, false},
		{custom, "gemini", "gemini-9", 0.25, map[string]float64{}, true},
		// A row whose input is free has no multiples: the default.
		{custom, "openai-chat", "gpt-free", 0.25, map[string]float64{}, false},
		{custom, "anthropic", "claude-sonnet-5", 0.1, map[string]float64{"5m": 1.25, "1h": 2}, false},
	} {
		read, write, listed := c.table.Rates(c.provider, c.model)
		if read != c.read || listed != c.listed || !maps.Equal(write, c.write) {
			t.Errorf("%s %s: %v %v %v, want %v %v %v", c.provider, c.model, read, write, listed, c.read, c.write, c.listed)
		}
	}
}
