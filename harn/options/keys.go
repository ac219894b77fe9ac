package options

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// The keys each kind of object in the options may hold, one table a kind,
// and the nearest-key suggestion for one that is not there. Harn refuses an
// unknown key in a system list item or the replacement root (Parse does
// too); where Harn ignores one, Parse warns, naming the nearest known key,
// so a typo ("sytem", "guidence", "requires_cap") does not silently drop
// what it meant. A key promptloom or Harn comes to read goes in its table.

// topKeys are the top-level options Harn's llm_call takes: its option
// registry (crates/harn-builtin-meta/src/llm_options.rs,
// LLM_CALL_OPTION_FIELDS), with call_role, which its system prompt
// assembly reads (system_prompt.rs), and actor_chain, promptloom's. A key
// starting with "_" is host plumbing, accepted unread (_system_fragments is
// read); a removed key is refused (removedOptions). Harn's llm_call refuses
// any other key; the prompt is built without it, so Parse warns.
var topKeys = []string{
	// Routing.
	"model", "model_role", "model_tier", "provider", "api_mode", "route_policy", "fallback_chain",
	"routing", "equivalent_failover", "models", "ladder",
	// Conversation.
	"system", "messages", "session_id", "rate_limit_consumer_id", "mock_scope", "context_profile",
	"capabilities", "prefill", "previous_response_id", "call_role",
	// Generation.
	"max_tokens", "temperature", "top_p", "top_k", "logprobs", "top_logprobs", "stop",
	"stop_at_tool_call", "seed", "frequency_penalty", "presence_penalty",
	// Output contract.
	"output", "schema_retries", "schema_retry_nudge", "retries", "schema_recover", "repair",
	// Reasoning and modalities.
	"thinking", "effort", "reasoning_policy", "reasoning_scale", "reasoning_task",
	"interleaved_thinking", "anthropic_beta_features", "vision", "audio", "pdf", "video",
	// Tools.
	"tools", "provider_tools", "tool_choice", "tool_search", "tool_format",
	// Caching, budgets, transport.
	"cache", "prompt_cache_ttl", "budget", "timeout_ms", "idle_timeout_ms", "stream", "speed",
	// OpenAI Responses.
	"store", "background", "truncation", "compact", "include", "max_tool_calls",
	// Provider options, observability.
	"provider_options", "metadata", "reminders", "structural_experiment",
	// promptloom's.
	"actor_chain",
}

// profileObjectKeys are the keys Harn reads in context_profile. A resolved
// profile carries others of its own, so only a near miss of one of these
// is warned about.
var profileObjectKeys = []string{"caps", "prompt_fragments"}

// toolKeys are the keys of a tool Harn reads for the prompt; toolOtherKeys
// are keys a tool carries for its provider or its handler, which Harn
// passes on. Only a near miss of a toolKeys key that is none of these is
// warned about: the rest belong to the provider.
var (
	toolKeys      = []string{"name", "guidance"}
	toolOtherKeys = []string{"active", "type", "function", "description", "parameters", "input_schema",
		"inputSchema", "parametersJsonSchema", "strict", "cache_control", "defer_loading", "annotations",
		"handler", "returns", "input_examples", "examples", "title", "tags", "namespace", "kind"}
)

// nearestKey is the known key nearest to key by edit distance, when it is
// near enough to be a typo: at most 2 edits, 3 for a key longer than 8
// bytes (Harn's nearest_registry_key, over characters), or key is a prefix
// of it or it of key ("requires_cap"). The first of equally near keys wins.
func nearestKey(key string, known []string) (string, bool) {
	best, bestD := "", -1
	for _, k := range known {
		d := editDistance(key, k)
		if bestD < 0 || d < bestD {
			best, bestD = k, d
		}
	}
	budget := 2
	if len(key) > 8 {
		budget = 3
	}
	if bestD >= 0 && bestD <= budget {
		return best, true
	}
	for _, k := range known {
		if len(key) >= 4 && (strings.HasPrefix(k, key) || strings.HasPrefix(key, k)) {
			return k, true
		}
	}
	return "", false
}

// editDistance is the Levenshtein distance between a and b in characters.
func editDistance(a, b string) int {
	if utf8.RuneCountInString(a) > 64 {
		return 1 << 30 // no option key is that long: nothing is near it
	}
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i, ca := range ra {
		cur[0] = i + 1
		for j, cb := range rb {
			sub := prev[j]
			if ca != cb {
				sub++
			}
			cur[j+1] = min(sub, prev[j+1]+1, cur[j]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// warnTop warns about each top-level key Harn's llm_call does not take.
func (r *reader) warnTop(m object) {
	for _, k := range m.keys {
		if strings.HasPrefix(k, "_") || slices.Contains(topKeys, k) {
			continue
		}
		if _, removed := removedOptions[k]; removed {
			continue
		}
		msg := "unknown option is ignored here (Harn's llm_call refuses it)"
		if hint, ok := nearestKey(k, topKeys); ok {
			msg += "; did you mean " + quote(hint) + "?"
		}
		path := field("", k)
		if path == "" {
			path = `""`
		}
		r.warn(path, "%s", msg)
	}
}

// warnNearMiss warns about each key of an object whose other keys belong
// to someone else (a tool's provider, a profile's resolver) that is a near
// miss of a key Harn reads there.
func (r *reader) warnNearMiss(path string, m object, known, others []string) {
	for _, k := range m.keys {
		if slices.Contains(known, k) || slices.Contains(others, k) {
			continue
		}
		if hint, ok := nearestKey(k, known); ok {
			r.warn(field(path, k), "unknown key is ignored; did you mean %q?", hint)
		}
	}
}
