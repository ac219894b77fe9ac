package options

import (
	"errors"
	"strings"
	"testing"

	"github.com/promptloom/promptloom"

	"github.com/google/go-cmp/cmp"
)

// Ported from Harn's crates/harn-vm/src/llm/helpers/options/validate.rs
// tests: every removed key is refused, naming the key and its fix.
func TestEveryRemovedRegistryKeyIsRejectedWithItsFix(t *testing.T) {
	for key, fix := range removedOptions {
		_, err := Parse([]byte(`{"`+key+`":null}`), nil)
		if !errors.Is(err, ErrInvalid) {
			t.Fatalf("%s: err = %v, want ErrInvalid", key, err)
		}
		if !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), fix) {
			t.Errorf("%s: message %q does not name the key and its fix", key, err)
		}
	}
	if len(removedOptions) != 57 {
		t.Errorf("%d removed keys; Harn's registry lists 57", len(removedOptions))
	}
}

// Ported from validate.rs removed_key_errors_with_fix.
func TestRemovedKeyErrorsWithFix(t *testing.T) {
	_, err := Parse([]byte(`{"json_schema":null}`), nil)
	if err == nil || !strings.Contains(err.Error(), "json_schema: option was removed") || !strings.Contains(err.Error(), "output") {
		t.Errorf("err = %v", err)
	}
}

// Ported from validate.rs bare_provider_key_names_the_namespaced_rewrite.
func TestBareProviderKeyNamesTheNamespacedRewrite(t *testing.T) {
	_, err := Parse([]byte(`{"openai":{}}`), nil)
	if err == nil || !strings.Contains(err.Error(), "provider_options: {openai:") {
		t.Errorf("err = %v", err)
	}
}

// Ported from validate.rs accepts_registered_and_internal_keys and
// projection_preserves_canonical_options_and_drops_wrapper_controls: call
// keys, _-prefixed channels and wrapper keys are not the prompt's and do
// not fail.
func TestAcceptsRegisteredAndInternalKeys(t *testing.T) {
	if _, err := Parse([]byte(`{"model":"m","provider":"mock","_iteration":3,"timeout_ms":1500,"keep_last":4}`), nil); err != nil {
		t.Error(err)
	}
}

// What Harn accepts, Parse accepts, with the fragments Harn builds
// (system_prompt.rs) and a warning where the input is likely a mistake.
func TestAcceptsWhatHarnAccepts(t *testing.T) {
	tests := []struct {
		name, in string
		frags    []promptloom.Fragment
		tools    []string
		caps     []string
		warns    []string // paths warned about, in order
	}{
		{"system item with a non-string enabled is enabled", `{"system":[{"content":"x","enabled":"no"}]}`,
			[]promptloom.Fragment{{ID: "system[0]", Source: "system[0]", Body: "x"}}, nil, nil, []string{"system[0].enabled"}},
		{"enabled null drops the item unread", `{"system":[{"enabled":null,"position":"middle"}]}`, nil, nil, nil, nil},
		{"non-string content and title are shown as Harn shows them", `{"system":[{"content":42,"title":[1,2.0,null]}]}`,
			[]promptloom.Fragment{{ID: "system[0]", Source: "system[0]", Body: "## [1, 2.0, nil]\n42"}}, nil, nil, []string{"system[0].content", "system[0].title"}},
		{"a non-string scalar system is ignored", `{"system":42}`, nil, nil, nil, []string{"system"}},
		{"a non-list _system_fragments is ignored and the string system stays primary", `{"system":"p","_system_fragments":"x"}`,
			[]promptloom.Fragment{promptloom.Primary("p")}, nil, nil, []string{"_system_fragments"}},
		{"_system_fragments items: unknown keys ignored, no body skipped, non-object skipped", `{"_system_fragments":[{"body":"a","requires_tool":["t"]},{"content":"b"},7,{"body":{"k":true}}]}`,
			[]promptloom.Fragment{{ID: "primary[0]", Source: "primary", Body: "a"}, {ID: "primary[3]", Source: "primary", Body: "{k: true}"}}, nil, nil,
			[]string{"_system_fragments[0].requires_tool", "_system_fragments[1].content", "_system_fragments[1]", "_system_fragments[2]", "_system_fragments[3].body"}},
		{"a non-list requires_tools is ignored", `{"_system_fragments":[{"body":"a","requires_tools":"t"}]}`,
			[]promptloom.Fragment{{ID: "primary[0]", Source: "primary", Body: "a"}}, nil, nil, []string{"_system_fragments[0].requires_tools"}},
		{"gate items are shown as text, empty ones kept", `{"_system_fragments":[{"body":"a","requires_tools":[1,""],"requires_caps":[null],"id":"","source":5}]}`,
			[]promptloom.Fragment{{ID: "primary[0]", Source: "5", Body: "a", RequiresTools: []string{"1", ""}, RequiresCaps: []string{"nil"}}}, nil, nil,
			[]string{"_system_fragments[0].requires_tools[0]", "_system_fragments[0].requires_caps[0]"}},
		{"bucket trimmed and lowercased", `{"_system_fragments":[{"body":"a","bucket":" After\n"},{"body":"b","bucket":""}]}`,
			[]promptloom.Fragment{{ID: "primary[0]", Source: "primary", Body: "a", Bucket: promptloom.After}, {ID: "primary[1]", Source: "primary", Body: "b"}}, nil, nil, nil},
		{"a non-object context_profile is ignored", `{"context_profile":"x","system":"p"}`, []promptloom.Fragment{promptloom.Primary("p")}, nil, nil, []string{"context_profile"}},
		{"profile body wins over content, numbers shown", `{"context_profile":{"prompt_fragments":[{"body":3,"content":"c"},{"content":" d "},{"body":" "}]}}`,
			[]promptloom.Fragment{{ID: "profile[0]", Source: "profile", Body: "3"}, {ID: "profile[1]", Source: "profile", Body: "d"}}, nil, nil,
			[]string{"context_profile.prompt_fragments[0].content", "context_profile.prompt_fragments[0].body"}},
		{"tools without a name or not objects are skipped", `{"tools":[{"guidance":"g"},"t",{"name":"","guidance":"g"},{"name":"ok","guidance":"G"}]}`,
			[]promptloom.Fragment{promptloom.ToolGuidance("ok", "G")}, []string{"ok"}, nil, []string{"tools[0]", "tools[1]", "tools[2]"}},
		{"duplicate tool names each contribute guidance", `{"tools":[{"name":"t","guidance":"one"},{"name":"t","guidance":"two"}]}`,
			[]promptloom.Fragment{promptloom.ToolGuidance("t", "one"), promptloom.ToolGuidance("t", "two")}, []string{"t", "t"}, nil, []string{"tools[1].name"}},
		{"a tool name and guidance that are not strings are shown", `{"tools":[{"name":7,"guidance":true}]}`,
			[]promptloom.Fragment{promptloom.ToolGuidance("7", "true")}, []string{"7"}, nil, []string{"tools[0].name", "tools[0].guidance"}},
		{"a tools wrapper without a list is ignored", `{"tools":{"tools":"x"}}`, nil, nil, nil, []string{"tools.tools"}},
		{"capabilities \"net\" is one capability", `{"capabilities":"net"}`, nil, nil, []string{"net"}, nil},
		{"a capability list shows items and drops empty ones", `{"capabilities":["a",1,"",false]}`, nil, nil, []string{"a", "1", "false"},
			[]string{"capabilities[1]", "capabilities[3]"}},
		{"capabilities null is the capability nil", `{"capabilities":null}`, nil, nil, []string{"nil"}, []string{"capabilities"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := Parse([]byte(tt.in), nil)
			if err != nil {
				t.Fatalf("Parse(%s): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.frags, o.Fragments()); diff != "" {
				t.Errorf("fragments (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.tools, o.ActiveTools(), emptyIsNil); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.caps, o.Capabilities, emptyIsNil); diff != "" {
				t.Errorf("capabilities (-want +got):\n%s", diff)
			}
			var paths []string
			for _, w := range o.Warnings {
				paths = append(paths, w.Path)
			}
			if diff := cmp.Diff(tt.warns, paths); diff != "" {
				t.Errorf("warnings (-want +got):\n%s\n%v", diff, o.Warnings)
			}
		})
	}
}

var emptyIsNil = cmp.Transformer("nil", func(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
})

// display follows VmValue::write_display (crates/harn-vm/src/value/core.rs)
// over values made from JSON as json_to_vm_value makes them.
func TestDisplay(t *testing.T) {
	for in, want := range map[string]string{
		`"s"`:                   "s",
		`null`:                  "nil",
		`true`:                  "true",
		`42`:                    "42",
		`-7`:                    "-7",
		`2.0`:                   "2.0",
		`1e2`:                   "100.0",
		`1.5`:                   "1.5",
		`-0`:                    "-0.0",
		`0.1`:                   "0.1",
		`1e15`:                  "1000000000000000",
		`1e-7`:                  "0.0000001",
		`9223372036854775807`:   "9223372036854775807",
		`9223372036854775808`:   "9223372036854776000",
		`18446744073709551616`:  "18446744073709552000",
		`[]`:                    "[]",
		`{}`:                    "{}",
		`[1,"a",[null]]`:        "[1, a, [nil]]",
		`{"b":1,"a":{"c":"d"}}`: "{a: {c: d}, b: 1}",
		`{"B":1,"a":2,"_":3}`:   "{B: 1, _: 3, a: 2}",
	} {
		o, err := Parse([]byte(`{"tools":[{"name":"t","guidance":`+in+`}]}`), nil)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		guidance := "" // a tool whose guidance is blank has no guidance fragment
		if len(o.Guidance) > 0 {
			guidance = o.Guidance[0].Body
		}
		if got := strings.TrimSpace(want); len(o.Tools) == 0 {
			t.Errorf("%s: no tool", in)
		} else if guidance != got {
			t.Errorf("display(%s) = %q, want %q", in, guidance, got)
		}
	}
}

// Error messages quote at most quoteLimit characters of a value, redacted,
// and keep to one line.
func TestErrorsQuoteBriefly(t *testing.T) {
	token := "ghp_" + strings.Repeat("a", 36)
	long := strings.Repeat("m", 5<<20)
	for _, in := range []string{
		`{"system":[{"content":"x","position":"` + long + `"}]}`,
		`{"system":[{"content":"x","position":"` + token + `"}]}`,
		`{"system":[{"content":"x","rank":` + strings.Repeat("9", 200) + `}]}`,
		`{"system":[{"content":"x","` + token + `":1}]}`,
		`{"system":[{"content":"x","register":"` + token + `"}]}`,
		`{"system":[{"content":"x","rank":"` + token + `"}]}`,
		`{"system":[{"content":"x","rank":` + strings.Repeat("1", 5<<20) + `}]}`,
		`{"call_role":"` + token + `","mock_scope":"b"}`,
		`{"x":{"` + long + `":1,"` + long + `":2}}`,
		`{"_system_fragments":[{"body":"x","bucket":"` + long + `\n"}]}`,
	} {
		_, err := Parse([]byte(in), nil)
		if err == nil {
			t.Fatalf("Parse accepted %.60s", in)
		}
		msg := err.Error()
		if len(msg) > 400 || strings.Contains(msg, token) || strings.Contains(msg, "\n") {
			t.Errorf("message is long (%d bytes), multi-line or holds the token: %.300s", len(msg), msg)
		}
	}
}

// append_decomposed_primary_fragments (system_prompt.rs) lower-cases the
// bucket with to_ascii_lowercase: ASCII letters only, so "AFTER" is after
// and a non-ASCII bucket is quoted in the error as given.
func TestBucketIsASCIILowercased(t *testing.T) {
	o, err := Parse([]byte(`{"_system_fragments":[{"body":"x","bucket":" AFTER "}]}`), nil)
	if err != nil || len(o.Primary) != 1 || o.Primary[0].Bucket != promptloom.After {
		t.Fatalf("AFTER: %v %+v", err, o)
	}
	_, err = Parse([]byte(`{"_system_fragments":[{"body":"x","bucket":"ÄFTER"}]}`), nil)
	if err == nil || !strings.Contains(err.Error(), `_system_fragments[0].bucket must be "before" or "after"; got "Äfter"`) {
		t.Errorf("err = %v", err)
	}
}
