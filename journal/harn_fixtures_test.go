package journal

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"lukechampine.com/blake3"
)

// The Harn transcripts under testdata/harn are built here, by
// TestWriteHarnFixtures (PROMPTLOOM_WRITE_HARN_FIXTURES=1), from the inputs of
// Harn's own tests in crates/harn-vm/src/llm/agent_observe/
// served_context_receipts.rs, shaped as Harn writes its events
// (agent_observe/transcript_observability.rs: emit_system_prompt_if_changed,
// emit_context_manifest_if_changed, emit_tool_schemas_if_changed,
// dump_llm_request; served_context_receipt; prompt.rs
// ContextAssemblyManifest::internal, for_request_payload_egress, as_json).
// They use BLAKE3 and encoding/json only, never this package, so they are
// not our own output read back: each line is the serde_json encoding of an
// event (compact, keys sorted, as serde_json's map without preserve_order),
// and each content hash is "blake3:" over serde_json::to_vec of the value
// (stable_redacted_json_hash) or over the string (stable_redacted_string_hash);
// no fixture holds a secret, so redaction is the identity.

type harnWriter struct {
	buf                bytes.Buffer
	lastSystem, lastMf string
	lastSchemas        string
}

func harnJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // serde_json escapes only what JSON requires
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

func harnHash(s string) string {
	sum := blake3.Sum256([]byte(s))
	return "blake3:" + hex.EncodeToString(sum[:])
}

type obj = map[string]any

func (w *harnWriter) emit(event obj) {
	event["timestamp"] = "2026-01-01T00:00:00Z"
	event["span_id"] = 0
	w.buf.WriteString(harnJSON(event) + "\n")
}

// harnManifest is ContextAssemblyManifest::internal(id, "test", "llm_call",
// system) projected for_request_payload_egress(system) unchanged.
func harnManifest(id, system string) obj {
	return obj{
		"schema": "harn.llm.context_manifest.v1", "scope": "system_prompt",
		"boundary": "llm_request_payload_egress", "messages": "served_context_digest_only",
		"call_role": "llm_call", "actor_chain": nil, "root": "composed",
		"segments": []obj{{"id": id, "producer": "test", "bucket": "before", "included": true,
			"reason": "internal typed prompt root", "bytes": len(system), "digest": harnHash(system)}},
		"whole_prompt_digest": harnHash(system), "system_prompt_bytes": len(system),
		"join_separator": "\n\n", "join_separator_bytes": 2, "join_separator_count": 0,
	}
}

// call writes one dump_llm_request: the prompt, manifest and tool schemas
// when they changed since the last call, the served messages, and the
// request with its served_context receipt.
func (w *harnWriter) call(iteration int, callID, system string, mf obj, messages []obj, native []obj) {
	if h := harnHash(system); h != w.lastSystem {
		w.lastSystem = h
		w.emit(obj{"type": "system_prompt", "hash": 1, "content_hash": h, "content": system})
	}
	mfHash := harnHash(harnJSON(mf))
	if mfHash != w.lastMf {
		w.lastMf = mfHash
		w.emit(obj{"type": "context_manifest", "hash": 2, "content_hash": mfHash, "manifest": mf})
	}
	var schemas []obj
	var names []string
	for _, t := range native {
		fn := t["function"].(obj)
		schemas = append(schemas, obj{"name": fn["name"], "description": fn["description"], "params": []obj{}, "compact": false})
		names = append(names, fn["name"].(string))
	}
	schemasHash := harnHash(harnJSON(schemas))
	if schemasHash != w.lastSchemas {
		w.lastSchemas = schemasHash
		w.emit(obj{"type": "tool_schemas", "hash": 3, "content_hash": schemasHash, "schemas": schemas})
	}
	var lineage []obj
	for i, m := range messages {
		h := harnHash(harnJSON(m))
		w.emit(obj{"type": "served_message", "schema": "harn.llm.served_message.v1", "content_hash": h, "message": m})
		lineage = append(lineage, obj{"position": i, "role": m["role"], "semantic_kind": m["role"],
			"message_content_hash": h, "definition_ref": h})
	}
	sc := obj{
		"schema": "harn.llm.served_context.v1", "redaction": "current_policy", "call_role": "llm_call", "actor_chain": nil,
		"manifest_content_hash": mfHash, "system_prompt_content_hash": harnHash(system), "system_prompt_bytes": len(system),
		"messages_content_hash": harnHash(harnJSON(messages)), "message_count": len(messages),
		"message_lineage": obj{"schema": "harn.llm.message_lineage.v1", "call_id": callID, "iteration": iteration,
			"projection": obj{"policy": "raw"}, "messages": lineage},
		"tool_schemas_content_hash": schemasHash, "tool_schema_count": len(schemas), "served_tool_names": names,
		"native_tools_content_hash": harnHash(harnJSON(native)), "native_tool_count": len(native),
	}
	w.emit(obj{"type": "provider_call_request", "iteration": iteration, "call_id": callID, "model": "gpt-test",
		"provider": "openai", "call_role": "llm_call", "actor_chain": nil, "max_tokens": nil, "temperature": nil,
		"tool_format": "native", "native_tool_count": len(native), "message_count": len(messages), "served_context": sc})
}

func harnTool(name, description string) obj {
	return obj{"type": "function", "function": obj{"name": name, "description": description,
		"parameters": obj{"type": "object", "properties": obj{"path": obj{"type": "string"}}, "required": []string{"path"}}}}
}

// harnFixtures returns each fixture's file name and transcript.
func harnFixtures() map[string]string {
	out := map[string]string{}

	// served_context_hashes_resolve_to_retained_bytes_across_a_multi_call_run
	edit, read := harnTool("edit", "Edit a file"), harnTool("read", "Read a file")
	w := &harnWriter{}
	for i, p := range []struct {
		system string
		tool   obj
	}{{"policy A", edit}, {"policy A", edit}, {"policy B", edit}, {"policy B", read}, {"policy A", read}, {"policy A", edit}} {
		w.call(i, fmt.Sprintf("call-%d", i), p.system, harnManifest("test:system:"+p.system, p.system),
			[]obj{{"role": "user", "content": fmt.Sprintf("turn %d", i)}}, []obj{p.tool})
	}
	out["multi_call.jsonl"] = w.buf.String()

	// dump_llm_request_emits_stable_served_context_hashes_without_verbose_snapshot
	w = &harnWriter{}
	w.call(2, "call-served-context", "System policy", harnManifest("test:system", "System policy"),
		[]obj{{"role": "user", "content": "fix the bug"}, {"role": "assistant", "content": "I will inspect it"}},
		[]obj{harnTool("edit", "Edit a file")})
	out["served_context.jsonl"] = w.buf.String()

	// served_context_certifies_qwen_thinking_disable_egress_bytes: the
	// manifest of "you are an agent." projected onto the 27 bytes sent.
	in, sent := "you are an agent.", "/no_think\nyou are an agent."
	mf := harnManifest("test:system", in)
	mf["root"] = "transformed"
	mf["segments"] = []obj{
		{"id": "test:system", "producer": "test", "bucket": "before", "included": false,
			"reason": "superseded by system transform", "bytes": 0, "digest": harnHash(in)},
		{"id": "egress:system", "producer": "llm_request_payload", "bucket": "before", "included": true,
			"reason": "provider capability and system-placement normalization", "bytes": len(sent), "digest": harnHash(sent)},
	}
	mf["whole_prompt_digest"], mf["system_prompt_bytes"] = harnHash(sent), len(sent)
	mf["egress_delta"] = obj{"producer": "llm_request_payload", "input_system_prompt_digest": harnHash(in),
		"input_system_prompt_bytes": len(in), "output_system_prompt_digest": harnHash(sent),
		"output_system_prompt_bytes": len(sent), "bytes_added": len(sent) - len(in), "bytes_removed": 0}
	w = &harnWriter{}
	w.call(0, "call-qwen-egress", sent, mf, []obj{}, []obj{})
	out["qwen_egress.jsonl"] = w.buf.String()
	return out
}

func TestWriteHarnFixtures(t *testing.T) {
	if os.Getenv("PROMPTLOOM_WRITE_HARN_FIXTURES") == "" {
		t.Skip("set PROMPTLOOM_WRITE_HARN_FIXTURES=1 to rewrite testdata/harn")
	}
	os.MkdirAll(filepath.Join("testdata", "harn"), 0o755)
	for name, text := range harnFixtures() {
		if err := os.WriteFile(filepath.Join("testdata", "harn", name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The committed fixtures are what the generator writes.
func TestHarnFixturesAreCurrent(t *testing.T) {
	for name, text := range harnFixtures() {
		got, err := os.ReadFile(filepath.Join("testdata", "harn", name))
		if err != nil || string(got) != text {
			t.Errorf("testdata/harn/%s is stale (rerun with PROMPTLOOM_WRITE_HARN_FIXTURES=1): %v", name, err)
		}
	}
}
