package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/harn/redact"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/internal/wire"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/transcript"

	"golang.org/x/mod/sumdb/note"
)

// agentRun is a coding agent's session, as a harness sends it through
// the proxy: every call resends the whole history. A system prompt,
// eight tools, and turns of a user message, the assistant's text and
// tool calls, and tool results of varied size (a file read, a listing,
// a test run), with a secret now and then; in Anthropic's shape the
// cache breakpoint moves to the newest block every call, as Claude Code
// moves it.
type agentRun struct {
	provider payload.Provider
	rng      *rand.Rand
	tools    []map[string]any
	system   string
	messages []map[string]any
	turn     int
}

func newAgentRun(p payload.Provider, seed int64) *agentRun {
	a := &agentRun{provider: p, rng: rand.New(rand.NewSource(seed))}
	for i, name := range []string{"read_file", "write_file", "edit_file", "bash", "grep", "glob", "list_dir", "web_fetch"} {
		a.tools = append(a.tools, map[string]any{"name": name,
			"description": a.prose(300 + 80*i),
			"input_schema": map[string]any{"type": "object", "required": []string{"path"}, "properties": map[string]any{
				"path": map[string]any{"type": "string", "description": "The file or directory, relative to the working directory."},
				"arg":  map[string]any{"type": "string", "description": a.prose(60)}}}})
	}
	a.system = "You are a careful coding agent working in /src/app. " + a.prose(6000)
	return a
}

var agentWords = strings.Fields("the build test file function error return value package import module config handler request response cache token session call line byte read write edit run check fix change update path main lib server client")

// prose is n bytes or so of words, with a newline now and then.
func (a *agentRun) prose(n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(agentWords[a.rng.Intn(len(agentWords))])
		if a.rng.Intn(12) == 0 {
			b.WriteString(".\n")
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// code is a file's text of n bytes or so: lines of Go with quotes and
// tabs, as a tool result holds them.
func (a *agentRun) code(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "\tif err := %s(ctx, \"%s\"); err != nil {\n\t\treturn fmt.Errorf(\"%s %d: %%w\", err)\n\t}\n",
			agentWords[a.rng.Intn(len(agentWords))], agentWords[a.rng.Intn(len(agentWords))], agentWords[a.rng.Intn(len(agentWords))], i)
	}
	return b.String()
}

// result is a tool's output, of a size that varies as agents' do.
func (a *agentRun) result() string {
	switch a.rng.Intn(5) {
	case 0:
		return a.code(200 + a.rng.Intn(6000)) // a file read
	case 1:
		return a.prose(100 + a.rng.Intn(400)) // a listing
	case 2:
		return "ok"
	case 3:
		return a.code(500+a.rng.Intn(1500)) + "\nFAIL\tgithub.com/x/app\t0.2s" // a test run
	}
	return "token ghp_" + strings.Repeat("a1B2", 10) + " found in .env; " + a.prose(200)
}

// call is the next call's body, with what the assistant answers to it:
// its text, its tool call, and the answer's body as the provider sends it.
func (a *agentRun) call() (body []byte, resp Response) {
	a.turn++
	if a.turn == 1 || a.rng.Intn(6) == 0 {
		a.user(a.prose(80 + a.rng.Intn(600)))
	}
	var b map[string]any
	switch a.provider {
	case payload.Anthropic:
		for _, m := range a.messages {
			for _, blk := range m["content"].([]map[string]any) {
				delete(blk, "cache_control")
			}
		}
		last := a.messages[len(a.messages)-1]["content"].([]map[string]any)
		last[len(last)-1]["cache_control"] = map[string]any{"type": "ephemeral"}
		b = map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 8192, "stream": true, "tools": a.tools,
			"system":   []map[string]any{{"type": "text", "text": a.system, "cache_control": map[string]any{"type": "ephemeral"}}},
			"messages": a.messages}
	default:
		tools := make([]map[string]any, len(a.tools))
		for i, t := range a.tools {
			tools[i] = map[string]any{"type": "function", "function": map[string]any{"name": t["name"], "description": t["description"], "parameters": t["input_schema"]}}
		}
		b = map[string]any{"model": "gpt-5", "stream": true, "tools": tools,
			"messages": append([]map[string]any{{"role": "system", "content": a.system}}, a.messages...)}
	}
	body, err := json.Marshal(b)
	if err != nil {
		panic(err)
	}
	text := a.prose(40 + a.rng.Intn(300))
	tool := a.tools[a.rng.Intn(len(a.tools))]["name"].(string)
	args := fmt.Sprintf(`{"path":"pkg/%s/%d.go"}`, agentWords[a.rng.Intn(len(agentWords))], a.turn)
	id := fmt.Sprintf("toolu_%04d", a.turn)
	out := a.result()
	var reply []byte
	switch a.provider {
	case payload.Anthropic:
		a.messages = append(a.messages,
			map[string]any{"role": "assistant", "content": []map[string]any{{"type": "text", "text": text}, {"type": "tool_use", "id": id, "name": tool, "input": json.RawMessage(args)}}},
			map[string]any{"role": "user", "content": []map[string]any{{"type": "tool_result", "tool_use_id": id, "content": out}}})
		reply, _ = json.Marshal(map[string]any{"id": fmt.Sprintf("msg_%04d", a.turn), "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
			"content":     []map[string]any{{"type": "text", "text": text}, {"type": "tool_use", "id": id, "name": tool, "input": json.RawMessage(args)}},
			"stop_reason": "tool_use", "usage": map[string]int{"input_tokens": len(body) / 4, "output_tokens": 80}})
	default:
		a.messages = append(a.messages,
			map[string]any{"role": "assistant", "content": text, "tool_calls": []map[string]any{{"id": id, "type": "function", "function": map[string]any{"name": tool, "arguments": args}}}},
			map[string]any{"role": "tool", "tool_call_id": id, "content": out})
		reply, _ = json.Marshal(map[string]any{"id": fmt.Sprintf("chatcmpl-%04d", a.turn), "object": "chat.completion", "model": "gpt-5",
			"choices": []map[string]any{{"index": 0, "finish_reason": "tool_calls", "message": map[string]any{"role": "assistant", "content": text,
				"tool_calls": []map[string]any{{"id": id, "type": "function", "function": map[string]any{"name": tool, "arguments": args}}}}}},
			"usage": map[string]int{"prompt_tokens": len(body) / 4, "completion_tokens": 80}})
	}
	resp = Response{Text: text, ToolCalls: []payload.ToolCall{{ID: id, Name: tool, ArgumentsHash: digest.String(args)}},
		Usage: &payload.Usage{InputTokens: len(body) / 4, OutputTokens: 80}, Body: reply}
	return body, resp
}

func (a *agentRun) user(text string) {
	if a.provider == payload.Anthropic {
		a.messages = append(a.messages, map[string]any{"role": "user", "content": []map[string]any{{"type": "text", "text": text}}})
		return
	}
	a.messages = append(a.messages, map[string]any{"role": "user", "content": text})
}

// recordAgent records n calls of an agent's run as the proxy records
// them (unattributed, with the body and the reply's body), and returns
// the transcript and each body as sent.
func recordAgent(tb testing.TB, p payload.Provider, n int, whole bool) ([]byte, [][]byte) {
	tb.Helper()
	var buf bytes.Buffer
	at := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	j := New(&buf, &Options{Session: "agent-" + string(p), Clock: func() time.Time { at = at.Add(1500 * time.Millisecond); return at }})
	j.wholeBody = whole
	a := newAgentRun(p, 41)
	var sent [][]byte
	for i := range n {
		body, resp := a.call()
		pd, err := j.Begin(ctx, Request{Call: fmt.Sprintf("turn-%03d", i+1), Body: body, Provider: p, Unattributed: true})
		if err != nil {
			tb.Fatal(err)
		}
		if err := pd.Finish(ctx, resp, nil); err != nil {
			tb.Fatal(err)
		}
		sent = append(sent, body)
	}
	if err := j.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes(), sent
}

// newContent is what a run sent that no call of it sent before: the
// bytes of its distinct segments (tool definitions, system blocks,
// message blocks, as payload reads them, the cache mark left out), each
// counted once, worked out from the bodies alone.
func newContent(t *testing.T, p payload.Provider, bodies [][]byte) int {
	t.Helper()
	seen := map[digest.Digest]bool{}
	total := 0
	for _, body := range bodies {
		r, err := payload.Read(body, p)
		if err != nil {
			t.Fatal(err)
		}
		parts, err := r.Parts()
		if err != nil {
			t.Fatal(err)
		}
		for _, part := range parts {
			var v any
			if err := json.Unmarshal(part.Raw, &v); err != nil {
				t.Fatal(err)
			}
			if m, ok := v.(map[string]any); ok {
				delete(m, wire.MarkKey(string(p)))
			}
			c, err := pjson.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if d := digest.Bytes(c); !seen[d] {
				seen[d] = true
				total += len(c)
			}
		}
	}
	return total
}

// A 200-turn agent session, each call resending its history, grows with
// what each call adds, not with the history: the transcript is at most
// twice the bytes of the run's new content plus 1 KB a call, every body
// is rebuilt byte for byte as kept (canonical, redacted), and Verify
// proves each against its digest. The same run kept whole is quadratic.
func TestAgentSessionStoresEachSegmentOnce(t *testing.T) {
	for _, p := range []payload.Provider{payload.Anthropic, payload.OpenAIChat} {
		t.Run(string(p), func(t *testing.T) {
			const calls = 200
			data, sent := recordAgent(t, p, calls, false)
			fresh := newContent(t, p, sent)
			sentBytes := 0
			for _, b := range sent {
				sentBytes += len(b)
			}
			whole, _ := recordAgent(t, p, calls, true)
			t.Logf("%s: %d calls, %d bytes sent, %d of them new; transcript %d bytes (%.2f× the new content), kept whole %d bytes",
				p, calls, sentBytes, fresh, len(data), float64(len(data))/float64(fresh), len(whole))
			if bytes.Contains(data, []byte("ghp_")) || !bytes.Contains(data, []byte("<redacted:github_token:")) {
				t.Error("a secret the run sent is in the transcript, or the run sent none")
			}
			if limit := 2*fresh + 1024*calls; len(data) > limit {
				t.Errorf("transcript %d bytes, over twice the new content plus 1 KB a call (%d)", len(data), limit)
			}
			if len(whole) < 10*len(data) {
				t.Errorf("kept whole %d bytes, segments %d: the measure does not tell them apart", len(whole), len(data))
			}
			rep, err := transcript.Verify(bytes.NewReader(data), nil)
			if err != nil || !rep.OK() || len(rep.Calls) != calls || rep.Unattributed != calls {
				t.Fatalf("verify: %v, %+v", err, rep.Problems)
			}
			got, err := transcript.Requests(data, rep)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range got {
				want, err := redact.JSON(sent[i])
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(s.Body, want) || s.Provider != p {
					t.Fatalf("call %d: body rebuilt (%s) is not the body as kept:\n%.300s\nwant\n%.300s", i+1, s.Provider, s.Body, want)
				}
			}
			// The transcript kept whole reads back the same bodies.
			wrep, err := transcript.Verify(bytes.NewReader(whole), nil)
			if err != nil || !wrep.OK() {
				t.Fatalf("verify whole: %v", err)
			}
			wgot, _ := transcript.Requests(whole, wrep)
			for i := range wgot {
				if !bytes.Equal(wgot[i].Body, got[i].Body) {
					t.Fatalf("call %d: the body kept whole and the body kept as segments differ", i+1)
				}
			}
		})
	}
}

// A line's body_segments name what is new by content and the rest by
// number or by a run of the previous call's list: past the first call,
// no request line restates the history.
func TestSegmentsLineGrowsWithNewContent(t *testing.T) {
	data, sent := recordAgent(t, payload.Anthropic, 60, false)
	n := 0
	for line := range bytes.Lines(data) {
		if !bytes.Contains(line, []byte(`"kind":"provider_call_request"`)) {
			continue
		}
		n++
		if n > 1 && len(line) > len(sent[n-1])-len(sent[n-2])+2048 {
			t.Errorf("request %d: its line is %d bytes for %d bytes more sent", n, len(line), len(sent[n-1])-len(sent[n-2]))
		}
	}
	if n != 60 {
		t.Fatalf("%d requests", n)
	}
}

// segmentsLines is a short run kept as segments, as lines to edit.
func segmentsLines(t *testing.T) []string {
	t.Helper()
	data, _ := recordAgent(t, payload.Anthropic, 8, false)
	return strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
}

// Each way body_segments can be wrong is its own rule, with the chain
// recomputed after the edit (as a forger would): a segment altered, a
// number no segment has, a run outside the previous list, a segment
// stored twice, a list that is not one, a body past the line limit.
func TestSegmentsRules(t *testing.T) {
	lines := segmentsLines(t)
	longest := 0
	for _, l := range lines {
		longest = max(longest, len(l))
	}
	// Line 2 is the first request (every piece new), 4 the second.
	if !strings.Contains(lines[3], `"body_segments":[[0,`) {
		t.Fatalf("the second request does not start with a run of the first: %.400s", lines[3])
	}
	edit := func(i int, f func(string) string) string {
		ls := append([]string(nil), lines...)
		ls[i] = f(ls[i])
		return rechain(strings.Join(ls, "") + "\n")
	}
	for _, tc := range []struct {
		name string
		data string
		o    *transcript.Options
		want manifest.Rule
	}{
		{"a segment altered", edit(1, func(l string) string { return strings.Replace(l, "careful coding agent", "careless coding agent", 1) }), nil, transcript.RuleBodyContent},
		{"a number no segment has", edit(3, func(l string) string { return strings.Replace(l, `"body_segments":[`, `"body_segments":[99999,`, 1) }), nil, transcript.RuleSegments},
		{"a run outside the previous list", edit(3, func(l string) string {
			return strings.Replace(l, `"body_segments":[[0,`, `"body_segments":[[0,99999],[0,`, 1)
		}), nil, transcript.RuleSegments},
		{"an empty run", edit(3, func(l string) string { return strings.Replace(l, `"body_segments":[`, `"body_segments":[[3,3],`, 1) }), nil, transcript.RuleSegments},
		{"a segment stored twice", edit(3, func(l string) string { return strings.Replace(l, `"body_segments":[`, `"body_segments":["{",`, 1) }), nil, transcript.RuleSegmentRepeated},
		{"an item of another type", edit(3, func(l string) string { return strings.Replace(l, `"body_segments":[`, `"body_segments":[true,`, 1) }), nil, transcript.RuleSegments},
		{"a number written otherwise", edit(3, func(l string) string { return strings.Replace(l, `"body_segments":[[0,`, `"body_segments":[[0.0,`, 1) }), nil, transcript.RuleSegments},
		{"an empty segment", edit(3, func(l string) string { return strings.Replace(l, `"body_segments":[`, `"body_segments":["",`, 1) }), nil, transcript.RuleSegments},
		{"not a list", edit(3, func(l string) string { return strings.Replace(l, `"body_segments":[`, `"body_segments":"[","x":[`, 1) }), nil, transcript.RuleSegments},
		{"the body kept twice", edit(1, func(l string) string {
			return strings.Replace(l, `"body_segments":[`, `"body":{},"body_segments":[`, 1)
		}), nil, transcript.RuleBodyTwice},
		{"a body past the line limit", strings.Join(lines, "") + "\n", &transcript.Options{MaxLineBytes: longest + 1}, transcript.RuleBodyTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := transcript.Verify(strings.NewReader(tc.data), tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK() {
				t.Fatal("verified")
			}
			var got []manifest.Rule
			for _, c := range rep.Calls {
				if c.Problem != nil {
					got = append(got, c.Problem.Rule)
					if errors.Is(c.Problem, tc.want) {
						return
					}
				}
			}
			t.Errorf("rules %q, want %q", got, tc.want)
		})
	}
}

// A transcript written before bodies were kept as segments (each
// unattributed body whole in request.body, one kept as text) still
// verifies, signed, and its bodies read back as before.
func TestBodyV1Transcript(t *testing.T) {
	data, err := os.ReadFile("testdata/body-v1/body-v1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	pub, err := os.ReadFile("testdata/body-v1/bodyv1.pub")
	if err != nil {
		t.Fatal(err)
	}
	key, err := note.NewVerifier(strings.TrimSpace(string(pub)))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := transcript.Verify(bytes.NewReader(data), &transcript.Options{Verifier: key})
	if err != nil || !rep.OK() || rep.Unattributed != 3 || rep.SignedBy == "" {
		t.Fatalf("verify: %v, %+v", err, rep.Problems)
	}
	if bytes.Contains(data, []byte("body_segments")) || !bytes.Contains(data, []byte(`"request":{"body":{`)) {
		t.Fatal("the fixture is not of the format before segments")
	}
	got, err := transcript.Requests(data, rep)
	if err != nil || len(got) != 3 {
		t.Fatalf("%d requests, %v", len(got), err)
	}
	for i, s := range got[:2] {
		if !bytes.Contains(s.Body, []byte(`"text":"where is main? <redacted:github_token:44>"`)) || s.Provider != payload.Anthropic {
			t.Errorf("call %d: body %s", i+1, s.Body)
		}
	}
	if !strings.HasPrefix(string(got[2].Body), "not json <redacted:github_token:") {
		t.Errorf("call 3: body %q", got[2].Body)
	}
	// An edit of an old body, the chain recomputed, still fails.
	bad := rechain(strings.Replace(string(data), "where is main?", "where is lib?", 1))
	if rep, _ := transcript.Verify(strings.NewReader(bad), nil); rep.OK() {
		t.Error("an edited body verified")
	}
}

// The writer cuts a block with its cache mark and the same block without
// it into the same pieces but the mark's own: wherever the mark stands
// among the block's members.
func TestMarkCuts(t *testing.T) {
	for _, tc := range [][2]string{
		{`{"cache_control":{"type":"ephemeral"},"text":"hi","type":"text"}`, `{"text":"hi","type":"text"}`},
		{`{"a":1,"cache_control":{},"z":2}`, `{"a":1,"z":2}`},
		{`{"a":1,"cache_control":{}}`, `{"a":1}`},
		{`{"cache_control":{}}`, `{}`},
	} {
		cut := func(s string) []string {
			var out []string
			cuts := markCuts([]int{0, len(s)}, []byte(s), 0, "cache_control")
			last := 0
			for _, c := range append(cuts[2:], len(s)) {
				out = append(out, s[last:c])
				last = c
			}
			return out
		}
		marked, plain := cut(tc[0]), cut(tc[1])
		if strings.Join(marked, "") != tc[0] || strings.Join(plain, "") != tc[1] {
			t.Fatalf("%q %q", marked, plain)
		}
		var rest []string
		for _, p := range marked {
			if !strings.Contains(p, "cache_control") {
				rest = append(rest, p)
			}
		}
		if strings.Join(rest, "|") != strings.Join(plain, "|") {
			t.Errorf("%s: marked %q, plain %q", tc[0], marked, plain)
		}
	}
}

// BenchmarkWriteAgentSession writes the 200 calls of an agent's run (as
// the proxy records them) kept whole, as transcripts before segments
// were, and kept as segments: the transcript's bytes and each call's
// cost (Begin and Finish), side by side in one run; to memory, and to a
// file (Open: each call's lines fsynced, as the proxy writes them).
func BenchmarkWriteAgentSession(b *testing.B) {
	const calls = 200
	a := newAgentRun(payload.Anthropic, 41)
	bodies, resps := make([][]byte, calls), make([]Response, calls)
	for i := range calls {
		bodies[i], resps[i] = a.call()
	}
	for _, sink := range []string{"memory", "file"} {
		for _, whole := range []bool{true, false} {
			name := sink + "/segments"
			if whole {
				name = sink + "/whole"
			}
			b.Run(name, func(b *testing.B) {
				var size int64
				for b.Loop() {
					var j *Journal
					w := &countingWriter{}
					path := b.TempDir() + "/run.jsonl"
					if sink == "memory" {
						j = New(w, &Options{Session: "bench"})
					} else {
						var err error
						if j, err = Open(path, &Options{Session: "bench"}); err != nil {
							b.Fatal(err)
						}
					}
					j.wholeBody = whole
					for i := range calls {
						p, err := j.Begin(ctx, Request{Call: "c", Body: bodies[i], Provider: payload.Anthropic, Unattributed: true})
						if err != nil {
							b.Fatal(err)
						}
						if err := p.Finish(ctx, resps[i], nil); err != nil {
							b.Fatal(err)
						}
					}
					j.Close()
					size = w.n
					if sink == "file" {
						st, err := os.Stat(path)
						if err != nil {
							b.Fatal(err)
						}
						size = st.Size()
					}
				}
				b.ReportMetric(float64(size), "transcript-bytes")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*calls), "ns/call")
			})
		}
	}
}

// BenchmarkVerifyAgentSession verifies the same run's transcript, kept
// whole and kept as segments: joining each body from its pieces against
// reading it whole.
func BenchmarkVerifyAgentSession(b *testing.B) {
	for _, whole := range []bool{true, false} {
		data, _ := recordAgent(b, payload.Anthropic, 200, whole)
		name := "segments"
		if whole {
			name = "whole"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if rep, err := transcript.Verify(bytes.NewReader(data), nil); err != nil || !rep.OK() {
					b.Fatal(err)
				}
			}
		})
	}
}

type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// A proof of one call of a run kept as segments carries its request line
// as it is, which holds only what the call added; the line's
// body_content_hash binds the whole body, which the transcript joins
// (Requests) and which hashes to it. The proof checks with the key.
func TestSegmentsProof(t *testing.T) {
	skey, vkey, err := note.GenerateKey(nil, "agent")
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := note.NewSigner(skey)
	verifier, _ := note.NewVerifier(vkey)
	var buf bytes.Buffer
	j := New(&buf, &Options{Session: "agent", Signer: signer, CheckpointEvery: 10})
	a := newAgentRun(payload.Anthropic, 3)
	for i := range 30 {
		body, resp := a.call()
		if _, err := j.Call(ctx, ModelFunc(func(context.Context, Request) (Response, error) { return resp, nil }),
			Request{Call: fmt.Sprintf("turn-%d", i), Body: body, Provider: payload.Anthropic, Unattributed: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	proof, rep, err := transcript.Prove(bytes.NewReader(buf.Bytes()), "turn-25", &transcript.Options{Verifier: verifier})
	if err != nil || proof == nil {
		t.Fatalf("prove: %v %+v", err, rep.Problems)
	}
	if prep, err := transcript.CheckProof(bytes.NewReader(proof), verifier, nil); err != nil || !prep.OK() {
		t.Fatalf("check: %v %+v", err, prep)
	}
	sent, err := transcript.Requests(buf.Bytes(), rep)
	if err != nil {
		t.Fatal(err)
	}
	body := sent[25].Body
	line := bytes.Split(proof, []byte("\n"))[1]
	if !bytes.Contains(line, []byte(`"body_content_hash":"`+digest.Bytes(body).String()+`"`)) {
		t.Fatal("the proof's request does not name the joined body's digest")
	}
	if len(line) > len(body)/4 {
		t.Errorf("the proof's request line is %d bytes for a %d-byte body: it restates the history", len(line), len(body))
	}
}

// lossySink is a sink whose append fails once: having written the lines
// (a COMMIT whose answer was lost), or not.
type lossySink struct {
	buf     bytes.Buffer
	t       Tail
	failAt  int // the append (from 1) that fails
	written bool
	n       int
}

func (s *lossySink) Append(_ context.Context, build func(Tail) ([]byte, error)) error {
	s.n++
	lines, err := build(s.t)
	if err != nil || lines == nil {
		return err
	}
	if s.n == s.failAt && !s.written {
		return errors.New("lost before the write")
	}
	s.buf.Write(lines)
	s.t = tailAfter(s.t, lines)
	if s.n == s.failAt {
		return errors.New("written, but the answer was lost")
	}
	return nil
}

func (s *lossySink) Close() error { return nil }

// A request whose append fails may or may not be in the chain: the next
// append tells which from the chain's tail, so the session's segments
// stay numbered as the chain numbers them either way, and every later
// body joins and verifies.
func TestSegmentsAfterAFailedAppend(t *testing.T) {
	for _, written := range []bool{false, true} {
		s := &lossySink{failAt: 7, written: written} // the 4th request (1: open+request, then outcome, request, ...)
		j := NewSink(s, &Options{Session: "agent"})
		a := newAgentRun(payload.Anthropic, 5)
		var kept [][]byte
		failed := 0
		for i := range 12 {
			body, resp := a.call()
			p, err := j.Begin(ctx, Request{Call: fmt.Sprintf("turn-%d", i), Body: body, Provider: payload.Anthropic, Unattributed: true})
			if err != nil {
				failed++
				if written {
					kept = append(kept, body) // in the chain, unanswered
				}
				continue
			}
			if err := p.Finish(ctx, resp, nil); err != nil {
				t.Fatal(err)
			}
			kept = append(kept, body)
		}
		j.Close()
		if failed != 1 {
			t.Fatalf("written %v: %d appends failed", written, failed)
		}
		rep, err := transcript.Verify(bytes.NewReader(s.buf.Bytes()), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range rep.Calls {
			if c.Problem != nil && !(written && c.Problem.Rule == transcript.RuleUnanswered) {
				t.Errorf("written %v: call %s: %v", written, c.Call, c.Problem)
			}
		}
		got, err := transcript.Requests(s.buf.Bytes(), rep)
		if err != nil || len(got) != len(kept) {
			t.Fatalf("written %v: %d requests, %v", written, len(got), err)
		}
		for i := range got {
			if want, _ := redact.JSON(kept[i]); !bytes.Equal(got[i].Body, want) {
				t.Errorf("written %v: call %d does not join to its body", written, i)
			}
		}
	}
}

// Calls begun at once from many goroutines on one journal each get the
// list their line needs against the lines before it in the chain, so
// every body joins whatever order they were written in.
func TestSegmentsConcurrent(t *testing.T) {
	var buf bytes.Buffer
	j := New(&buf, &Options{Session: "agents"})
	type call struct {
		name string
		body []byte
		resp Response
	}
	var runs [4][]call
	for g := range runs {
		a := newAgentRun(payload.OpenAIChat, int64(g))
		for i := range 15 {
			body, resp := a.call()
			runs[g] = append(runs[g], call{fmt.Sprintf("g%d-%d", g, i), body, resp})
		}
	}
	done := make(chan error)
	for g := range runs {
		go func() {
			for _, c := range runs[g] {
				p, err := j.Begin(ctx, Request{Call: c.name, Body: c.body, Unattributed: true})
				if err == nil {
					err = p.Finish(ctx, c.resp, nil)
				}
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range runs {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	rep, err := transcript.Verify(bytes.NewReader(buf.Bytes()), nil)
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %v %+v", err, rep.Problems)
	}
	got, _ := transcript.Requests(buf.Bytes(), rep)
	for _, s := range got {
		var g, i int
		fmt.Sscanf(s.Report.Call, "g%d-%d", &g, &i)
		if want, _ := redact.JSON(runs[g][i].body); !bytes.Equal(s.Body, want) {
			t.Errorf("call %s does not join to its body", s.Report.Call)
		}
	}
}

// A journal that keeps bodies raw (KeepRaw) keeps their pieces raw: the
// joined body is the canonical body sent, secrets and all, and it
// verifies against the digest of its redacted form, as a whole body does.
func TestSegmentsKeepRaw(t *testing.T) {
	var buf bytes.Buffer
	j := New(&buf, &Options{Session: "raw", KeepRaw: true})
	a := newAgentRun(payload.Anthropic, 9)
	var sent [][]byte
	for i := range 12 {
		body, resp := a.call()
		if _, err := j.Call(ctx, ModelFunc(func(context.Context, Request) (Response, error) { return resp, nil }),
			Request{Call: fmt.Sprint(i), Body: body, Provider: payload.Anthropic, Unattributed: true}); err != nil {
			t.Fatal(err)
		}
		sent = append(sent, body)
	}
	j.Close()
	if !bytes.Contains(buf.Bytes(), []byte("ghp_")) {
		t.Fatal("no secret kept raw: the run has none to test with")
	}
	rep, err := transcript.Verify(bytes.NewReader(buf.Bytes()), nil)
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %v %+v", err, rep.Problems)
	}
	got, _ := transcript.Requests(buf.Bytes(), rep)
	for i, s := range got {
		if want, _ := pjson.Encode(sent[i]); !bytes.Equal(s.Body, want) {
			t.Errorf("call %d: not the canonical body sent", i)
		}
	}
}

// A file cut back under the journal (copytruncate) starts its session
// again, and its segments with it: the new session names no piece the
// file no longer holds.
func TestSegmentsFileCutBack(t *testing.T) {
	path := t.TempDir() + "/run.jsonl"
	j, err := Open(path, &Options{Session: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	a := newAgentRun(payload.Anthropic, 11)
	for i := range 8 {
		if i == 4 {
			if err := os.Truncate(path, 0); err != nil {
				t.Fatal(err)
			}
		}
		body, resp := a.call()
		if _, err := j.Call(ctx, ModelFunc(func(context.Context, Request) (Response, error) { return resp, nil }),
			Request{Call: fmt.Sprint(i), Body: body, Provider: payload.Anthropic, Unattributed: true}); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := transcript.Verify(bytes.NewReader(data), nil)
	if err != nil || !rep.OK() || len(rep.Calls) != 4 {
		t.Fatalf("verify: %v, %d calls, %+v", err, len(rep.Calls), rep.Problems)
	}
	if got, _ := transcript.Requests(data, rep); len(got) != 4 || got[0].Body == nil {
		t.Fatalf("requests %+v", got)
	}
}

// Every reader of a request body goes through transcript.Requests (cache,
// report, the CLI): no Go file outside this package's writer and
// transcript's verifier and Requests names body_segments, so none reads
// the format itself.
func TestOneReaderOfSegments(t *testing.T) {
	allowed := map[string]bool{
		filepath.Join("..", "journal", "segments.go"):    true, // the writer
		filepath.Join("..", "journal", "write.go"):       true,
		filepath.Join("..", "transcript", "segments.go"): true, // the reader
		filepath.Join("..", "transcript", "verify.go"):   true,
		filepath.Join("..", "transcript", "sent.go"):     true,
		filepath.Join("..", "transcript", "rules.go"):    true,
	}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		if allowed[path] {
			return nil
		}
		if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte("body_segments")) {
			t.Errorf("%s reads body_segments: take the body from transcript.Requests", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A body whose pieces, quoted, would make a line past the limit while the
// body itself fits is kept whole, as before segments, and stores no
// piece: the calls after it still join.
func TestSegmentsTooLongQuotedIsKeptWhole(t *testing.T) {
	var buf bytes.Buffer
	j := New(&buf, &Options{Session: "s", MaxLineBytes: 8 << 10})
	quotes := `{"messages":[{"content":"` + strings.Repeat(`\"q\"`, 1100) + `","role":"user"}],"model":"m"}`
	bodies := []string{quotes, `{"messages":[{"content":"hi","role":"user"}],"model":"m"}`,
		`{"messages":[{"content":"hi","role":"user"},{"content":"yes","role":"assistant"}],"model":"m"}`}
	for i, b := range bodies {
		if _, err := j.Call(ctx, echo, Request{Call: fmt.Sprint(i), Body: []byte(b), Unattributed: true}); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	lines := strings.Split(buf.String(), "\n")
	if !strings.Contains(lines[1], `"request":{"body":{`) || !strings.Contains(lines[3], `"body_segments":[`) {
		t.Fatalf("transcript:\n%s", buf.String())
	}
	rep, err := transcript.Verify(bytes.NewReader(buf.Bytes()), &transcript.Options{MaxLineBytes: 8 << 10})
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %v %+v", err, rep.Problems)
	}
	got, _ := transcript.Requests(buf.Bytes(), rep)
	for i, s := range got {
		if want, _ := redact.JSON([]byte(bodies[i])); !bytes.Equal(s.Body, want) {
			t.Errorf("call %d: %s", i, s.Body)
		}
	}
}
