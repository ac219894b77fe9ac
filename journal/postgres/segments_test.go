package postgres

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/harn/redact"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/transcript"
)

// agentBodies are the bodies of an agent's calls, each resending its
// history: a system block, eight tools, and turns of text, tool calls and
// tool results of varied size, the breakpoint on the newest block.
func agentBodies(n int) [][]byte {
	rng := rand.New(rand.NewSource(7))
	words := strings.Fields("the build test file function error return value package import handler cache token session")
	prose := func(size int) string {
		var b strings.Builder
		for b.Len() < size {
			b.WriteString(words[rng.Intn(len(words))])
			k := rng.Intn(3)
			b.WriteString(" \"\n"[k : k+1])
		}
		return b.String()
	}
	var tools []map[string]any
	for i := range 8 {
		tools = append(tools, map[string]any{"name": fmt.Sprintf("tool_%d", i), "description": prose(400),
			"input_schema": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}})
	}
	system := []map[string]any{{"type": "text", "text": prose(5000), "cache_control": map[string]any{"type": "ephemeral"}}}
	var msgs []map[string]any
	var out [][]byte
	for i := range n {
		if i%5 == 0 {
			msgs = append(msgs, map[string]any{"role": "user", "content": []map[string]any{{"type": "text", "text": prose(200 + rng.Intn(400))}}})
		}
		for _, m := range msgs {
			for _, b := range m["content"].([]map[string]any) {
				delete(b, "cache_control")
			}
		}
		last := msgs[len(msgs)-1]["content"].([]map[string]any)
		last[len(last)-1]["cache_control"] = map[string]any{"type": "ephemeral"}
		body, _ := json.Marshal(map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 4096, "tools": tools, "system": system, "messages": msgs})
		out = append(out, body)
		id := fmt.Sprintf("toolu_%d", i)
		secret := ""
		if i%17 == 0 {
			secret = " ghp_" + strings.Repeat("a1B2", 10)
		}
		msgs = append(msgs,
			map[string]any{"role": "assistant", "content": []map[string]any{{"type": "text", "text": prose(100)}, {"type": "tool_use", "id": id, "name": "tool_1", "input": map[string]any{"path": "a.go"}}}},
			map[string]any{"role": "user", "content": []map[string]any{{"type": "tool_result", "tool_use_id": id, "content": prose(50+rng.Intn(4000)) + secret}}})
	}
	return out
}

// recordBodies records the bodies as the proxy does (unattributed, with
// the body) through j, and closes it.
func recordBodies(t testing.TB, j *journal.Journal, bodies [][]byte) {
	t.Helper()
	for i, b := range bodies {
		p, err := j.Begin(ctx, journal.Request{Call: fmt.Sprintf("turn-%d", i), Body: b, Provider: payload.Anthropic, Unattributed: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Finish(ctx, journal.Response{Text: "ok", Body: []byte(`{"content":[{"type":"text","text":"ok"}]}`)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}

// A 200-turn agent session whose bodies are kept as segments is the same
// chain in PostgreSQL as in a file, byte for byte; read back (export) and
// imported again it stays so, verifies, and every body joins to the body
// as kept.
func TestPostgresSegmentedSession(t *testing.T) {
	s, _ := open(t)
	bodies := agentBodies(200)
	var file bytes.Buffer
	recordBodies(t, journal.New(&file, &journal.Options{Clock: clock(), Session: "agent"}), bodies)
	recordBodies(t, journal.NewSink(s.Sink("agent"), &journal.Options{Clock: clock(), Session: "agent"}), bodies)
	got := read(t, s, "agent")
	if !bytes.Equal(got, file.Bytes()) {
		t.Fatalf("the chain (%d bytes) is not the file (%d bytes)", len(got), file.Len())
	}
	if !bytes.Contains(got, []byte(`"body_segments":[[0,`)) {
		t.Fatal("no body kept as segments")
	}
	sent := 0
	for _, b := range bodies {
		sent += len(b)
	}
	t.Logf("%d calls, %d bytes sent, a %d-byte chain", len(bodies), sent, len(got))
	if err := s.Sink("again").Append(ctx, func(tail journal.Tail) ([]byte, error) { return got, nil }); err != nil {
		t.Fatal(err)
	}
	if again := read(t, s, "again"); !bytes.Equal(again, got) {
		t.Fatal("imported and exported again, the chain changed")
	}
	rep := verify(t, got, nil)
	reqs, err := transcript.Requests(got, rep)
	if err != nil || len(reqs) != len(bodies) {
		t.Fatalf("%d requests, %v", len(reqs), err)
	}
	for i, r := range reqs {
		want, err := redact.JSON(bodies[i])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(r.Body, want) {
			t.Fatalf("call %d: the body joined is not the body as kept", i)
		}
	}
}
