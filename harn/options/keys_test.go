package options

import (
	"strings"
	"testing"
)

// A key Harn ignores is warned about wherever it stands, naming the
// nearest key Harn reads there (a typo used to drop its value silently: a
// "sytem" prompt, a tool's "guidence", a gate spelled "requires_cap").
func TestUnknownKeysAreWarnedAboutWithTheNearestKey(t *testing.T) {
	for _, tc := range []struct{ in, path, hint string }{
		{`{"sytem": "You are careful."}`, "sytem", "system"},
		{`{"temprature": 0.2}`, "temprature", "temperature"},
		{`{"capabilites": ["vcs.git"]}`, "capabilites", "capabilities"},
		{`{"frobnicate": 1}`, "frobnicate", ""},
		{`{"": 1}`, `""`, ""},
		{`{"tools": [{"name": "todo", "guidence": "Track it."}]}`, "tools[0].guidence", "guidance"},
		{`{"tools": {"tools": [{"name": "todo", "guidanse": "g"}]}}`, "tools.tools[0].guidanse", "guidance"},
		{`{"_system_fragments": [{"body": "x", "requires_cap": ["a"]}]}`, "_system_fragments[0].requires_cap", "requires_caps"},
		{`{"_system_fragments": [{"body": "x", "bukket": "after"}]}`, "_system_fragments[0].bukket", "bucket"},
		{`{"context_profile": {"prompt_fragments": [{"body": "x", "requires_tool": ["t"]}]}}`, "context_profile.prompt_fragments[0].requires_tool", "requires_tools"},
		{`{"context_profile": {"prompt_fragment": [{"body": "x"}]}}`, "context_profile.prompt_fragment", "prompt_fragments"},
		{`{"context_profile": {"cap": ["a"]}}`, "context_profile.cap", "caps"},
	} {
		o, err := Parse([]byte(tc.in), nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if len(o.Warnings) != 1 || o.Warnings[0].Path != tc.path ||
			tc.hint != "" && !strings.HasSuffix(o.Warnings[0].Message, "did you mean \""+tc.hint+"\"?") ||
			tc.hint == "" && strings.Contains(o.Warnings[0].Message, "did you mean") {
			t.Errorf("%s: warnings %v, want one at %s naming %q", tc.in, o.Warnings, tc.path, tc.hint)
		}
	}
}

// What Harn reads, host plumbing (keys starting with "_"), a tool's
// provider keys and a resolved profile's own fields are not warned about.
func TestKnownKeysAreNotWarnedAbout(t *testing.T) {
	in := `{"model": "m", "provider": "anthropic", "temperature": 0.2, "max_tokens": 100, "messages": [],
		"system": "x", "call_role": "agent.main", "mock_scope": "agent.main", "_iteration": 3, "_dispatch_provenance": {},
		"tools": [{"name": "todo", "guidance": "g", "description": "d", "parameters": {}, "type": "function", "strict": true}],
		"capabilities": ["a"], "context_profile": {"caps": ["b"], "prompt_fragments": [], "name": "rust", "id": "p1"},
		"actor_chain": [], "reminders": [], "provider_options": {"anthropic": {}}, "output": "json"}`
	o, err := Parse([]byte(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Warnings) != 0 {
		t.Errorf("warnings: %v", o.Warnings)
	}
}

// Every top-level key Harn's option registry has is known, and none that
// it removed.
func TestTopKeysAreHarns(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range topKeys {
		if seen[k] {
			t.Errorf("%s twice", k)
		}
		seen[k] = true
		if _, removed := removedOptions[k]; removed {
			t.Errorf("%s is both known and removed", k)
		}
	}
	if d := editDistance("kitten", "sitting"); d != 3 {
		t.Errorf("editDistance = %d", d)
	}
}
