package fakecache

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Agent builds the Messages bodies of a coding agent's run, the shape
// real agents send: twelve tool definitions (the last with a breakpoint),
// three system blocks (the second with a breakpoint, the third with the
// date and working directory), and a conversation whose breakpoint moves
// to the newest user block every turn.
type Agent struct {
	Model    string
	Tools    []map[string]any
	System   []map[string]any
	Messages []map[string]any
}

// NewAgent returns an agent on claude-sonnet-4-5.
func NewAgent() *Agent {
	a := &Agent{Model: "claude-sonnet-4-5"}
	for i := range 12 {
		a.Tools = append(a.Tools, map[string]any{"name": fmt.Sprintf("tool%d", i), "description": strings.Repeat(fmt.Sprintf("Tool %d does its one thing well. ", i), 12),
			"input_schema": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}})
	}
	a.Tools[3]["name"] = "Bash"
	a.Tools[11]["cache_control"] = map[string]any{"type": "ephemeral"}
	a.System = []map[string]any{
		{"type": "text", "text": strings.Repeat("You are a careful coding agent. ", 40)},
		{"type": "text", "text": strings.Repeat("Read a file before you edit it. ", 30), "cache_control": map[string]any{"type": "ephemeral"}},
		{"type": "text", "text": "The date is 2026-12-03T10:00:00Z. The working directory is /src/app."},
	}
	return a
}

// Turn adds a user message, moves the breakpoint onto it, and returns the
// body to send.
func (a *Agent) Turn(user string) []byte {
	for _, m := range a.Messages {
		for _, b := range m["content"].([]map[string]any) {
			delete(b, "cache_control")
		}
	}
	a.Messages = append(a.Messages, map[string]any{"role": "user", "content": []map[string]any{
		{"type": "text", "text": user, "cache_control": map[string]any{"type": "ephemeral"}}}})
	body, _ := json.Marshal(map[string]any{"model": a.Model, "max_tokens": 1024, "tools": a.Tools, "system": a.System, "messages": a.Messages})
	return body
}

// Answer adds the assistant's reply.
func (a *Agent) Answer(text string) {
	a.Messages = append(a.Messages, map[string]any{"role": "assistant", "content": []map[string]any{{"type": "text", "text": text}}})
}
