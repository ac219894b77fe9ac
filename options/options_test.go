package options

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/promptloom/promptloom/fragment"
)

// Every kind of bad input, with the error kind and the words the one-line
// message must hold (the offending key or path, and the offset or limit
// where there is one).
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, in string
		kind     error
		names    []string
	}{
		{"text for content", `{"system":[{"text":"x"}]}`, ErrUnknownKey, []string{"system[0]", `"text"`, `use "content"`}},
		{"prompt for content", `{"system":[{"prompt":"x"}]}`, ErrUnknownKey, []string{`"prompt"`, `use "content"`}},
		{"label for title", `{"system":[{"content":"x","label":"y"}]}`, ErrUnknownKey, []string{`"label"`, `use "title"`}},
		{"name for title", `{"system":["a",{"content":"x","name":"y"}]}`, ErrUnknownKey, []string{"system[1]", `"name"`, `use "title"`}},
		{"other unknown key", `{"system":[{"content":"x","colour":"red"}]}`, ErrUnknownKey, []string{`"colour"`}},
		{"bad position", `{"system":[{"content":"x","position":"middle"}]}`, ErrValue, []string{"system[0].position", "middle"}},
		{"bad bucket", `{"_system_fragments":[{"body":"x","bucket":"side"}]}`, ErrValue, []string{"_system_fragments[0].bucket", "side"}},
		{"replacement extra key", `{"system":{"mode":"replace","content":"x","title":"t"}}`, ErrUnknownKey, []string{`"title"`, "replacement root"}},
		{"replacement bad mode", `{"system":{"mode":"append","content":"x"}}`, ErrValue, []string{"system.mode"}},
		{"replacement without mode", `{"system":{"content":"x"}}`, ErrMissing, []string{"mode"}},
		{"replacement without content", `{"system":{"mode":"replace"}}`, ErrMissing, []string{"content"}},
		{"role conflict", `{"call_role":"a","mock_scope":"b"}`, ErrConflict, []string{"mock_scope", "call_role"}},
		{"malformed JSON", `{"system": [1,}`, ErrSyntax, []string{"malformed JSON", "offset 15"}},
		{"trailing data", `{} {}`, ErrSyntax, []string{"after the top-level value"}},
		{"not an object", `[1]`, ErrType, []string{"JSON object"}},
		{"non-string content", `{"system":[{"content":5}]}`, ErrType, []string{"system[0].content", "must be a string"}},
		{"non-string body", `{"_system_fragments":[{"body":["x"]}]}`, ErrType, []string{"_system_fragments[0].body"}},
		{"non-string profile body", `{"context_profile":{"prompt_fragments":[{"body":1}]}}`, ErrType, []string{"context_profile.prompt_fragments[0].body"}},
		{"non-string system", `{"system":42}`, ErrType, []string{"system"}},
		{"non-string guidance", `{"tools":[{"name":"t","guidance":true}]}`, ErrType, []string{"tools[0].guidance"}},
		{"body and content", `{"_system_fragments":[{"body":"a","content":"b"}]}`, ErrConflict, []string{"_system_fragments[0]"}},
		{"missing body", `{"_system_fragments":[{"id":"a"}]}`, ErrMissing, []string{"_system_fragments[0]", "body"}},
		{"missing content", `{"system":[{"title":"t"}]}`, ErrMissing, []string{"system[0]", "content"}},
		{"system item of wrong type", `{"system":[null]}`, ErrType, []string{"system[0]"}},
		{"tool without name", `{"tools":[{"guidance":"g"}]}`, ErrMissing, []string{"tools[0]", "name"}},
		{"duplicate tool", `{"tools":[{"name":"t"},{"name":"t"}]}`, ErrValue, []string{"tools[1].name", `"t"`}},
		{"tools of wrong type", `{"tools":"todo"}`, ErrType, []string{"tools"}},
		{"capabilities of wrong type", `{"capabilities":"net"}`, ErrType, []string{"capabilities"}},
		{"non-string capability", `{"capabilities":["net",1]}`, ErrType, []string{"capabilities[1]"}},
		{"requires_tools of wrong type", `{"_system_fragments":[{"body":"x","requires_tools":"todo"}]}`, ErrType, []string{"requires_tools"}},
		{"enabled of wrong type", `{"system":[{"content":"x","enabled":"no"}]}`, ErrType, []string{"system[0].enabled"}},
		{"duplicate key", `{"system":[{"content":"x","content":"y"}]}`, ErrDuplicateKey, []string{"system[0].content"}},
		{"bad register", `{"system":[{"content":"x","register":"law"}]}`, ErrValue, []string{"system[0].register", "law"}},
		{"fractional rank", `{"system":[{"content":"x","rank":1.5}]}`, ErrType, []string{"system[0].rank"}},
		{"invalid UTF-8", "{\"system\":\"a\xffb\"}", ErrInvalidUTF8, []string{"invalid UTF-8 (offset 12)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in))
			if !errors.Is(err, tt.kind) {
				t.Fatalf("Parse(%s) = %v, want %v", tt.in, err, tt.kind)
			}
			var oe *Error
			if !errors.As(err, &oe) {
				t.Fatalf("error %T is not an *Error", err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("message is not one line: %q", msg)
			}
			for _, n := range tt.names {
				if !strings.Contains(msg, n) {
					t.Errorf("message %q does not name %s", msg, n)
				}
			}
		})
	}
}

func TestParseSizeLimit(t *testing.T) {
	in := []byte(`{"system":"` + strings.Repeat("x", 100) + `"}`)
	_, err := Parse(in, MaxBytes(50))
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "limit of 50") {
		t.Errorf("Parse over the limit = %v", err)
	}
	if _, err := Parse(in, MaxBytes(len(in))); err != nil {
		t.Errorf("Parse at the limit = %v", err)
	}
}

func TestParseDeepNesting(t *testing.T) {
	deep := `{"actor_chain":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`
	_, err := Parse([]byte(deep))
	if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "exceeded max depth") {
		t.Errorf("Parse of 100000 nested lists = %v, want a syntax error", err)
	}
}

func TestFragmentsFollowHarnRules(t *testing.T) {
	o, err := Parse([]byte(`{
		"system": "ignored: _system_fragments is present",
		"_system_fragments": [{"id": "primary:system", "body": "base", "producer": "agent"}, {"content": "late", "bucket": "after", "register": "craft", "rank": 2}],
		"context_profile": {"caps": ["vcs.git"], "prompt_fragments": [{"body": "not added: forwarded"}]},
		"tools": {"tools": [{"name": "todo", "guidance": " use it ", "active": false}, {"name": "shell"}, {"name": "read", "guidance": "  "}]},
		"capabilities": {"net": true, "off": false, "nil": null},
		"mock_scope": "agent.sub",
		"model": "ignored too"
	}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []fragment.Fragment{
		{ID: "primary:system", Source: "primary", Producer: "agent", Body: "base"},
		{ID: "primary[1]", Source: "primary", Bucket: fragment.After, Body: "late", Register: fragment.Craft, Rank: 2},
		{ID: "tool:todo.guidance", Source: "tool:todo", Body: " use it ", RequiresTools: []string{"todo"}},
	}
	if diff := cmp.Diff(want, o.Fragments()); diff != "" {
		t.Errorf("fragments (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"shell", "read"}, o.ActiveTools()); diff != "" {
		t.Errorf("active tools (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"net", "vcs.git"}, o.AllCapabilities()); diff != "" {
		t.Errorf("capabilities (-want +got):\n%s", diff)
	}
	if o.CallRole != "agent.sub" {
		t.Errorf("call role = %q, want the mock_scope alias", o.CallRole)
	}
}

func TestReplacementSuppressesEveryOtherContributor(t *testing.T) {
	o, err := Parse([]byte(`{"system":{"mode":"replace","content":" x "},"tools":[{"name":"t","guidance":"g"}],
		"context_profile":{"prompt_fragments":[{"body":"p"}]},"_system_fragments":[{"body":"b"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []fragment.Fragment{fragment.Replacement(" x ")}
	if diff := cmp.Diff(want, o.Fragments()); diff != "" {
		t.Errorf("fragments (-want +got):\n%s", diff)
	}
}

func TestCallRole(t *testing.T) {
	for in, want := range map[string]string{
		`{}`:                                   DefaultCallRole,
		`{"call_role":"  "}`:                   DefaultCallRole,
		`{"call_role":"a","mock_scope":"a"}`:   "a",
		`{"mock_scope":"s"}`:                   "s",
		`{"call_role":null,"mock_scope":null}`: DefaultCallRole,
	} {
		o, err := Parse([]byte(in))
		if err != nil {
			t.Errorf("Parse(%s): %v", in, err)
		} else if o.CallRole != want {
			t.Errorf("Parse(%s).CallRole = %q, want %q", in, o.CallRole, want)
		}
	}
}
