package payload

import (
	"strings"
	"testing"
)

// anthropicStreamBody is a 1 MB Anthropic stream of about 1,000 text
// deltas, as BenchmarkTransport serves it.
func anthropicStreamBody() []byte {
	var b strings.Builder
	ev := func(name, data string) { b.WriteString("event: " + name + "\ndata: " + data + "\n\n") }
	ev("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}`)
	ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	chunk := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20)
	for b.Len() < 1<<20 {
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`+chunk+`"}}`)
	}
	ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5000}}`)
	ev("message_stop", `{"type":"message_stop"}`)
	return []byte(b.String())
}

// BenchmarkSummarize is the parse of a 1 MB stream (go test -bench
// Summarize -benchmem ./payload).
func BenchmarkSummarize(b *testing.B) {
	body := anthropicStreamBody()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if r, whole := Summarize(Anthropic, body, true); !whole || r.StopReason != "end_turn" {
			b.Fatal(r, whole)
		}
	}
}
