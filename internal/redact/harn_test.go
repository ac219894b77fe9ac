package redact

// Harn's own redaction tests, ported: each test is named after Harn's and
// cites its file; the expectations come from Harn's assertions (made exact
// where Harn only checks "contains"). Tests of what promptloom does not have
// (custom patterns, audit sinks, header redaction, non-default placeholders,
// redact_urls_in_text, looks_like_secret_value) are not ported.

import (
	"strings"
	"testing"
)

// crates/harn-vm/src/redact/patterns.rs: returns_borrowed_when_clean
func TestHarnReturnsBorrowedWhenClean(t *testing.T) {
	in := "just plain text"
	if got := String(in); got != in {
		t.Fatalf("String(%q) = %q", in, got)
	}
	if n := testing.AllocsPerRun(10, func() { _ = String(in) }); n != 0 {
		t.Errorf("clean text allocated %v times", n)
	}
}

func harnCases(t *testing.T, cases []struct{ in, want string }) {
	t.Helper()
	for _, c := range cases {
		if got := String(c.in); got != c.want {
			t.Errorf("String(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// crates/harn-vm/src/redact/patterns.rs: replaces_aws_and_github_tokens_with_named_placeholder
func TestHarnReplacesAWSAndGitHubTokensWithNamedPlaceholder(t *testing.T) {
	harnCases(t, []struct{ in, want string }{{
		"AKIAABCDEFGHIJKLMNOP and ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"<redacted:aws_access_key:20> and <redacted:github_token:40>",
	}})
}

// crates/harn-vm/src/redact/patterns.rs: replaces_bearer_token_inside_text
func TestHarnReplacesBearerTokenInsideText(t *testing.T) {
	harnCases(t, []struct{ in, want string }{{
		"header: Authorization: Bearer abcDEFghi123_-+/=xyz tail",
		"header: Authorization: <redacted:bearer_token:27> tail",
	}})
}

// crates/harn-vm/src/redact/patterns.rs: replaces_sensitive_assignments_inside_text
func TestHarnReplacesSensitiveAssignmentsInsideText(t *testing.T) {
	harnCases(t, []struct{ in, want string }{{
		"retry with token=abc123 and max_tokens=200",
		"retry with <redacted:sensitive_assignment:12> and max_tokens=200",
	}})
}

// crates/harn-vm/src/redact/patterns.rs: sensitive_assignment_preserves_source_declarations
func TestHarnSensitiveAssignmentPreservesSourceDeclarations(t *testing.T) {
	in := "pub const Token = struct { kind: u8 };\nconst Secret = enum { a, b };"
	harnCases(t, []struct{ in, want string }{{in, in}})
}

// crates/harn-vm/src/redact/patterns.rs: sensitive_assignment_redacts_placeholder_secret_words
func TestHarnSensitiveAssignmentRedactsPlaceholderSecretWords(t *testing.T) {
	harnCases(t, []struct{ in, want string }{{
		"Checkout incident needed the same query token=secret",
		"Checkout incident needed the same query <redacted:sensitive_assignment:12>",
	}})
}

// crates/harn-vm/src/redact/patterns.rs: replaces_jwt_tokens
func TestHarnReplacesJWTTokens(t *testing.T) {
	// jwt runs first; sensitive_assignment then sees token=<redacted:...>,
	// whose value does not start with a value character.
	harnCases(t, []struct{ in, want string }{{
		"token=eyJabcd.eyJefgh.signature_pad here",
		"token=<redacted:jwt:29> here",
	}})
}

// crates/harn-vm/src/redact/patterns.rs: replaces_private_key_blocks
func TestHarnReplacesPrivateKeyBlocks(t *testing.T) {
	in := "-----BEGIN OPENSSH PRIVATE KEY-----\nsecret-material\n-----END OPENSSH PRIVATE KEY-----"
	harnCases(t, []struct{ in, want string }{{in, "<redacted:private_key_block:85>"}})
}

// crates/harn-vm/src/redact/patterns.rs: replaces_ai_provider_tokens
func TestHarnReplacesAIProviderTokens(t *testing.T) {
	hf := "hf_" + strings.Repeat("a", 24)
	csk := "csk-" + strings.Repeat("b", 48)
	tgp := "tgp_v1_" + strings.Repeat("c", 32)
	google := "AIza" + strings.Repeat("D", 35)
	harnCases(t, []struct{ in, want string }{{
		hf + " " + csk + " " + tgp + " " + google,
		"<redacted:huggingface_token:27> <redacted:cerebras_key:52> <redacted:together_key:39> <redacted:google_api_key:39>",
	}})
}

// crates/harn-vm/src/redact/patterns.rs: default_pattern_names_are_stable
func TestHarnDefaultPatternNamesAreStable(t *testing.T) {
	names := map[string]bool{}
	for _, p := range Catalog() {
		names[p.Name] = true
	}
	for _, n := range []string{"jwt", "github_token", "github_pat_fine", "slack_token", "aws_access_key",
		"huggingface_token", "cerebras_key", "together_key", "google_api_key", "private_key_block",
		"bearer_token", "sensitive_assignment"} {
		if !names[n] {
			t.Errorf("catalog lacks %s", n)
		}
	}
}

const harnAWSKey = "AKIAABCDEFGHIJKLMNOP"

// crates/harn-vm/src/redact/patterns.rs: secret_past_the_scan_cap_is_redacted
func TestHarnSecretPastTheScanCapIsRedacted(t *testing.T) {
	pad := strings.Repeat(" ", maxScanInput+4096)
	got := String(pad + harnAWSKey + " ")
	if want := pad + "<redacted:aws_access_key:20> "; got != want {
		t.Fatalf("oversized secret: tail %q", got[len(got)-64:])
	}
}

// crates/harn-vm/src/redact/patterns.rs: secret_straddling_a_window_boundary_is_redacted
func TestHarnSecretStraddlingAWindowBoundaryIsRedacted(t *testing.T) {
	prefix := strings.Repeat(" ", maxScanInput-len(harnAWSKey)/2)
	suffix := strings.Repeat(" ", windowOverlap)
	got := String(prefix + harnAWSKey + suffix)
	if want := prefix + "<redacted:aws_access_key:20>" + suffix; got != want {
		t.Fatal("straddling secret not redacted exactly once")
	}
}

// crates/harn-vm/src/redact/patterns.rs: oversized_non_secret_blob_is_not_over_redacted
func TestHarnOversizedNonSecretBlobIsNotOverRedacted(t *testing.T) {
	blob := strings.Repeat("lorem ipsum dolor sit amet ", maxScanInput/20)
	if got := String(blob); got != blob {
		t.Fatal("clean oversized blob was rewritten")
	}
}

// crates/harn-vm/src/redact/patterns.rs: oversized_scan_records_audit_event
// (promptloom has no audit ring; the one match of 20 bytes is checked in the
// output instead).
func TestHarnOversizedScanRecordsAuditEvent(t *testing.T) {
	pad := strings.Repeat(" ", maxScanInput+100)
	got := String(pad + harnAWSKey + " ")
	if strings.Count(got, "<redacted:") != 1 || !strings.Contains(got, "<redacted:aws_access_key:20>") {
		t.Fatal("want exactly one aws_access_key match of 20 bytes")
	}
}

// crates/harn-vm/src/redact/patterns.rs: multi_megabyte_scan_stays_linear_and_redacts
func TestHarnMultiMegabyteScanStaysLinearAndRedacts(t *testing.T) {
	in := strings.Repeat("x ", 5*1024*1024/2) + harnAWSKey + " "
	got := String(in)
	if strings.Contains(got, harnAWSKey) || strings.Count(got, "<redacted:aws_access_key:20>") != 1 {
		t.Fatal("want the key redacted exactly once")
	}
}

// crates/harn-vm/src/redact/mod.rs: redact_url_strips_userinfo_and_sensitive_query_params
func TestHarnRedactURLStripsUserinfoAndSensitiveQueryParams(t *testing.T) {
	harnCases(t, []struct{ in, want string }{{
		"https://user:pw@api.example.com/v1?api_key=abcdef&clientSecret=hidden&page=2",
		"https://api.example.com/v1?api_key=%5Bredacted%5D&clientSecret=%5Bredacted%5D&page=2",
	}})
}

// crates/harn-vm/src/redact/mod.rs: redact_url_leaves_clean_urls_alone
func TestHarnRedactURLLeavesCleanURLsAlone(t *testing.T) {
	in := "https://api.example.com/v1?page=2"
	harnCases(t, []struct{ in, want string }{{in, in}})
}

// crates/harn-vm/src/redact/mod.rs: redact_string_replaces_known_secret_patterns
func TestHarnRedactStringReplacesKnownSecretPatterns(t *testing.T) {
	harnCases(t, []struct{ in, want string }{{
		"use sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD or AKIAABCDEFGHIJKLMNOP for now",
		"use <redacted:openai_key:48> or <redacted:aws_access_key:20> for now",
	}})
}
