package journal

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/payload"
)

// retainOutcome encodes an outcome once and keeps, as the encoding twice
// did, its own bytes when redaction changes nothing in them, else the
// redacted canonical encoding; the hash is over the redacted one always.
func TestRetainOutcomeIsRetainComparedToTheCanonical(t *testing.T) {
	const token = "ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"
	outcomes := []string{
		`{"text":"hello \u003cb\u003e","usage":{"input_tokens":1,"output_tokens":2},"status":200}`,
		`{"text":"the token ` + token + `","stop_reason":"end_turn"}`,
		`{"text":"x","tool_calls":[{"id":"t1","name":"n","arguments_hash":"blake3:00"}]}`,
		`{"text":"x","api_key":"[redacted]"}`,
		`{"text":"x","access_token":"kept?"}`,
		`{"message":"see https://user:pw@example.com/x?a=1"}`,
		`{"b":1,"a":[1.0,{"Authorization":{"k":"v"}}]}`,
	}
	for _, keepRaw := range []bool{false, true} {
		j := &Journal{keepRaw: keepRaw}
		for _, o := range outcomes {
			// What Finish did: retain, then the canonical encoding compared.
			want, wantHash, err := j.retain([]byte(o))
			if err != nil {
				t.Fatal(err)
			}
			if canonical, err := pjson.Encode([]byte(o)); err == nil && bytes.Equal(canonical, want) {
				want = []byte(o)
			}
			got, hash, err := j.retainOutcome([]byte(o))
			if err != nil || !bytes.Equal(got, want) || hash != wantHash {
				t.Errorf("keepRaw %v, %s:\n got %s %s %v\nwant %s %s", keepRaw, o, got, hash, err, want, wantHash)
			}
		}
	}
	for key, want := range map[string]bool{"api_key": true, "Authorization": true, "session-token": true, "input_tokens": false, "name": false, "text": false} {
		if sensitiveKey(key) != want {
			t.Errorf("sensitiveKey(%q) = %v", key, !want)
		}
	}
}

// marshalResponse writes what json.Marshal writes, whatever the text.
func TestMarshalResponseIsJSONMarshal(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	texts := []string{"", "plain", "a\nb\t\"c\\d", "<b> & </b>", "x\u2028y\u2029z", "héllo 世界 🙂", string(all), "\xff\xfe bad", strings.Repeat("long <text> ", 1000)}
	for _, text := range texts {
		for _, r := range []Response{
			{Text: text},
			{Text: text, StopReason: "end<turn>", ToolCalls: []payload.ToolCall{{ID: "t&1", Name: "n"}}, Usage: &payload.Usage{InputTokens: 1}, ID: "msg", Model: "m", Status: 200, Body: []byte("body")},
		} {
			want, _ := json.Marshal(r)
			if got, err := marshalResponse(r); err != nil || !bytes.Equal(got, want) {
				t.Errorf("%q:\n got %s %v\nwant %s", text, got, err, want)
			}
		}
	}
}
