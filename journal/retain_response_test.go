package journal

import (
	"strings"
	"testing"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/payload"
)

// retainResponse writes and hashes a response as retainOutcome does,
// whatever its text holds: a secret, escapes, HTML characters, a text
// that is short or long, raw or redacted.
func TestRetainResponseIsRetainOutcome(t *testing.T) {
	long := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 200)
	secret := "ghp_" + strings.Repeat("Z9y8X7w6", 5)
	for _, text := range []string{
		"short",
		long,
		long + "<b>&amp;</b> \u2028 \x01 \t \"quoted\" \\ é 😀",
		long + " my token is " + secret,
		long + ` "text":"" `,
		long + " \x01 \t \"quoted\" \\ é 😀 \u007f",
		long + " \u2028 alone",
		long + " \u2029 alone",
	} {
		for _, keepRaw := range []bool{false, true} {
			j := &Journal{keepRaw: keepRaw}
			resp := Response{Text: text, StopReason: "text", ID: "msg_1", Model: "m", Status: 200,
				ToolCalls: []payload.ToolCall{{ID: "t1", Name: "read_file", ArgumentsHash: digest.Of("{}")}}, Usage: &payload.Usage{InputTokens: 3, OutputTokens: 4}}
			outcome, err := marshalResponse(resp)
			if err != nil {
				t.Fatal(err)
			}
			want, wantHash, err := j.retainOutcome(outcome)
			if err != nil {
				t.Fatal(err)
			}
			got, gotHash, err := j.retainResponse(resp, outcome)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) || gotHash != wantHash {
				t.Errorf("keepRaw %v, text %.40q…:\n got %.200s %s\nwant %.200s %s", keepRaw, text[max(0, len(text)-40):], got, gotHash, want, wantHash)
			}
		}
	}
}
