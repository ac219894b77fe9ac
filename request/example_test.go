package request_test

import (
	"fmt"

	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/request"
)

// A request manifest accounts for the whole body in the provider's cache
// order: the tools, then the system blocks, then the messages, each with
// its path and cache mark. The body is read once, by payload.
func ExampleFromPayload() {
	body := []byte(`{"model":"claude-sonnet-4-5","max_tokens":512,
		"system":[{"type":"text","text":"You are terse.","cache_control":{"type":"ephemeral"}}],
		"tools":[{"name":"Bash","description":"Run a command.","input_schema":{"type":"object"}}],
		"messages":[{"role":"user","content":"Where is main?"}]}`)
	r, err := payload.Read(body, payload.Auto)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := request.FromPayload(r, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range m.Segments {
		fmt.Println(s.Section, s.Path, s.Bytes, "bytes", s.Tokens, "tokens", s.Cache != nil)
	}
	fmt.Println(m.Counter, m.Tokens)
	// Output:
	// tools /tools/0 79 bytes 20 tokens false
	// system /system/0 76 bytes 4 tokens true
	// messages /messages/0/content 16 bytes 4 tokens false
	// estimate 28
}

// Diverge says where one request leaves another's prefix, and what
// changed there.
func ExampleDiverge() {
	manifest := func(desc string) *request.Manifest {
		r, _ := payload.Read([]byte(`{"model":"claude-sonnet-4-5","tools":[{"name":"Bash","description":"`+desc+
			`","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"hi"}]}`), payload.Anthropic)
		m, _ := request.FromPayload(r, nil)
		return m
	}
	d := request.Diverge(manifest("Run a command."), manifest("Run one command."), nil)
	fmt.Println(d.Path, d.Reason)
	// Output:
	// /tools/0 tool Bash: description changed
}
