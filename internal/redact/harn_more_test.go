package redact

// More of Harn's redaction tests, ported. Each names its Harn test and
// file of github.com/burin-labs/harn. Harn mostly asserts "contains" and
// "does not contain"; where one match replaces one secret the exact output
// follows from that, and is checked. Tests of audit events check the
// matches those events count, in the output.

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// crates/harn-vm/src/redact/patterns.rs:
// audit_sink_receives_one_event_per_matching_pattern (two aws_access_key
// matches, one github_token).
func TestHarnAuditSinkReceivesOneEventPerMatchingPattern(t *testing.T) {
	harnCases(t, []struct{ in, want string }{{
		"AKIAABCDEFGHIJKLMNOP AKIA0000000000000000 ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"<redacted:aws_access_key:20> <redacted:aws_access_key:20> <redacted:github_token:40>",
	}})
}

// crates/harn-vm/src/redact/patterns.rs:
// audit_ring_records_events_even_without_a_sink (one aws_access_key match).
func TestHarnAuditRingRecordsEventsEvenWithoutASink(t *testing.T) {
	harnCases(t, []struct{ in, want string }{{harnAWSKey, "<redacted:aws_access_key:20>"}})
}

// conformance/tests/stdlib/token_redaction_default_patterns.harn: each
// default provider's token becomes its named placeholder.
func TestHarnTokenRedactionDefaultPatterns(t *testing.T) {
	for _, c := range []struct{ in, name, raw string }{
		{"auth=eyJabcd1234.eyJefghPayload.signature_pad_extra now", "jwt", "eyJabcd1234.eyJefghPayload.signature_pad_extra"},
		{"header ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa trailer", "github_token", "ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"},
		{"value github_pat_aaaaaaaaaaaaaaaaaaaaaa end", "github_pat_fine", "github_pat_aaaaaaaaaaaaaaaaaaaaaa"},
		{"slack=xoxb-1234567890-abcdefABC ok", "slack_token", "xoxb-1234567890-abcdefABC"},
		{"creds AKIAABCDEFGHIJKLMNOP go", "aws_access_key", "AKIAABCDEFGHIJKLMNOP"},
		{"Authorization: Bearer abcdef123456_extra-pad", "bearer_token", "Bearer abcdef123456_extra-pad"},
	} {
		want := strings.Replace(c.in, c.raw, "<redacted:"+c.name+":"+strconv.Itoa(len(c.raw))+">", 1)
		if got := String(c.in); got != want {
			t.Errorf("%s: String(%q)\n got %q\nwant %q", c.name, c.in, got, want)
		}
	}
}

// conformance/tests/stdlib/token_redaction_tool_passthrough.harn: a
// "Bearer ghp_..." header is attributed to github_token, which runs first;
// bearer_token then finds a placeholder, not a token.
func TestHarnTokenRedactionToolPassthrough(t *testing.T) {
	token := "ghp_" + "1234567890abcdefghijklmnopqrstuvwxyz"
	harnCases(t, []struct{ in, want string }{{
		"Authorization: Bearer " + token,
		"Authorization: Bearer <redacted:github_token:40>",
	}})
}

// The fake secrets of crates/harn-vm/src/redact/manifest.rs's tests.
var (
	manifestAWS       = "AKIA" + "ABCDEFGHIJKLMNOP"
	manifestGitHub    = "ghp_" + strings.Repeat("a", 36)
	manifestStripe    = strings.Join([]string{"sk", "live"}, "_") + "_abcdefghijklmnopqrstuvwxyz"
	manifestKeyBlock  = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----"
	manifestKeySecret = "b3BlbnNzaC1rZXktdjEAAAAA"
)

// dirtyTranscript is manifest.rs's dirty_transcript: a tool_use input with a
// credential and a tool_result leaking several provider secrets.
func dirtyTranscript(t *testing.T) []byte {
	t.Helper()
	v := map[string]any{
		"_type": "transcript",
		"messages": []any{
			map[string]any{"role": "system", "content": "You are a coding agent. Commit is 903e58f1b0a4c2d3e4f5061728394a5b6c7d8e9f."},
			map[string]any{"role": "user", "content": "deploy with AWS creds"},
			map[string]any{"role": "assistant", "content": []any{
				map[string]any{"type": "text", "text": "Running the deploy."},
				map[string]any{"type": "tool_use", "id": "toolu_01", "name": "run_command", "input": map[string]any{
					"command": "aws deploy", "api_key": manifestAWS, "env": map[string]any{"AWS_ACCESS_KEY_ID": manifestAWS},
				}},
			}},
			map[string]any{"role": "tool", "content": []any{
				map[string]any{"type": "tool_result", "tool_use_id": "toolu_01", "content": "auth: Bearer abcDEF123_-longenoughtoken\ngithub token " +
					manifestGitHub + "\nstripe " + manifestStripe + "\n" + manifestKeyBlock + "\nrequest_id 550e8400-e29b-41d4-a716-446655440000"},
			}},
		},
		"summary": "deployed ok",
	}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func mustJSON(t *testing.T, raw []byte) []byte {
	t.Helper()
	out, err := JSON(raw)
	if err != nil {
		t.Fatalf("JSON: %v", err)
	}
	return out
}

// unredactedSecret is Harn's find_unredacted_secret: the path of the first
// string, objects walked in key order, that redaction would still change.
func unredactedSecret(t *testing.T, raw []byte) (path string, found bool) {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var walk func(v any, path string) (string, bool)
	walk = func(v any, path string) (string, bool) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				if p, ok := walk(v[k], path+"."+k); ok {
					return p, true
				}
			}
		case []any:
			for i, x := range v {
				if p, ok := walk(x, path+"["+strconv.Itoa(i)+"]"); ok {
					return p, true
				}
			}
		case string:
			if String(v) != v {
				return path, true
			}
		}
		return "", false
	}
	return walk(v, "$")
}

// crates/harn-vm/src/redact/manifest.rs:
// redact_json_manifest_scrubs_every_secret_and_records_paths. No secret is
// left; the sensitive api_key field is replaced wholesale and the
// tool_result body carries named placeholders.
func TestHarnRedactJSONManifestScrubsEverySecretAndRecordsPaths(t *testing.T) {
	out := string(mustJSON(t, dirtyTranscript(t)))
	for _, secret := range []string{manifestAWS, manifestGitHub, manifestStripe, manifestKeySecret} {
		if strings.Contains(out, secret) {
			t.Errorf("secret %q leaked into %s", secret, out)
		}
	}
	if !strings.Contains(out, `"api_key":"[redacted]"`) {
		t.Errorf("api_key not replaced wholesale: %s", out)
	}
	if !strings.Contains(out, `"content":"auth: <redacted:`) {
		t.Errorf("tool_result not scrubbed by pattern: %s", out)
	}
}

// crates/harn-vm/src/redact/manifest.rs:
// redact_json_manifest_preserves_non_secret_content.
func TestHarnRedactJSONManifestPreservesNonSecretContent(t *testing.T) {
	out := string(mustJSON(t, dirtyTranscript(t)))
	for _, kept := range []string{"You are a coding agent", "deployed ok", "903e58f1b0a4c2d3e4f5061728394a5b6c7d8e9f",
		"550e8400-e29b-41d4-a716-446655440000", "Running the deploy."} {
		if !strings.Contains(out, kept) {
			t.Errorf("%q lost from %s", kept, out)
		}
	}
}

// crates/harn-vm/src/redact/manifest.rs:
// redact_json_manifest_is_idempotent_on_output.
func TestHarnRedactJSONManifestIsIdempotentOnOutput(t *testing.T) {
	once := mustJSON(t, dirtyTranscript(t))
	if twice := mustJSON(t, once); string(twice) != string(once) {
		t.Errorf("second pass changed the output\nonce  %s\ntwice %s", once, twice)
	}
}

// crates/harn-vm/src/redact/manifest.rs:
// find_unredacted_secret_flags_raw_then_clears_after_redaction.
func TestHarnFindUnredactedSecretFlagsRawThenClearsAfterRedaction(t *testing.T) {
	raw := dirtyTranscript(t)
	if path, found := unredactedSecret(t, raw); !found || !strings.HasPrefix(path, "$.") {
		t.Errorf("raw transcript: found %v at %q", found, path)
	}
	if path, found := unredactedSecret(t, mustJSON(t, raw)); found {
		t.Errorf("a secret remains after redaction at %s", path)
	}
}

// crates/harn-vm/src/redact/manifest.rs:
// find_unredacted_secret_ignores_benign_ids.
func TestHarnFindUnredactedSecretIgnoresBenignIDs(t *testing.T) {
	benign := []byte(`{"git_sha":"903e58f1b0a4c2d3e4f5061728394a5b6c7d8e9f","uuid":"550e8400-e29b-41d4-a716-446655440000",` +
		`"note":"kept 12 messages, added 3, then replied in text","max_tokens":"max_tokens=200"}`)
	if path, found := unredactedSecret(t, benign); found {
		t.Errorf("benign value flagged at %s", path)
	}
}

// The fixtures of crates/harn-vm/tests/harn_vm/redaction_fixtures.rs.
var (
	fixtureOpenAI = "sk-" + "abcdefghijklmnopqrstuvwxyz0123456789ABCD"
	fixtureBearer = "Bearer " + "abcDEF123_-+/=longenoughtoken"
	fixtureURL    = "https://user:pw@api.example.com/v1?api_key=hideme"
	fixtureAI     = "hf_" + strings.Repeat("a", 24) + " csk-" + strings.Repeat("b", 48) + " tgp_v1_" + strings.Repeat("c", 32) +
		" AIza" + strings.Repeat("D", 35)
)

// fixtureSecrets is the file's fixture_secrets.
func fixtureSecrets() []string {
	return append(strings.Fields(fixtureAI), manifestAWS, manifestGitHub, fixtureOpenAI, manifestStripe, fixtureBearer, fixtureURL)
}

// assertRedacted is the file's assert_redacted: no fixture secret, and a
// placeholder somewhere.
func assertRedacted(t *testing.T, out string) {
	t.Helper()
	for _, secret := range fixtureSecrets() {
		if strings.Contains(out, secret) {
			t.Errorf("secret %q leaked into %s", secret, out)
		}
	}
	if !strings.Contains(out, "[redacted]") {
		t.Errorf("no [redacted] placeholder in %s", out)
	}
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// crates/harn-vm/tests/harn_vm/redaction_fixtures.rs:
// receipt_redact_in_place_scrubs_every_known_secret_shape: the receipt's
// model calls and metadata, redacted as JSON; its identity fields survive.
func TestHarnReceiptRedactInPlaceScrubsEveryKnownSecretShape(t *testing.T) {
	out := string(mustJSON(t, marshal(t, map[string]any{
		"id": "receipt_01JZFIXTURE", "persona": "merge_captain", "trace_id": "trace_01JZFIXTURE",
		"model_calls": []any{map[string]any{
			"step":          "classify",
			"request_url":   fixtureURL + "&page=2",
			"authorization": fixtureBearer,
			"raw_response":  "token leak: " + manifestGitHub,
		}},
		"metadata": map[string]any{
			"stripe_secret":    manifestStripe,
			"audit_note":       "found " + manifestAWS + " in env",
			"ai_provider_keys": fixtureAI,
		},
	})))
	assertRedacted(t, out)
	for _, kept := range []string{"receipt_01JZFIXTURE", "trace_01JZFIXTURE", "merge_captain"} {
		if !strings.Contains(out, kept) {
			t.Errorf("%q lost from %s", kept, out)
		}
	}
}

// crates/harn-vm/tests/harn_vm/redaction_fixtures.rs:
// log_event_redact_in_place_scrubs_payload_and_headers (the payload; header
// maps are not promptloom's).
func TestHarnLogEventRedactInPlaceScrubsPayloadAndHeaders(t *testing.T) {
	out := string(mustJSON(t, marshal(t, map[string]any{"tool_calls": []any{map[string]any{
		"headers": map[string]any{"Authorization": fixtureBearer, "X-Webhook-Token": "tok_should_redact", "User-Agent": "Harn/1.0"},
		"url":     fixtureURL,
		"stdout":  "credential leak: " + manifestAWS,
	}}})))
	assertRedacted(t, out)
	if strings.Contains(out, "tok_should_redact") || !strings.Contains(out, "Harn/1.0") {
		t.Errorf("headers: %s", out)
	}
}

// crates/harn-vm/tests/harn_vm/redaction_fixtures.rs:
// artifact_record_redact_in_place_scrubs_text_and_metadata.
func TestHarnArtifactRecordRedactInPlaceScrubsTextAndMetadata(t *testing.T) {
	out := string(mustJSON(t, marshal(t, map[string]any{
		"_type": "artifact", "id": "artifact_01J", "kind": "tool_output", "title": "git diff",
		"text":       "tested with " + manifestStripe + " and " + manifestGitHub,
		"data":       map[string]any{"request": map[string]any{"Authorization": fixtureBearer}},
		"created_at": "2026-05-09T00:00:00Z",
		"metadata":   map[string]any{"api_key": manifestAWS, "note": "scope: read"},
	})))
	assertRedacted(t, out)
	for _, kept := range []string{"git diff", "scope: read"} {
		if !strings.Contains(out, kept) {
			t.Errorf("%q lost from %s", kept, out)
		}
	}
}

// crates/harn-vm/src/llm/content_hash.rs:
// redacted_json_hash_ignores_object_key_order: the encoding hashed does not
// depend on the order of an object's keys.
func TestHarnRedactedJSONHashIgnoresObjectKeyOrder(t *testing.T) {
	first := mustJSON(t, []byte(`{"zeta":1,"alpha":2}`))
	second := mustJSON(t, []byte(`{"alpha":2,"zeta":1}`))
	if string(first) != string(second) {
		t.Errorf("%s != %s", first, second)
	}
}

// crates/harn-vm/src/stdlib/secret_scan.rs, whose scan_content runs the same
// catalog over the raw text: where it finds one secret, or none, redaction
// replaces exactly that span, or nothing. Where it keeps only the specific
// github-token finding over an overlapping sensitive-assignment one,
// redaction's github_token runs first and leaves sensitive_assignment no
// value to match.
func TestHarnSecretScanCasesAsRedaction(t *testing.T) {
	block := "-----BEGIN OPENSSH PRIVATE KEY-----\nZXhhbXBsZQ==\n-----END OPENSSH PRIVATE KEY-----"
	harnCases(t, []struct{ in, want string }{
		// scan_content_keeps_generic_assignment_without_specific_detector
		{`token = "secret123"`, "<redacted:sensitive_assignment:19>"},
		// scan_content_preserves_source_declarations_with_secretish_identifiers
		{"pub const Token = struct { kind: u8 };\n", "pub const Token = struct { kind: u8 };\n"},
		// scan_content_redacts_private_key_blocks
		{block + "\n", "<redacted:private_key_block:" + strconv.Itoa(len(block)) + ">\n"},
		// scan_content_deduplicates_generic_assignment_overlaps
		{`token = "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB"`, `token = "<redacted:github_token:42>"`},
	})
	// scan_content_covers_redaction_only_token_shapes
	got := String("Authorization: Bearer abcDEFghi123_-+/=xyz\njwt=eyJabcd.eyJefgh.signature_pad\n")
	if !strings.Contains(got, "<redacted:bearer_token:") || !strings.Contains(got, "<redacted:jwt:") {
		t.Errorf("bearer and jwt not both redacted: %q", got)
	}
}
