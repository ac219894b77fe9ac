package journal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/internal/chain"
	"github.com/tidwall/gjson"
)

func harnFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "harn", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func dropLines(transcript string, drop func(gjson.Result) bool) (string, int) {
	var out strings.Builder
	n := 0
	for _, l := range lines(transcript) {
		if drop(gjson.Parse(l)) {
			n++
			continue
		}
		out.WriteString(l)
	}
	return out.String(), n
}

// Ported from Harn's served_context_hashes_resolve_to_retained_bytes_across_a_multi_call_run
// (crates/harn-vm/src/llm/agent_observe/served_context_receipts.rs): every
// request's hashes resolve to retained bytes earlier in the same transcript
// that re-derive them, though deduplication retained fewer prompts,
// manifests and schemas than there are calls; and without a retained line,
// the receipt is a dangling label and the call fails.
func TestServedContextHashesResolveToRetainedBytesAcrossAMultiCallRun(t *testing.T) {
	transcript := harnFixture(t, "multi_call.jsonl")
	text, ok := reportText(t, transcript)
	if !ok || !strings.Contains(text, "6 call(s) verified, 0 incomplete, 0 failed (harn transcript") {
		t.Fatalf("the Harn transcript does not verify:\n%s", text)
	}
	count := func(typ string) int { return strings.Count(transcript, `"type":"`+typ+`"`) }
	if count("system_prompt") >= 6 || count("context_manifest") >= 6 || count("tool_schemas") >= 6 {
		t.Errorf("the fixture does not exercise deduplication")
	}
	for _, typ := range []string{"system_prompt", "context_manifest", "tool_schemas"} {
		// The reverted prompt (A -> B -> A) must not resolve to another line:
		// drop the second retained line of each kind.
		seen := 0
		edited, _ := dropLines(transcript, func(l gjson.Result) bool {
			if l.Get("type").Str != typ {
				return false
			}
			seen++
			return seen == 2
		})
		if text, ok := reportText(t, edited); ok || !strings.Contains(text, "no retained "+typ) {
			t.Errorf("without the second %s line:\n%s", typ, text)
		}
	}
}

// Ported from Harn's dump_llm_request_emits_stable_served_context_hashes_without_verbose_snapshot
// (served_context_receipts.rs): the receipt's hashes are typed blake3: and
// resolve, the messages hash re-derives from the served messages, and the
// manifest's whole_prompt_digest and byte count are the receipt's.
func TestDumpLlmRequestEmitsStableServedContextHashesWithoutVerboseSnapshot(t *testing.T) {
	transcript := harnFixture(t, "served_context.jsonl")
	if text, ok := reportText(t, transcript); !ok {
		t.Fatalf("does not verify:\n%s", text)
	}
	// The manifest's system_prompt_bytes must be the receipt's.
	edited := strings.Replace(transcript, `"system_prompt_bytes":13,"system_prompt_content_hash"`, `"system_prompt_bytes":12,"system_prompt_content_hash"`, 1)
	if text, ok := reportText(t, edited); ok || !strings.Contains(text, "system_prompt_bytes 12") {
		t.Errorf("a wrong byte count verifies:\n%s", text)
	}
	// A served message rewritten no longer re-derives its definition_ref.
	edited = strings.Replace(transcript, `"content":"fix the bug"`, `"content":"delete the repo"`, 1)
	if text, ok := reportText(t, edited); ok || !strings.Contains(text, "does not hash to it") {
		t.Errorf("a rewritten message verifies:\n%s", text)
	}
}

// Ported from Harn's forced_compaction_context_is_exactly_reconstructable_without_a_provider
// (served_context_receipts.rs), its negative control: with one served
// message definition removed, reconstruction fails closed.
func TestForcedCompactionContextIsExactlyReconstructableWithoutAProvider(t *testing.T) {
	transcript := harnFixture(t, "served_context.jsonl")
	edited, n := dropLines(transcript, func(l gjson.Result) bool {
		return l.Get("type").Str == "served_message" && l.Get("message.role").Str == "user"
	})
	if n != 1 {
		t.Fatalf("dropped %d lines", n)
	}
	if text, ok := reportText(t, edited); ok || !strings.Contains(text, "which no served_message retains") {
		t.Errorf("an incomplete message lineage verifies:\n%s", text)
	}
}

// Ported from Harn's served_context_certifies_qwen_thinking_disable_egress_bytes
// (served_context_receipts.rs): the receipt describes the bytes after the
// egress transform (27, with "/no_think\n"), and the transformed manifest
// validates against them.
func TestServedContextCertifiesQwenThinkingDisableEgressBytes(t *testing.T) {
	transcript := harnFixture(t, "qwen_egress.jsonl")
	if text, ok := reportText(t, transcript); !ok {
		t.Fatalf("does not verify:\n%s", text)
	}
	edited := strings.Replace(transcript, `"content":"/no_think\nyou are an agent."`, `"content":"you are an agent."`, 1)
	if text, ok := reportText(t, edited); ok {
		t.Errorf("the pre-egress bytes verify as served:\n%s", text)
	}
}

// A Harn transcript in which no call can be checked fails, as do a mixed
// transcript and a Harn line with a duplicate key.
func TestHarnTranscriptsFailClosed(t *testing.T) {
	full := harnFixture(t, "served_context.jsonl")
	noRequests, _ := dropLines(full, func(l gjson.Result) bool { return l.Get("type").Str == chain.KindRequest })
	for _, tc := range []struct{ name, transcript, want string }{
		{"no request", noRequests, "no call verified"},
		{"a promptloom line inside", full + `{"prev":"x","seq":1,"kind":"journal_open"}` + "\n", "a Harn event with no type"},
		{"duplicate key", strings.Replace(full, `"type":"system_prompt"`, `"type":"system_prompt","content":"x"`, 1), "line 1: duplicate JSON key content"},
		{"request first", lines(full)[5] + "\n" + full, "no retained context_manifest"},
	} {
		if text, ok := reportText(t, tc.transcript); ok || !strings.Contains(text, tc.want) {
			t.Errorf("%s: want %q in:\n%s", tc.name, tc.want, text)
		}
	}
}
