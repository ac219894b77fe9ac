package cache_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/request"
)

// Two turns of a conversation whose tool definition was edited between
// them: the second call writes again what the first had cached, and the
// blame names the tool.
func ExampleRun() {
	body := func(desc, user string) []byte {
		return []byte(`{"model":"claude-sonnet-4-5","max_tokens":512,
			"tools":[{"name":"Bash","description":"` + desc + `","input_schema":{"type":"object"}}],
			"system":[{"type":"text","text":"` + strings.Repeat("Be careful. ", 500) + `","cache_control":{"type":"ephemeral"}}],
			"messages":[{"role":"user","content":"` + user + `"}]}`)
	}
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	var calls []cache.Call
	for i, b := range [][]byte{body("Run a command.", "hi"), body("Run one command.", "again")} {
		r, err := payload.Read(b, payload.Anthropic)
		if err != nil {
			fmt.Println(err)
			return
		}
		m, err := request.FromPayload(r, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		calls = append(calls, cache.Call{Name: fmt.Sprint("turn-", i+1), At: at.Add(time.Duration(i) * time.Minute), Request: m})
	}
	for _, v := range cache.Run(calls, nil).Verdicts {
		fmt.Printf("%s: read %d, write %d\n", v.Call, v.Predicted.Read, v.Predicted.Write)
		for _, b := range v.Blame {
			fmt.Println(" ", b.Kind, b.Reason)
		}
	}
	// Output:
	// turn-1: read 0, write 1520
	// turn-2: read 0, write 1521
	//   change /tools/0 tool Bash: description changed since call turn-1
}

// Explain with lint holds a request to the cache's rules before it is sent.
func ExampleExplain() {
	m := anthropicManifest([]byte(`{"model":"claude-sonnet-4-5","max_tokens":512,
		"system":[{"type":"text","text":"Be brief.","cache_control":{"type":"ephemeral"}}],
		"messages":[{"role":"user","content":"hi"}]}`))
	for _, f := range cache.Explain(m, nil, nil, true).Lint {
		fmt.Println(f)
	}
	// Output:
	// warning: /system/0: breakpoint below claude-sonnet-4-5's 1,024-token minimum (its prefix is about 3 tokens): nothing is cached, and no error is returned (minimum)
}

// A price table of one's own: each call is priced at its list prices, in
// micro-dollars, from the usage the provider reported.
func ExampleReadPrices() {
	prices, err := cache.ReadPrices([]byte(`{"taken": "2026-12-07", "source": "our contract", "models": [
		{"provider": "anthropic", "model": "claude-sonnet-4-5", "input": 3, "output": 15,
		 "cache_read": 0.30, "cache_write": {"5m": 3.75, "1h": 6}}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	m := anthropicManifest([]byte(`{"model":"claude-sonnet-4-5","max_tokens":512,
		"system":[{"type":"text","text":"` + strings.Repeat("Be careful. ", 500) + `","cache_control":{"type":"ephemeral"}}],
		"messages":[{"role":"user","content":"hi"}]}`))
	at := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	an := cache.Run([]cache.Call{
		{Name: "first", At: at, Request: m, Reported: &payload.Usage{InputTokens: 5, CacheWriteTokens: 1510, OutputTokens: 200}},
		{Name: "second", At: at.Add(time.Minute), Request: m, Reported: &payload.Usage{InputTokens: 5, CacheReadTokens: 1510, OutputTokens: 200}},
	}, &cache.Options{Prices: prices})
	for _, v := range an.Verdicts {
		fmt.Printf("%s: %d micro-dollars\n", v.Call, v.Cost)
	}
	fmt.Println("total:", an.Summary.Cost, "taken", an.Summary.PricesTaken)
	// Output:
	// first: 8678 micro-dollars
	// second: 3468 micro-dollars
	// total: 12146 taken 2026-12-07
}

// anthropicManifest is the request manifest of an Anthropic body: read
// once by payload, then accounted for by request.
func anthropicManifest(body []byte) *request.Manifest {
	r, err := payload.Read(body, payload.Anthropic)
	if err != nil {
		panic(err)
	}
	m, err := request.FromPayload(r, nil)
	if err != nil {
		panic(err)
	}
	return m
}
