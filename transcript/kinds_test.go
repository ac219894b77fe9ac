package transcript_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/transcript"
)

// splitLines is a transcript's lines, without their newlines.
func splitLines(data []byte) [][]byte {
	return bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
}

// Every Harn event a verifier reads decodes to its typed members; other
// events decode with no body.
func TestDecodeHarnEvents(t *testing.T) {
	files, err := filepath.Glob("../journal/testdata/harn/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatal("no Harn transcripts", err)
	}
	seen := map[string]int{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, raw := range splitLines(data) {
			l, err := transcript.Decode(raw)
			if err != nil {
				t.Fatalf("%s:%d: %v", f, i+1, err)
			}
			seen[l.Kind]++
			switch b := l.Body.(type) {
			case *transcript.SystemPrompt:
				if b.Content == "" || b.ContentHash == (digest.Digest{}) {
					t.Errorf("%s:%d: %+v", f, i+1, b)
				}
			case *transcript.Retained:
				if len(b.Value) == 0 || b.ContentHash == (digest.Digest{}) {
					t.Errorf("%s:%d: %s %+v", f, i+1, l.Kind, b)
				}
			case *transcript.Request:
				if l.Call == "" || b.ManifestHash == (digest.Digest{}) || len(b.Receipt) == 0 || b.Request != nil {
					t.Errorf("%s:%d: request %q %+v", f, i+1, l.Call, b)
				}
			case nil:
				t.Errorf("%s:%d: %s decodes to no body", f, i+1, l.Kind)
			}
		}
	}
	for _, k := range []string{"system_prompt", "context_manifest", "tool_schemas", "served_message", "provider_call_request"} {
		if seen[k] == 0 {
			t.Errorf("no Harn %s decoded", k)
		}
	}
	l, err := transcript.Decode([]byte(`{"type":"agent_turn","timestamp":"2026-01-01T00:00:00Z"}`))
	if err != nil || l.Kind != "agent_turn" || l.Body != nil {
		t.Errorf("another Harn event: %+v, %v", l, err)
	}
}

// A line whose kind's members are missing or of the wrong type is the
// rule Verify names for them, never a panic or a zero value.
func TestDecodeHostileMembers(t *testing.T) {
	const head = `{"prev":"blake3:0000000000000000000000000000000000000000000000000000000000000000","seq":1,"at":"2026-01-02T03:04:05Z",`
	const h = `"blake3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"`
	for _, tc := range []struct {
		rest string
		want manifest.Rule
	}{
		{`"kind":"journal_open"}`, transcript.RuleSessionID},
		{`"kind":"journal_open","session":""}`, transcript.RuleSessionID},
		{`"kind":"journal_open","session":"s","follows":7}`, transcript.RuleFollows},
		{`"kind":"journal_close","session":"s","calls":"2"}`, transcript.RuleCloseCount},
		{`"kind":"journal_close","calls":2}`, transcript.RuleSessionNotOpen},
		{`"kind":"system_prompt","content":7,"content_hash":` + h + `}`, transcript.RuleContentHash},
		{`"kind":"system_prompt","content":"x","content_hash":"blake3:zz"}`, transcript.RuleContentHash},
		{`"kind":"context_manifest","content_hash":` + h + `}`, transcript.RuleContentHash},
		{`"kind":"provider_call_request","session":"s","call":"c","served_context":[],"request":{}}`, transcript.RuleReceipt},
		{`"kind":"provider_call_request","session":"s","call":"c","served_context":{"manifest_content_hash":3},"request":{}}`, transcript.RuleReceipt},
		{`"kind":"provider_call_request","session":"s","call":"c","served_context":null,"request":"body"}`, transcript.RuleRequest},
		{`"kind":"provider_call_request","session":"s","call":1,"served_context":null,"request":{}}`, transcript.RuleRequest},
		{`"kind":"provider_call_request","call":"c","served_context":null,"request":{}}`, transcript.RuleSessionNotOpen},
		{`"kind":"provider_call_response","session":"s","call":"c","request_seq":"1","request_hash":` + h + `,"response":{},"response_content_hash":` + h + `}`, transcript.RuleOutcome},
		{`"kind":"provider_call_response","session":"s","call":"c","request_seq":1,"request_hash":"x","response":{},"response_content_hash":` + h + `}`, transcript.RuleOutcome},
		{`"kind":"provider_call_response","session":"s","call":"c","request_seq":1,"request_hash":` + h + `,"response":{}}`, transcript.RuleOutcomeContentHash},
		{`"kind":"provider_call_response","session":"s","call":"c","request_seq":1,"request_hash":` + h + `,"response":{},"response_content_hash":` + h + `,"body":{}}`, transcript.RuleOutcomeContentHash},
		{`"kind":"provider_call_error","session":"s","call":"c","request_seq":1,"request_hash":` + h + `,"error":"down","error_content_hash":` + h + `}`, transcript.RuleOutcomeContentHash},
		{`"kind":"provider_call_attempt","session":"s","call":"c","request_seq":1,"request_hash":` + h + `,"attempt":1.5,"failure":{}}`, transcript.RuleOutcome},
		{`"kind":"provider_call_attempt","session":"s","request_seq":1,"request_hash":` + h + `,"attempt":1,"failure":{}}`, transcript.RuleOutcome},
		{`"kind":"provider_call_refused","session":"s","reason":"Bad Reason","message":"m","body_bytes":1,"body_content_hash":` + h + `}`, transcript.RuleRefusal},
		{`"kind":"provider_call_refused","session":"s","reason":"r","message":"m","body_bytes":-1,"body_content_hash":` + h + `}`, transcript.RuleRefusal},
		{`"kind":"provider_call_refused","session":"s","reason":"r","message":"m","body_bytes":1,"body_content_hash":` + h + `,"call":false}`, transcript.RuleRefusal},
		{`"kind":"journal_checkpoint","session":"s"}`, transcript.RuleCheckpointNote},
		{`"kind":"journal_checkpoint","note":"n"}`, transcript.RuleCheckpointSession},
	} {
		line := head + tc.rest
		l, err := transcript.Decode([]byte(line))
		var re *manifest.RuleError
		if !errors.As(err, &re) || re.Rule != tc.want {
			t.Errorf("Decode(%s) = %+v, %v; want rule %s", tc.rest, l, err, tc.want)
		}
	}
	for _, tc := range []struct {
		line string
		want manifest.Rule
	}{
		{`{"type":3}`, transcript.RuleKind},
		{`{"type":"system_prompt","content":"x"}`, transcript.RuleContentHash},
		{`{"type":"tool_schemas","content_hash":"blake3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"}`, transcript.RuleContentHash},
		{`{"type":"provider_call_request","call_id":"c","served_context":null}`, transcript.RuleReceipt},
		{`{"type":"provider_call_request","served_context":{}}`, transcript.RuleRequest},
	} {
		_, err := transcript.Decode([]byte(tc.line))
		var re *manifest.RuleError
		if !errors.As(err, &re) || re.Rule != tc.want {
			t.Errorf("Decode(%s) = %v; want rule %s", tc.line, err, tc.want)
		}
	}
}

// A promptloom line that also has a "type" member is still a promptloom
// line: its request must have its session and its request object.
func TestDecodePromptloomLineWithType(t *testing.T) {
	const line = `{"prev":"blake3:0000000000000000000000000000000000000000000000000000000000000000","seq":1,"kind":"provider_call_request","at":"2026-01-02T03:04:05Z","type":"x","call":"c","served_context":null}`
	_, err := transcript.Decode([]byte(line))
	var re *manifest.RuleError
	if !errors.As(err, &re) || re.Rule != transcript.RuleSessionNotOpen {
		t.Errorf("Decode = %v, want rule %s", err, transcript.RuleSessionNotOpen)
	}
}
